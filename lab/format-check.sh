#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
#
# The tree matches its .clang-format: every C file of src/, include/,
# bpf/ and tools/, checked by Debian 12's clang-format (14), which CI
# runs on. Another version formats some lines otherwise: run this where
# CI does, or format with that version (clang-format -i FILE).
# Prints each file that differs with the first differences, and fails.
set -eu
cd "$(dirname "$0")/.."

CF=${CLANG_FORMAT:-clang-format}
if ! command -v "$CF" >/dev/null; then
	echo "format-check: no $CF (apt-get install clang-format)" >&2
	exit 1
fi
bad=0
out=$(mktemp)
trap 'rm -f "$out"' EXIT
for f in $(git ls-files 'src/*.[ch]' 'include/*.h' 'bpf/*.h' 'tools/*.[ch]'); do
	if ! "$CF" "$f" | diff -u "$f" - > "$out" 2>&1; then
		echo "format-check: $f differs from .clang-format ($CF):" >&2
		head -n 20 "$out" >&2
		bad=1
	fi
done
[ $bad = 0 ] || exit 1
echo "format-check: src/ include/ bpf/ tools/ match .clang-format ($("$CF" --version | sed -n 's/.*version \([0-9.]*\).*/\1/p'))"
