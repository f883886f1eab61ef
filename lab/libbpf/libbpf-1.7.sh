#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
#
# libbpf 1.7.0 for `make LIBBPF=1.7 ...`, built from Debian sid's source
# package into a private prefix:
#
#   lab/libbpf/libbpf-1.7.sh OUTDIR
#
# makes OUTDIR/prefix/ (include/bpf, include/linux, lib/libbpf.a,
# lib/libbpf.so*, lib/pkgconfig/libbpf.pc) and touches OUTDIR/prefix/.done;
# a prefix that is done already is left alone, so a second run costs
# nothing. Nothing outside OUTDIR changes: apt runs on a private state
# (OUTDIR/apt: its own sources.list with one deb-src line for sid, its own
# lists and cache), never on the system's sources, and nothing is
# installed with dpkg.
#
# The source package, not sid's binary one: sid's libbpf1 needs sid's libc,
# while a build from source links against this system's.
set -e

[ $# -eq 1 ] || { echo "usage: $0 OUTDIR" >&2; exit 2; }
out=$1
DEBVER=1.7.0-1
KEYRING=/usr/share/keyrings/debian-archive-keyring.gpg
# The archive the system's apt uses ($DEBIAN_MIRROR overrides it).
MIRROR=$("$(dirname "$0")/../debian-mirror.sh")

[ -f "$out/prefix/.done" ] && exit 0

for tool in apt-get dpkg-source make cc; do
	command -v "$tool" >/dev/null || {
		echo "libbpf-1.7.sh: $tool is missing (scripts/deps.sh installs it)" >&2
		exit 1
	}
done
mkdir -p "$out"
out=$(cd "$out" && pwd)
apt=$out/apt

# The private apt state.
mkdir -p "$apt/etc" "$apt/lists/partial" "$apt/cache/archives/partial" \
	"$apt/src"
echo "deb-src [signed-by=$KEYRING] $MIRROR sid main" > "$apt/etc/sources.list"
: > "$apt/status"
set -- -o Dir::Etc::SourceList="$apt/etc/sources.list" \
	-o Dir::Etc::SourceParts=/dev/null \
	-o Dir::Etc::Preferences=/dev/null \
	-o Dir::Etc::PreferencesParts=/dev/null \
	-o Dir::State::Lists="$apt/lists" \
	-o Dir::State::status="$apt/status" \
	-o Dir::Cache="$apt/cache" \
	-o Acquire::Check-Valid-Until=false
# (The last: a mirror that serves a snapshot of the archive serves sid's
# Release past its Valid-Until, a week; signatures are still checked.)
# apt drops privileges to _apt for downloads: let it write there.
if [ "$(id -u)" = 0 ] && id _apt >/dev/null 2>&1; then
	chown -R _apt "$apt/lists" "$apt/src"
fi

if [ ! -d "$apt/src/libbpf-1.7.0" ]; then
	echo "libbpf-1.7.sh: apt-get update (private state, deb-src sid)"
	apt-get "$@" -qq update
	echo "libbpf-1.7.sh: apt-get source libbpf=$DEBVER"
	rm -rf "$apt/src.tmp"
	mkdir -p "$apt/src.tmp"
	if [ "$(id -u)" = 0 ] && id _apt >/dev/null 2>&1; then
		chown _apt "$apt/src.tmp"
	fi
	(cd "$apt/src.tmp" && apt-get "$@" -qq source "libbpf=$DEBVER" >/dev/null)
	[ -f "$apt/src.tmp/libbpf-1.7.0/src/libbpf.h" ] || {
		echo "libbpf-1.7.sh: no libbpf-1.7.0/src after apt-get source" >&2
		exit 1
	}
	rm -rf "$apt/src"
	mv "$apt/src.tmp" "$apt/src"
fi

src=$apt/src/libbpf-1.7.0/src
echo "libbpf-1.7.sh: building libbpf 1.7.0 into $out/prefix"
rm -rf "$out/prefix" "$out/obj"
jobs=${LIBBPF_JOBS:-2}
make -s -C "$src" -j"$jobs" OBJDIR="$out/obj" PREFIX="$out/prefix" \
	LIBDIR="$out/prefix/lib" INCLUDEDIR="$out/prefix/include" \
	UAPIDIR="$out/prefix/include" \
	install install_uapi_headers >/dev/null
rm -rf "$out/obj"
test -f "$out/prefix/lib/libbpf.a"
test -f "$out/prefix/include/bpf/libbpf.h"
touch "$out/prefix/.done"
echo "libbpf-1.7.sh: done"
