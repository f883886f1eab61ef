#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
#
# What `make vm-check` boots, all from Debian's archive through
# scripts/apt-private.sh (never the system's apt sources):
#
#   scripts/vm/fetch.sh VMDIR ARCH KERNEL
#
# ARCH: arm64, s390x, riscv64 or x86_64. KERNEL: 6.1 (bookworm's) or 6.12
# (trixie's; riscv64 has only this one: it is a release architecture from
# trixie on). Makes
#   VMDIR/kernel/ARCH-KERNEL/vmlinuz   the kernel (its modules are not kept:
#                                      everything the tests need is built in)
#   VMDIR/sysroot/ARCH/                the guest's userland and the cross
#                                      build's libraries: busybox-static,
#                                      libc, libelf, zlib, libbpf, cmocka
#                                      (bookworm's; riscv64: trixie's)
set -e

[ $# = 3 ] || { echo "usage: $0 VMDIR ARCH KERNEL" >&2; exit 2; }
vmdir=$1 arch=$2 kver=$3
here=$(dirname "$0")

case $arch in
arm64)	debarch=arm64 kflavour=arm64 ;;
s390x)	debarch=s390x kflavour=s390x ;;
riscv64) debarch=riscv64 kflavour=riscv64 ;;
x86_64)	debarch=amd64 kflavour=amd64 ;;
*)	echo "fetch.sh: unknown ARCH $arch (arm64 s390x riscv64 x86_64)" >&2
	exit 2 ;;
esac
case $kver in
6.1)	ksuite=bookworm ;;
6.12)	ksuite=trixie ;;
*)	echo "fetch.sh: unknown KERNEL $kver (6.1 6.12)" >&2; exit 2 ;;
esac
if [ "$arch" = riscv64 ] && [ "$kver" = 6.1 ]; then
	echo "fetch.sh: Debian has no riscv64 6.1 kernel (riscv64 starts with trixie)" >&2
	exit 2
fi

# The userland: bookworm's, so that it matches the host's cross compilers
# (glibc 2.36); riscv64's from trixie, where it first is. trixie renamed
# libelf1 to libelf1t64 and links it with libzstd.
if [ "$arch" = riscv64 ]; then
	usuite=trixie
	elf="libelf1t64 libzstd1"
else
	usuite=bookworm
	elf=libelf1
fi

kdir=$vmdir/kernel/$arch-$kver
if [ ! -f "$kdir/vmlinuz" ]; then
	"$here/../apt-private.sh" "$vmdir/apt" "$ksuite" "$debarch" \
		"$kdir/pkg" "=linux-image-$kflavour"
	# shellcheck disable=SC2012
	img=$(ls "$kdir"/pkg/boot/vmlinu[xz]-* | head -n1)
	cp "$img" "$kdir/vmlinuz.tmp"
	cp "$kdir"/pkg/boot/config-* "$kdir/config"
	cat "$kdir/pkg/.pkgs" > "$kdir/version"
	rm -rf "$kdir/pkg"
	mv "$kdir/vmlinuz.tmp" "$kdir/vmlinuz"
fi

# shellcheck disable=SC2086
"$here/../apt-private.sh" "$vmdir/apt" "$usuite" "$debarch" \
	"$vmdir/sysroot/$arch" busybox-static libc6 $elf libelf-dev zlib1g \
	zlib1g-dev libbpf1 libbpf-dev libcmocka0 libcmocka-dev
