#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
#
# Boot a Debian kernel in QEMU (TCG) with an initramfs holding busybox, the
# kernel tests and their libraries, run the tests there and end with their
# summary line and exit status (lab/vm/vm.mk, `make vm-check`):
#
#   lab/vm/run.sh VMDIR ARCH KERNEL VM_TIMEOUT TEST_TIMEOUT OBJDIR TEST...
#
# The guest sees this tree's build output at the same absolute path (the
# tests name the tool, fixtures and libusdttest.so by it) and runs
# tests/run.sh there with busybox's sh, so that the summary is counted the
# same way as by `make check`. The console goes to stdout and to
# VMDIR/ARCH-KERNEL.log. CI is passed on to the guest.
set -e

[ $# -ge 7 ] || {
	echo "usage: $0 VMDIR ARCH KERNEL VM_TIMEOUT TEST_TIMEOUT OBJDIR TEST..." >&2
	exit 2
}
vmdir=$1 arch=$2 kver=$3 vm_timeout=$4 test_timeout=$5 objdir=$6
shift 6

top=$(pwd)
kernel=$vmdir/kernel/$arch-$kver/vmlinuz
sysroot=$vmdir/sysroot/$arch
root=$vmdir/root-$arch-$kver
initrd=$vmdir/initrd-$arch-$kver.cpio
log=$vmdir/$arch-$kver.log

# What the guest runs: the tests by their paths here, as `make check` does.
progs=""
for t in "$@"; do
	progs="$progs $objdir/tests/kernel/$t"
done

rm -rf "$root"
mkdir -p "$root"
# The target's userland, without what only the build needs.
(cd "$sysroot" && find . \( -path ./usr/include -o -path ./usr/share \
	-o -name '*.a' -o -name pkgconfig -o -name cmake \) -prune \
	-o -print | cpio -pdm --quiet "$(cd "$top/$root" && pwd)")
# trixie's packages put everything under /usr ("merged /usr").
for d in bin sbin lib; do
	mkdir -p "$root/usr/$d"
	[ -e "$root/$d" ] || ln -s "usr/$d" "$root/$d"
done
bb=""
for b in "$root"/usr/bin/busybox "$root"/bin/busybox; do
	if [ -e "$b" ]; then
		bb=$b
	fi
done
[ -n "$bb" ] || { echo "run.sh: no busybox in $sysroot" >&2; exit 1; }
# Debian's python3 (lab/vm/fetch.sh), for the one test that traces it.
case " $* " in
*" test_trace_python "*)
	if [ -d "$vmdir/python/$arch" ]; then
		(cd "$vmdir/python/$arch" && find . \( -path ./usr/share \
			-o -path ./etc -o -name .pkgs \) -prune -o -print |
			cpio -pdm --quiet "$(cd "$top/$root" && pwd)")
	fi ;;
esac
mkdir -p "$root/proc" "$root/sys" "$root/dev" "$root/tmp"
# overlayfs, btrfs and the loop device are modules in Debian's kernels
# (lab/vm/fetch.sh keeps them, and modules/load says in which order to
# load them): test_file mounts an overlay, as a container runtime would,
# and a btrfs image on a loop device.
mkdir -p "$root/modules"
cp "$vmdir/kernel/$arch-$kver/modules/"* "$root/modules/"
# The build output, tests/run.sh, at the same path as here.
mkdir -p "$root$top/$objdir" "$root$top/tests"
cp "$top/tests/run.sh" "$root$top/tests/"
cp "$top/$objdir/usdt" "$root$top/$objdir/"
# BPF objects that tests open at run time (*.bpf.o) and the examples that
# test_examples runs come along; other objects and depfiles do not.
(cd "$top" && find "$objdir/tests" "$objdir/examples" -type f \
	\( -name '*.bpf.o' -o ! -name '*.o' \) ! -name '*.d' 2>/dev/null |
	cpio -pdm --quiet "$(cd "$top/$root" && pwd)$top")

cat > "$root/init" <<EOF
#!/bin/busybox sh
/bin/busybox mkdir -p /usr/bin /usr/sbin
/bin/busybox --install -s
export PATH=/usr/sbin:/usr/bin:/sbin:/bin
# Tests that would take minutes under TCG leave a case out, and say so.
export USDT_TEST_GUEST=1
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev
# The tree sits at its host path: a tmpfs on /tmp would hide a tree under
# /tmp (a CI clone there); rootfs is writable, so /tmp works without one.
case "$top" in /tmp/*) ;; *) mount -t tmpfs tmpfs /tmp ;; esac
mount -t debugfs debugfs /sys/kernel/debug 2>/dev/null
mount -t tracefs tracefs /sys/kernel/tracing 2>/dev/null
# As systemd mounts it: libusdt with libbpf before 1.3 hands uprobe_multi
# links to libbpf through it.
mount -t bpf bpf /sys/fs/bpf 2>/dev/null
ulimit -l unlimited
for m in \$(cat /modules/load); do
	insmod /modules/\$m.ko || echo "vm: cannot load \$m.ko"
done
# What lab/vm/fetch.sh left out (a module this kernel does not have).
[ -f /modules/notes ] && sed 's/^/vm: /' /modules/notes
echo "vm: \$(uname -srm)"
cd "$top"
CI="${CI:-}" ${USDT_LOG_LEVEL:+USDT_LOG_LEVEL="$USDT_LOG_LEVEL"} tests/run.sh $test_timeout $progs
echo "vm-check-status \$?"
poweroff -f
EOF
chmod +x "$root/init"
[ -e "$root/bin/busybox" ] || ln -sf "${bb#"$root"}" "$root/bin/busybox"
(cd "$root" && find . | cpio -o -H newc --quiet) > "$initrd"
rm -rf "$root"

case $arch in
arm64)	qemu="qemu-system-aarch64 -M virt -cpu max,pauth-impdef=on"
	console=ttyAMA0 ;;
s390x)	qemu="qemu-system-s390x -M s390-ccw-virtio -cpu max"
	console=ttysclp0 ;;
riscv64) qemu="qemu-system-riscv64 -M virt -cpu rv64 -bios default"
	console=ttyS0 ;;
x86_64)	qemu="qemu-system-x86_64 -M q35,accel=tcg -cpu max"
	console=ttyS0 ;;
*)	echo "run.sh: unknown ARCH $arch" >&2; exit 2 ;;
esac

echo "vm: booting $(cat "$vmdir/kernel/$arch-$kver/version") ($arch, TCG)"
start=$(date +%s)
# shellcheck disable=SC2086
timeout -k 10 "$vm_timeout" $qemu -m 512 -smp 1 -nographic -no-reboot \
	-kernel "$kernel" -initrd "$initrd" \
	-append "console=$console rdinit=/init panic=-1 quiet" \
	</dev/null 2>&1 | sed -u 's/\r$//' | tee "$log"
echo "vm: $arch $kver: $(($(date +%s) - start)) s"
status=$(sed -n 's/^vm-check-status \([0-9]*\)$/\1/p' "$log" | tail -n1)
if [ -z "$status" ]; then
	echo "vm: $arch $kver: the guest ended without the tests' status" \
		"(crash or timeout after ${vm_timeout}s); see $log"
	echo "0 passed, 1 failed, 0 skipped"
	exit 1
fi
exit "$status"
