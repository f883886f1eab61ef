#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
#
# The BTF of a kernel image, for the target's vmlinux.h (make vm-check):
#
#   lab/vm/btf.sh VMLINUZ OUT
#
# A kernel built with CONFIG_DEBUG_INFO_BTF carries its BTF (the .BTF
# section, what /sys/kernel/btf/vmlinux shows) inside the image. Debian's
# arm64 and riscv64 images are not compressed; x86_64's bzImage and s390x's
# image hold the kernel compressed (xz, zstd or gzip) after a small
# decompressor. So: look for the BTF header in the image, else in what
# each compressed stream found in it unpacks to. The header (magic 0xeb9f
# in either byte order, version 1, header length 24, types then strings)
# gives the blob's length; bpftool must read the result, or nothing is
# written. Exits 1 when the image has no BTF (Debian's s390x 6.1).
set -e

[ $# = 2 ] || { echo "usage: $0 VMLINUZ OUT" >&2; exit 2; }
img=$1 out=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# Offsets of the byte string $2 (as \xNN escapes) in file $1.
offsets() {
	LC_ALL=C grep -obUaP "$2" "$1" 2>/dev/null | cut -d: -f1
}

# The BTF blob at offset $2 of file $1 into $out, if its header is sane.
cut_btf() {
	# shellcheck disable=SC2046
	set -- "$1" "$2" $(od -An -v -tx1 -j "$2" -N 24 "$1")
	f=$1 off=$2
	shift 2
	[ $# = 24 ] || return 1
	# u32 I BYTES...: the 32-bit field at byte I; byte K is ${K + 2}.
	if [ "$1" = 9f ]; then	# little-endian
		u32() { eval "echo \$((0x\${$(($1 + 5))}\${$(($1 + 4))}\${$(($1 + 3))}\${$(($1 + 2))}))"; }
	else
		u32() { eval "echo \$((0x\${$(($1 + 2))}\${$(($1 + 3))}\${$(($1 + 4))}\${$(($1 + 5))}))"; }
	fi
	hdr=$(u32 4 "$@") type_off=$(u32 8 "$@") type_len=$(u32 12 "$@")
	str_off=$(u32 16 "$@") str_len=$(u32 20 "$@")
	[ "$hdr" = 24 ] && [ "$type_off" = 0 ] && [ "$str_off" = "$type_len" ] &&
		[ "$str_len" -gt 0 ] || return 1
	len=$((hdr + str_off + str_len))
	tail -c +$((off + 1)) "$f" | head -c "$len" > "$tmp/btf"
	[ "$(wc -c < "$tmp/btf")" = "$len" ] || return 1
	bpftool btf dump file "$tmp/btf" > /dev/null 2>&1 || return 1
	cp "$tmp/btf" "$out"
}

# The first sane BTF blob in file $1.
find_btf() {
	for o in $(offsets "$1" '\x9f\xeb\x01\x00\x18\x00\x00\x00') \
		 $(offsets "$1" '\xeb\x9f\x01\x00\x00\x00\x00\x18'); do
		cut_btf "$1" "$o" && return 0
	done
	return 1
}

find_btf "$img" && exit 0
# Compressed kernels: each xz, zstd or gzip stream in the image.
for m in 'xz:\xfd\x37\x7a\x58\x5a\x00' 'zstd:\x28\xb5\x2f\xfd' \
	 'gzip:\x1f\x8b\x08'; do
	tool=${m%%:*}
	for o in $(offsets "$img" "${m#*:}"); do
		tail -c +$((o + 1)) "$img" | "$tool" -dc > "$tmp/kernel" \
			2>/dev/null || true
		[ -s "$tmp/kernel" ] && find_btf "$tmp/kernel" && exit 0
	done
done
echo "btf.sh: $img: no BTF found" >&2
exit 1
