#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
#
# README.md's Example, followed literally in an empty directory:
#
#   lab/readme-example.sh [README]
#
# Every fenced block whose info string names a file ("```c app.c") is
# written to that file, and the block marked "```sh run" is run there,
# line by line as a shell would (lines ending in a backslash joined), with
# bash -e. It then checks what the example says it prints. Needs libusdt
# installed (the libusdt-dev package, or `make install`), and root, as the
# example does; lab/packages-test.sh runs it in a clean Debian 12 chroot,
# with sudo installed there so that the lines run as written.
set -euo pipefail

readme=$(realpath "${1:-README.md}")
dir=$(mktemp -d "${TMPDIR:-/tmp}/readme-example.XXXXXX")
trap 'rm -rf "$dir"' EXIT
cd "$dir"

# The blocks: a file per named block, run.sh from the "run" one.
awk -v dir="$dir" '
	/^```/ && out == "" && NF >= 2 {
		split($0, f, " ")
		if (f[2] == "run") out = dir "/run.sh"
		else if (f[2] ~ /^[A-Za-z0-9_.-]+$/) out = dir "/" f[2]
		else next
		printf "" > out
		next
	}
	/^```/ && out != "" { close(out); out = ""; next }
	out != "" { print > out }
' "$readme"
for f in server.c probe.bpf.c app.c run.sh; do
	[ -s "$f" ] || { echo "readme-example.sh: no '$f' block in $readme" >&2; exit 1; }
done
echo "readme-example.sh: in $dir: $(ls | tr '\n' ' ')"
bash -ex run.sh 2>&1 | tee out.log
want="3 requests, 600 bytes, cookie 42"
grep -qx "$want" out.log || {
	echo "readme-example.sh: the example did not print '$want'" >&2
	exit 1
}
echo "readme-example.sh: the README's example builds and runs"
