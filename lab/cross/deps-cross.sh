#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
#
# Target libraries for `make cross-check`: libelf, zlib and libcmocka of
# each foreign architecture, taken from Debian 12's archive and unpacked
# into a private sysroot per target:
#
#   lab/cross/deps-cross.sh OUTDIR TRIPLET...
#
# makes OUTDIR/TRIPLET/sysroot/ (usr/include, usr/lib/TRIPLET, lib/TRIPLET,
# and .pkgs, the packages unpacked); a target that is done already is left
# alone. A target whose libraries the archive does not carry (riscv64 is
# not a Debian 12 release architecture) gets OUTDIR/TRIPLET/unavailable
# instead, saying why, and the script goes on (and leaves that target alone
# next time too, until `make clean`).
#
# The packages come through lab/apt-private.sh: a private apt state
# under OUTDIR/apt with its own sources list, lists and cache, so neither
# the system's apt sources nor dpkg's architectures and database change,
# and no root is needed. (Why not `apt-get install libelf-dev:arm64 ...`:
# multiarch installs need every Multi-Arch: same package at exactly the
# host's version, which a host with security updates may not match.) The C
# library itself comes from Debian's libc6-dev-*-cross packages
# (scripts/deps.sh), as for the cross compilers.
set -e

[ $# -ge 2 ] || { echo "usage: $0 OUTDIR TRIPLET..." >&2; exit 2; }
out=$1
shift

PKGS="libelf1 libelf-dev zlib1g libcmocka0 libcmocka-dev"

# Debian's name for a GNU triplet's architecture.
debarch() {
	case $1 in
	aarch64-linux-gnu) echo arm64 ;;
	s390x-linux-gnu) echo s390x ;;
	riscv64-linux-gnu) echo riscv64 ;;
	x86_64-linux-gnu) echo amd64 ;;
	*) return 1 ;;
	esac
}

for t in "$@"; do
	a=$(debarch "$t") || { echo "deps-cross.sh: unknown target $t" >&2; exit 2; }
	dir=$out/$t
	[ -f "$dir/sysroot/.pkgs" ] || [ -f "$dir/unavailable" ] && continue
	mkdir -p "$dir"
	rc=0
	# shellcheck disable=SC2086
	"$(dirname "$0")/../apt-private.sh" "$out/apt" bookworm "$a" \
		"$dir/sysroot" $PKGS || rc=$?
	if [ "$rc" = 3 ]; then
		echo "Debian 12's archive has no $a packages" > "$dir/unavailable"
		echo "deps-cross.sh: $t: $(cat "$dir/unavailable")"
	elif [ "$rc" != 0 ]; then
		exit "$rc"
	fi
done
