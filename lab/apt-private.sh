#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
#
# Fetch and unpack Debian packages of any architecture and release, without
# touching the system's apt sources, dpkg's database or the host's files:
#
#   lab/apt-private.sh STATEDIR SUITE DEBARCH DESTDIR PKG...
#
# keeps a private apt state in STATEDIR/SUITE-DEBARCH (its own sources.list
# naming the system's Debian mirror's SUITE for DEBARCH alone, its own lists, cache and
# an empty dpkg status), runs `apt-get update` there once, downloads PKG...
# of DEBARCH with `apt-get download` and unpacks each with `dpkg-deb -x`
# into DESTDIR. A PKG written `=META` stands for the one package META
# depends on (linux-image-arm64 -> linux-image-6.1.0-NN-arm64), or failing
# its download, the newest of the same name that downloads. DESTDIR/.pkgs
# lists what was unpacked; a DESTDIR that has it is left alone.
#
# Used by lab/cross/deps-cross.sh (libraries for `make cross-check`) and by
# lab/vm/fetch.sh (kernels and guest userland for `make vm-check`).
# Exit status 3: SUITE has no DEBARCH at all.
# Signatures are checked against the host's debian-archive-keyring.
set -e

[ $# -ge 5 ] || {
	echo "usage: $0 STATEDIR SUITE DEBARCH DESTDIR PKG..." >&2
	exit 2
}
state=$1/$2-$3
suite=$2
arch=$3
dest=$4
shift 4

[ -f "$dest/.pkgs" ] && exit 0

KEYRING=/usr/share/keyrings/debian-archive-keyring.gpg
# The archive the system's apt uses ($DEBIAN_MIRROR overrides it).
MIRROR=$("$(dirname "$0")/debian-mirror.sh")

mkdir -p "$state/empty" "$state/lists/partial" "$state/cache/archives/partial" "$state/debs"
state=$(cd "$state" && pwd)
[ -f "$state/status" ] || : > "$state/status"
echo "deb [arch=$arch signed-by=$KEYRING] $MIRROR $suite main" \
	> "$state/sources.list"

apt_opts() {
	echo "-o Dir::Etc::SourceList=$state/sources.list" \
	     "-o Dir::Etc::SourceParts=$state/empty" \
	     "-o Dir::Etc::Preferences=/dev/null" \
	     "-o Dir::Etc::PreferencesParts=$state/empty" \
	     "-o Dir::State::Lists=$state/lists" \
	     "-o Dir::State::status=$state/status" \
	     "-o Dir::Cache=$state/cache" \
	     "-o APT::Architecture=$arch -o APT::Architectures=$arch" \
	     "-o Debug::NoLocking=1" \
	     "-o Acquire::Check-Valid-Until=false"
	# (A mirror that serves a snapshot of the archive serves sid's and
	# testing's Release past its Valid-Until; signatures are still
	# checked, only the expiry is not.)
	# apt drops to _apt to download; the private state is root's own.
	[ "$(id -u)" = 0 ] && echo "-o APT::Sandbox::User=root"
	return 0
}

# shellcheck disable=SC2046
papt_get() { apt-get -qq $(apt_opts) "$@"; }
# shellcheck disable=SC2046
papt_cache() { apt-cache $(apt_opts) "$@"; }

if ! ls "$state"/lists/*_Packages* >/dev/null 2>&1; then
	echo "apt-private.sh: apt-get update ($suite, $arch)"
	papt_get update
fi
# A release without the architecture (bookworm has no riscv64): exit 3.
if ! grep -qs "^Architectures:.* $arch\( \|\$\)" "$state"/lists/*Release; then
	echo "apt-private.sh: Debian $suite has no $arch packages" >&2
	exit 3
fi

# The packages that could stand for META, best first: the one it depends
# on, then the others of the same name with another ABI number (a mirror
# may lack the newest, linux-image-6.12.117+deb13-s390x, and still have
# linux-image-6.12.107+deb13-s390x).
candidates() {
	dep=$(papt_cache depends "$1" |
		sed -n 's/^ *Depends: \([^ <]*\).*/\1/p' |
		grep -v -e '^linux-base' -e '^initramfs' | head -n1)
	[ -n "$dep" ] || return 0
	echo "$dep"
	pat=$(echo "$dep" |
		sed 's/[0-9][0-9]*\(\(+[a-z0-9]*\)\{0,1\}-[a-z0-9]*\)$/[0-9][0-9]*\1/')
	papt_cache pkgnames "${dep%%[0-9]*}" | grep -x "$pat" | grep -vx "$dep" |
		sort -rV
}

rm -f "$state"/debs/*.deb
pkgs=""
for p in "$@"; do
	case $p in
	=*)
		got=""
		for c in $(candidates "${p#=}"); do
			echo "apt-private.sh: $suite/$arch: downloading $c (${p#=})"
			if (cd "$state/debs" && papt_get download "$c"); then
				got=$c
				break
			fi
		done
		[ -n "$got" ] || {
			echo "apt-private.sh: $suite/$arch: no package for ${p#=} can be downloaded" >&2
			exit 1
		} ;;
	*)	pkgs="$pkgs $p" ;;
	esac
done

if [ -n "$pkgs" ]; then
	echo "apt-private.sh: $suite/$arch: downloading$pkgs"
	# shellcheck disable=SC2086
	if ! (cd "$state/debs" && papt_get download $pkgs); then
		# The lists may name versions the archive no longer has.
		papt_get update
		# shellcheck disable=SC2086
		(cd "$state/debs" && papt_get download $pkgs)
	fi
fi

rm -rf "$dest.tmp"
mkdir -p "$dest.tmp"
for deb in "$state"/debs/*.deb; do
	dpkg-deb -x "$deb" "$dest.tmp"
	basename "$deb" >> "$dest.tmp/.pkgs"
done
rm -f "$state"/debs/*.deb
rm -rf "$dest"
mv "$dest.tmp" "$dest"
