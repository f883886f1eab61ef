#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
#
# What `make vm-check` boots, all from Debian's archive through
# lab/apt-private.sh (never the system's apt sources):
#
#   lab/vm/fetch.sh VMDIR ARCH KERNEL
#
# ARCH: arm64, s390x, riscv64 or x86_64. KERNEL: 6.1 (bookworm's), 6.12
# (trixie's; riscv64 has no 6.1: it is a release architecture from trixie
# on) or sid (Debian sid's newest, linux-image-ARCH there: its version
# moves; the one fetched stays in VMDIR/kernel/ARCH-sid until that is
# removed). Makes
#   VMDIR/kernel/ARCH-KERNEL/vmlinuz   the kernel (of its modules only
#                                      those for overlayfs and btrfs are
#                                      kept, in modules/ next to it:
#                                      everything else the tests need is
#                                      built in)
#   VMDIR/btf/ARCH.btf                 the kernel's BTF, for vmlinux.h (from
#                                      the 6.12 kernel: lab/vm/btf.sh)
#   VMDIR/sysroot/ARCH/                the guest's userland and the cross
#                                      build's libraries: busybox-static,
#                                      libc, libelf, zlib, libbpf, cmocka
#                                      (bookworm's; riscv64: trixie's)
#   VMDIR/python/ARCH/                 bookworm's python3 (3.11), which
#                                      test_trace_python traces: the
#                                      interpreter and its minimal standard
#                                      library (not for riscv64, see below)
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
sid)	ksuite=sid ;;
*)	echo "fetch.sh: unknown KERNEL $kver (6.1 6.12 sid)" >&2; exit 2 ;;
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

# The modules lab/vm/run.sh loads in the guest: overlayfs for
# test_file's overlay cases, btrfs and the loop device for its btrfs ones,
# and crc32c_generic, which btrfs asks the crypto API for by name (so no
# module lists it as a dependency) in 6.1 and 6.12; 7.x kernels have no
# module of that name, and their btrfs calls the crc32c library. Each
# comes after what it depends on. A kernel that has one of them built in
# (its modules.builtin) needs no module; one that has neither fails,
# except for those in OPTIONAL_MODULES, which are then left out with a
# note (in the guest's console too, by lab/vm/run.sh).
GUEST_MODULES="overlay crc32c_generic loop btrfs"
OPTIONAL_MODULES="crc32c_generic"

# A module file $1, uncompressed, to $2 (trixie's are .ko.xz; busybox's
# insmod in the guest takes a plain .ko).
unpack_ko() {
	case $1 in
	*.xz)	xz -dc "$1" > "$2" ;;
	*.zst)	zstd -qdc "$1" > "$2" ;;
	*.gz)	gzip -dc "$1" > "$2" ;;
	*)	cp "$1" "$2" ;;
	esac
}

# The first line of stdin, a list of module files, that names module $1
# (in "_" spelling); exit status 1 when none does.
module_in() {
	awk -v m="$1" '{ n = $0; sub(/.*\//, "", n); sub(/\.ko.*/, "", n);
		gsub(/-/, "_", n); if (n == m) { print; f = 1; exit } }
		END { exit !f }'
}

# Module $2 (by name; "-" and "_" are the same in module names, as
# arm64's xor-neon is named in xor's depends) into directory $1, after the
# modules it depends on (its .modinfo's "depends=": the .deb has no
# modules.dep, which depmod makes at install), each named once in $1/load,
# in loading order. $1/index lists the package's module files.
add_module() {
	set -- "$1" "$(echo "$2" | tr - _)"
	grep -qx "$2" "$1/load" 2>/dev/null && return 0
	ko=$(module_in "$2" < "$1/index" || true)
	[ -n "$ko" ] || { echo "fetch.sh: no module $2 in the kernel package" >&2; exit 1; }
	unpack_ko "$ko" "$1/$2.ko"
	for dep in $(tr '\0' '\n' < "$1/$2.ko" | sed -n 's/^depends=//p' |
			head -n1 | tr , ' '); do
		add_module "$1" "$dep"
	done
	echo "$2" >> "$1/load"
}

# Whether module $2 is built into the kernel unpacked in $1 (a line of its
# modules.builtin, "kernel/fs/overlayfs/overlay.ko").
builtin_module() {
	find "$1" -name modules.builtin -exec cat {} + 2>/dev/null |
		module_in "$2" > /dev/null
}

# apt-private.sh with the private lists of that suite made anew when it
# fails once: they go stale (sid's above all: its archive keeps only the
# newest build of a package), and `=META` then names what is gone.
fetch_pkgs() {
	"$here/../apt-private.sh" "$vmdir/apt" "$@" && return 0
	echo "fetch.sh: $1/$debarch: updating the private package lists and trying again" >&2
	rm -rf "$vmdir/apt/$1-$debarch/lists"
	"$here/../apt-private.sh" "$vmdir/apt" "$@"
}

# The kernel of release $1 (bookworm, trixie, sid) into $2, and of its
# modules those in GUEST_MODULES (with what they need) in $2/modules/.
# Two layouts of Debian's kernel packages, told apart by what
# linux-image-VER (what linux-image-ARCH depends on) holds:
#  - up to trixie, everything: /boot/vmlinuz-VER, /boot/config-VER and
#    the modules and modules.builtin in /lib/modules/VER/;
#  - sid's from Linux 7.x, nothing but dependencies: the image is in
#    linux-binary-VER (/usr/lib/modules/VER/vmlinuz), the modules in
#    linux-modules-VER and config and modules.builtin in linux-base-VER
#    (in /usr/lib/modules/VER/, no /boot).
fetch_kernel() {
	[ -f "$2/vmlinuz" ] && [ -f "$2/modules/load" ] && return 0
	rm -rf "$2/pkg" "$2/modules" "$2/modules.tmp" "$2/overlay.ko"
	fetch_pkgs "$1" "$debarch" "$2/pkg" "=linux-image-$kflavour"
	# shellcheck disable=SC2012
	img=$(ls "$2"/pkg/boot/vmlinu[xz]-* 2>/dev/null | head -n1)
	if [ -z "$img" ]; then
		abi=$(sed -n 's/^linux-image-\([^_]*\)_.*/\1/p' "$2/pkg/.pkgs" |
			head -n1)
		[ -n "$abi" ] || {
			echo "fetch.sh: $1/$debarch: no kernel image in $(cat "$2/pkg/.pkgs")" >&2
			exit 1
		}
		echo "fetch.sh: $1/$debarch: linux-image-$abi holds no kernel:" \
			"fetching linux-binary-$abi, linux-modules-$abi, linux-base-$abi"
		fetch_pkgs "$1" "$debarch" "$2/pkg/split" "linux-binary-$abi" \
			"linux-modules-$abi" "linux-base-$abi"
		# shellcheck disable=SC2012
		img=$(ls "$2"/pkg/split/usr/lib/modules/*/vmlinu[xz] \
			"$2"/pkg/split/lib/modules/*/vmlinu[xz] 2>/dev/null |
			head -n1)
		[ -n "$img" ] || {
			echo "fetch.sh: $1/$debarch: no kernel image in linux-binary-$abi" >&2
			exit 1
		}
	fi
	mkdir -p "$2/modules.tmp"
	find "$2/pkg" -name '*.ko*' > "$2/modules.tmp/index"
	for m in $GUEST_MODULES; do
		if module_in "$m" < "$2/modules.tmp/index" > /dev/null; then
			add_module "$2/modules.tmp" "$m"
		elif builtin_module "$2/pkg" "$m"; then
			echo "fetch.sh: $m is built into $1's kernel"
		elif echo " $OPTIONAL_MODULES " | grep -q " $m "; then
			echo "$m: no such module in this kernel, not loaded" |
				tee -a "$2/modules.tmp/notes" | sed 's/^/fetch.sh: /'
		else
			echo "fetch.sh: $1's kernel has no module $m and does not" \
				"have it built in" >&2
			exit 1
		fi
	done
	touch "$2/modules.tmp/load"
	rm "$2/modules.tmp/index"
	cp "$img" "$2/vmlinuz.tmp"
	mv "$2/modules.tmp" "$2/modules"
	# shellcheck disable=SC2012
	cfg=$(ls "$2"/pkg/boot/config-* "$2"/pkg/split/usr/lib/modules/*/config \
		2>/dev/null | head -n1)
	[ -z "$cfg" ] || cp "$cfg" "$2/config"
	cat "$2/pkg/.pkgs" > "$2/version"
	rm -rf "$2/pkg"
	mv "$2/vmlinuz.tmp" "$2/vmlinuz"
}
fetch_kernel "$ksuite" "$vmdir/kernel/$arch-$kver"

# The target's vmlinux.h comes from trixie's kernel's BTF, whichever
# kernel boots: bookworm's s390x kernel has none, and the BPF objects are
# CO-RE (the struct pt_regs layouts they need are the same in 6.1).
if [ ! -f "$vmdir/btf/$arch.btf" ]; then
	fetch_kernel trixie "$vmdir/kernel/$arch-6.12"
	mkdir -p "$vmdir/btf"
	"$here/btf.sh" "$vmdir/kernel/$arch-6.12/vmlinuz" "$vmdir/btf/$arch.btf"
fi

# shellcheck disable=SC2086
"$here/../apt-private.sh" "$vmdir/apt" "$usuite" "$debarch" \
	"$vmdir/sysroot/$arch" busybox-static libc6 $elf libelf-dev zlib1g \
	zlib1g-dev libbpf1 libbpf-dev libcmocka0 libcmocka-dev

# python3 for test_trace_python, kept out of the sysroot: lab/vm/run.sh
# packs it only into guests that run that test (about 13 MB). The minimal
# packages are what `python3 -S` needs; libssl (for two extension modules
# of libpython3.11-minimal) is left out. riscv64 has none: its userland is
# trixie's, whose python3.13 has no function__entry or line probes
# (Python 3.12 dropped them), which are what the test traces.
if [ "$usuite" = bookworm ]; then
	"$here/../apt-private.sh" "$vmdir/apt" bookworm "$debarch" \
		"$vmdir/python/$arch" python3-minimal python3.11-minimal \
		libpython3.11-minimal libexpat1
fi
