#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
#
# Target libraries for `make cross-check`: libelf, zlib and libcmocka of
# each foreign architecture, taken from Debian's archive and unpacked into
# a private sysroot per target:
#
#   scripts/deps-cross.sh OUTDIR TRIPLET...
#
# makes OUTDIR/TRIPLET/sysroot/ (usr/include, usr/lib/TRIPLET, lib/TRIPLET)
# and touches OUTDIR/TRIPLET/sysroot/.done; a target that is done already
# is left alone. A target whose libraries the archive does not carry
# (riscv64 is not a Debian 12 release architecture) gets
# OUTDIR/TRIPLET/unavailable instead, saying why, and the script goes on
# (and leaves that target alone next time too, until `make clean`).
#
# Why not `apt-get install libelf-dev:arm64 ...`: multiarch installs need
# every Multi-Arch: same package (libc6, linux-libc-dev, libssl3, ...) at
# exactly the host's version. On a host with security updates, the arm64
# install upgrades host packages to stay in step, and the s390x one cannot
# be done at all when the archive's s390x index lags the host. Unpacking
# the few .debs we link against (apt-get download, dpkg-deb -x) needs only
# the architecture's package index and leaves dpkg's database and the
# host's files as they were. The C library itself comes from Debian's
# libc6-dev-*-cross packages (scripts/deps.sh), as for the cross compilers.
#
# Adding a foreign architecture to dpkg (root only) is done once, and only
# for a target that is not unpacked yet; plain `make check` never runs this.
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

# The packages of PKGS that apt's lists have no candidate for, on arch $1.
no_candidate() {
	# shellcheck disable=SC2046
	apt-cache policy $(for p in $PKGS; do echo "$p:$1"; done) 2>/dev/null |
		awk -v want="$PKGS" -v a="$1" '
		/^[^ ]/ { sub(/:$/, ""); pkg = $0 }
		/^ *Candidate:/ && $2 != "(none)" { ok[pkg] = 1 }
		END {
			n = split(want, w, " ")
			for (i = 1; i <= n; i++)
				if (!ok[w[i] ":" a])
					printf " %s:%s", w[i], a
		}'
}

# Does the archive's Release name arch $1 while apt has no index of it
# (added to dpkg, but no `apt-get update` since)?
eval "$(apt-config shell LISTS Dir::State::lists/d)"
index_missing() {
	grep -qs "^Architectures:.* $1\( \|\$\)" "$LISTS"/*Release &&
		! ls "$LISTS"/*_binary-"$1"_Packages* >/dev/null 2>&1
}

todo=""
for t in "$@"; do
	[ -f "$out/$t/sysroot/.done" ] || [ -f "$out/$t/unavailable" ] &&
		continue
	a=$(debarch "$t") || { echo "deps-cross.sh: unknown target $t" >&2; exit 2; }
	todo="$todo $t"
done
[ -z "$todo" ] && exit 0

# Foreign architectures that dpkg does not know yet, then one index update.
added=""
for t in $todo; do
	a=$(debarch "$t")
	[ "$a" = "$(dpkg --print-architecture)" ] && continue
	dpkg --print-foreign-architectures | grep -qx "$a" && continue
	if [ "$(id -u)" != 0 ]; then
		echo "deps-cross.sh: dpkg lacks architecture $a: run as root" >&2
		exit 1
	fi
	echo "deps-cross.sh: dpkg --add-architecture $a"
	dpkg --add-architecture "$a"
	added="$added $a"
done
updated=""
update() {
	[ -n "$updated" ] && return 0
	if [ "$(id -u)" != 0 ]; then
		echo "deps-cross.sh: apt's lists need an update: run as root" >&2
		exit 1
	fi
	echo "deps-cross.sh: apt-get update"
	apt-get update -qq
	updated=1
}
[ -n "$added" ] && update
for t in $todo; do
	index_missing "$(debarch "$t")" && update
done

for t in $todo; do
	a=$(debarch "$t")
	dir=$out/$t
	rm -rf "$dir/sysroot" "$dir/sysroot.tmp" "$dir/unavailable" "$dir/debs"
	mkdir -p "$dir"
	missing=$(no_candidate "$a")
	if [ -n "$missing" ]; then
		echo "Debian's archive here has no$missing" > "$dir/unavailable"
		echo "deps-cross.sh: $t: $(cat "$dir/unavailable")"
		continue
	fi
	mkdir -p "$dir/debs"
	# apt drops privileges to _apt for downloads: let it write there.
	if [ "$(id -u)" = 0 ] && id _apt >/dev/null 2>&1; then
		chown _apt "$dir/debs"
	fi
	pkgs=""
	for p in $PKGS; do
		pkgs="$pkgs $p:$a"
	done
	echo "deps-cross.sh: $t: downloading$pkgs"
	# shellcheck disable=SC2086
	if ! (cd "$dir/debs" && apt-get download -qq $pkgs); then
		# The lists may name versions the archive no longer has.
		update
		# shellcheck disable=SC2086
		(cd "$dir/debs" && apt-get download -qq $pkgs)
	fi
	mkdir -p "$dir/sysroot.tmp"
	for deb in "$dir"/debs/*.deb; do
		dpkg-deb -x "$deb" "$dir/sysroot.tmp"
	done
	rm -rf "$dir/debs"
	mv "$dir/sysroot.tmp" "$dir/sysroot"
	touch "$dir/sysroot/.done"
done
