#!/bin/sh
# Install, from Debian's archive, whatever libusdt's build and tests need
# and this machine lacks. Prints what it installs; does nothing when all is
# present. Needs root only when something is missing. Arguments name more
# packages to install the same way.
#
# It works on Debian 12, 13 and sid alike: the one package whose name
# carries a version (clang's sanitizer runtime, libclang-rt-N-dev) is found
# from the clang that is installed, or that `clang` would install, never
# written here.
set -e

PKGS="make gcc libc6-dev libbpf-dev libelf-dev zlib1g-dev libcmocka-dev
clang llvm bpftool systemtap-sdt-dev pkg-config valgrind dpkg-dev python3
btrfs-progs
gcc-aarch64-linux-gnu gcc-s390x-linux-gnu gcc-riscv64-linux-gnu
libc6-dev-arm64-cross libc6-dev-s390x-cross libc6-dev-riscv64-cross
qemu-user"
# Extra packages a target needs (make vm-check: QEMU system emulators).
PKGS="$PKGS $*"

installed() {
	dpkg-query -W -f='${Status}\n' "$1" 2>/dev/null |
		grep -q "install ok installed"
}

# The major version of the clang this machine has, or else of the one the
# archive's `clang` package depends on (clang-14 on Debian 12, clang-19 on
# 13, clang-21 on sid); empty when neither tells.
clang_major() {
	v=$(clang --version 2>/dev/null |
		sed -n 's/.*clang version \([0-9][0-9]*\).*/\1/p' | head -n1)
	if [ -z "$v" ]; then
		v=$(apt-cache depends clang 2>/dev/null |
			sed -n 's/^ *Depends: clang-\([0-9][0-9]*\)$/\1/p' | head -n1)
	fi
	echo "$v"
}

updated=""
apt_update() {
	[ -n "$updated" ] && return 0
	if [ "$(id -u)" != 0 ]; then
		echo "deps.sh: not root: run as root, or install these packages yourself:$missing" >&2
		exit 1
	fi
	apt-get update -qq
	updated=1
}

missing=""
for p in $PKGS; do
	installed "$p" || missing="$missing $p"
done

# ASan/UBSan with clang (make CC=clang SANITIZE=1).
v=$(clang_major)
if [ -z "$v" ]; then
	apt_update
	v=$(clang_major)
fi
[ -n "$v" ] || { echo "deps.sh: no clang version found with apt-cache" >&2; exit 1; }
installed "libclang-rt-$v-dev" || missing="$missing libclang-rt-$v-dev"

[ -z "$missing" ] && exit 0

echo "deps.sh: installing:$missing"
apt_update
export DEBIAN_FRONTEND=noninteractive
# shellcheck disable=SC2086
apt-get install -y -qq --no-install-recommends $missing >/dev/null
echo "deps.sh: done"
