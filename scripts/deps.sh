#!/bin/sh
# Install, from Debian's archive, whatever libusdt's build and tests need
# and this machine lacks. Prints what it installs; does nothing when all is
# present. Needs root only when something is missing. Arguments name more
# packages to install the same way.
set -e

PKGS="make gcc libc6-dev libbpf-dev libelf-dev zlib1g-dev libcmocka-dev
clang llvm bpftool systemtap-sdt-dev pkg-config valgrind dpkg-dev python3
btrfs-progs
libclang-rt-14-dev
gcc-aarch64-linux-gnu gcc-s390x-linux-gnu gcc-riscv64-linux-gnu
libc6-dev-arm64-cross libc6-dev-s390x-cross libc6-dev-riscv64-cross
qemu-user"
# Extra packages a target needs (make vm-check: QEMU system emulators).
PKGS="$PKGS $*"

missing=""
for p in $PKGS; do
	if ! dpkg-query -W -f='${Status}\n' "$p" 2>/dev/null |
			grep -q "install ok installed"; then
		missing="$missing $p"
	fi
done

[ -z "$missing" ] && exit 0

echo "deps.sh: installing:$missing"
if [ "$(id -u)" != 0 ]; then
	echo "deps.sh: not root: run as root, or install these packages yourself" >&2
	exit 1
fi
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
# shellcheck disable=SC2086
apt-get install -y -qq --no-install-recommends $missing >/dev/null
echo "deps.sh: done"
