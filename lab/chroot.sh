#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
#
# A Debian chroot of another release, made once and kept, and commands run
# in it on this machine's kernel:
#
#   lab/chroot.sh make SUITE              make (or refresh) the chroot
#   lab/chroot.sh run SUITE CMD...        run CMD as root inside it
#
# The chroot is made with debootstrap (variant minbase) from the Debian
# archive that the system's apt already uses (lab/debian-mirror.sh; no
# host is named here), in $USDT_CHROOT_DIR/SUITE (default
# /var/cache/libusdt/chroot): outside the work tree, so that CI's fresh
# clones share it. A chroot older than USDT_CHROOT_DAYS days (default 7)
# is upgraded first; one whose making was cut short is made anew.
#
# `run` works in a mount namespace of its own (unshare -m, propagation
# private) whose root is the chroot's (pivot_root), so that "/" is a mount
# point inside as on a real machine, with /proc, /sys, /dev, bpffs and
# tracefs mounted for the kernel tests. Nothing it mounts
# outlives the command, nor is seen by the rest of the machine. The
# command runs with /src as the working directory, a copy of the work
# tree's files (tracked and untracked, not ignored ones: no build output)
# made afresh for each `run` and removed after it (two runs at once each
# have their own), and CI passed through.
#
# USDT_CHROOT_SCRATCH=1 makes `run` work in a throwaway overlay of the
# chroot (overlayfs, its upper dir in a temporary directory removed when
# CMD ends): what CMD installs or writes is never kept, and the chroot
# stays as `make` left it.
set -eu

here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/.." && pwd)
base=${USDT_CHROOT_DIR:-/var/cache/libusdt/chroot}
days=${USDT_CHROOT_DAYS:-7}

usage() {
	echo "usage: $0 make SUITE | run SUITE CMD..." >&2
	exit 2
}
[ $# -ge 2 ] || usage
verb=$1
suite=$2
shift 2
root=$base/$suite

# Run CMD in the chroot with the mounts the tests need, in a private mount
# namespace: the mounts go when CMD ends. pivot_root, not chroot alone:
# the chroot's root becomes the namespace's root, so that a test that
# unshares its mount namespace or reads /proc/self/exe sees what it sees
# on a real machine (after a plain chroot, a path outside the new root
# reads as the host's path).
in_chroot() {
	unshare --mount --propagation private sh -euc '
		root=$1 src=$2; shift 2
		mount --bind "$root" "$root"
		if [ -n "$src" ]; then
			mkdir -p "$root/src"
			mount --bind "$src" "$root/src"
		fi
		mount -t proc proc "$root/proc"
		mount --rbind /sys "$root/sys"
		mount --rbind /dev "$root/dev"
		mountpoint -q "$root/sys/fs/bpf" ||
			mount -t bpf bpf "$root/sys/fs/bpf"
		[ -d "$root/sys/kernel/tracing/events" ] ||
			mount -t tracefs tracefs "$root/sys/kernel/tracing" 2>/dev/null || :
		mkdir -p "$root/tmp" "$root/run" "$root/.oldroot"
		mount -t tmpfs tmpfs "$root/run"
		cp /etc/resolv.conf "$root/etc/resolv.conf" 2>/dev/null || :
		cd "$root"
		pivot_root . .oldroot
		umount -l /.oldroot
		exec /usr/sbin/chroot . /usr/bin/env -i \
			PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
			HOME=/root LANG=C.UTF-8 TERM=dumb CI="${CI:-}" \
			DEBIAN_FRONTEND=noninteractive "$@"
	' sh "$root" "${src:-}" "$@"
}

make_chroot() {
	if [ -f "$root/.usdt-done" ]; then
		if [ -z "$(find "$root/.usdt-done" -mtime +"$days")" ]; then
			return 0
		fi
		echo "chroot.sh: $suite: older than $days days: upgrading"
		# A suite that cannot be upgraded today (sid mid-transition)
		# leaves the chroot as it was, and the next run tries again.
		if in_chroot sh -c 'apt-get update -qq &&
			apt-get -y -qq dist-upgrade >/dev/null &&
			apt-get -qq clean'; then
			touch "$root/.usdt-done"
		else
			echo "chroot.sh: $suite: warning: upgrade failed; going on with the chroot as it is" >&2
		fi
		return 0
	fi
	command -v debootstrap >/dev/null || {
		echo "chroot.sh: debootstrap is missing (scripts/deps.sh debootstrap)" >&2
		exit 1
	}
	mirror=$("$here/debian-mirror.sh")
	echo "chroot.sh: $suite: debootstrap --variant=minbase from the system's mirror"
	rm -rf "$root.tmp"
	mkdir -p "$root.tmp"
	debootstrap --variant=minbase --keyring=/usr/share/keyrings/debian-archive-keyring.gpg \
		"$suite" "$root.tmp" "$mirror" >"$base/$suite.debootstrap.log" 2>&1 || {
		tail -n 20 "$base/$suite.debootstrap.log" >&2
		echo "chroot.sh: $suite: debootstrap failed (log: $base/$suite.debootstrap.log)" >&2
		exit 1
	}
	# The chroot's apt reads the same mirror. A mirror that serves a
	# snapshot of the archive serves sid's Release past its Valid-Until
	# (a week): apt would then refuse every update. Signatures are still
	# checked; only the expiry is not.
	echo "deb $mirror $suite main" > "$root.tmp/etc/apt/sources.list"
	echo 'Acquire::Check-Valid-Until "false";' \
		> "$root.tmp/etc/apt/apt.conf.d/90usdt-snapshot"
	rm -rf "$root"
	mv "$root.tmp" "$root"
	in_chroot sh -c 'apt-get update -qq && apt-get -qq clean'
	touch "$root/.usdt-done"
}

# The work tree's files (not its build output) into a new directory of
# its own, printed; in_chroot mounts it on /src in its namespace alone, so
# that two runs at once (a session's and CI's) each have their own.
copy_tree() {
	src=$(mktemp -d "$base/src.XXXXXX")
	(cd "$top" && git ls-files -z --cached --others --exclude-standard |
		xargs -0 tar cf - --no-recursion) | tar xf - -C "$src"
	echo "$src"
}

# USDT_CHROOT_SCRATCH=1: this script's `run` again, in a mount namespace
# of its own where an overlay of the chroot (lower: the chroot, read-only;
# upper: a temporary directory) stands in for it.
scratch_run() {
	scratch=$(mktemp -d "${TMPDIR:-/tmp}/usdt-chroot.XXXXXX")
	trap 'rm -rf "$scratch"' EXIT
	mkdir -p "$scratch/upper" "$scratch/work" "$scratch/chroot/$suite"
	status=0
	unshare --mount --propagation private sh -euc '
		scratch=$1 root=$2 suite=$3; shift 3
		mount -t overlay overlay -o "lowerdir=$root,upperdir=$scratch/upper,workdir=$scratch/work" \
			"$scratch/chroot/$suite"
		USDT_CHROOT_DIR=$scratch/chroot USDT_CHROOT_SCRATCH= exec "$@"
	' sh "$scratch" "$root" "$suite" "$here/chroot.sh" run "$suite" "$@" || status=$?
	exit "$status"
}

case $verb in
make)
	mkdir -p "$base"
	make_chroot ;;
run)
	[ $# -ge 1 ] || usage
	mkdir -p "$base"
	make_chroot
	[ -z "${USDT_CHROOT_SCRATCH:-}" ] || scratch_run "$@"
	src=$(copy_tree)
	trap 'rm -rf "$src"' EXIT
	status=0
	in_chroot sh -c 'cd /src && exec "$@"' sh "$@" || status=$?
	exit "$status" ;;
*)
	usage ;;
esac
