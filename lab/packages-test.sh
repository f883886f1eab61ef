#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
#
# Build the Debian packages (debian/) and test them as a user gets them:
#
#   lab/packages-test.sh          (as root)
#
# 1. The work tree's files (tracked and untracked, not ignored ones) are
#    copied into a temporary directory outside the repo, and
#    `dpkg-buildpackage -us -uc -b` runs there: the repo gets no build
#    output, and the .debs land in that directory.
#    The source package is made too (dpkg-source -b, before the build).
# 2. lintian checks it, the .changes and its .debs: an error (E:) fails.
# 3. libusdt0, libusdt-dev and usdt-tools are installed with apt into a
#    throwaway overlay of a clean Debian 12 chroot (lab/chroot.sh,
#    USDT_CHROOT_SCRATCH=1: the cached chroot stays clean), their .debs
#    passed on stdin. There, on this machine's kernel:
#    - the files are where a user looks for them, and apt brought what
#      libusdt-dev depends on;
#    - the examples libusdt-dev ships (examples/'s hello, hello_skel,
#      counters and target) are built by their Makefile.standalone with pkg-config, gcc,
#      clang and bpftool against the installed packages only, hello
#      linked with libusdt.so.0 and again with libusdt.a;
#    - `usdt list` shows the example target's probes, `usdt trace` traces
#      it live, hello and hello_skel print its greetings, and counters its
#      counts;
#    - README.md's Example, followed literally (lab/readme-example.sh).
#
# KEEP=1 keeps the temporary directory (its path is printed).
# DEB_BUILD_OPTIONS defaults to parallel=2.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/.." && pwd)
suite=bookworm

if [ "$(id -u)" != 0 ]; then
	echo "packages-test.sh: run as root (the chroot, and tracing in it)" >&2
	exit 1
fi
for tool in dpkg-buildpackage dh lintian debootstrap; do
	command -v "$tool" >/dev/null || {
		echo "packages-test.sh: $tool is missing" \
			"(apt-get install dpkg-dev debhelper lintian debootstrap)" >&2
		exit 1
	}
done

tmp=$(mktemp -d "${TMPDIR:-/tmp}/libusdt-packages.XXXXXX")
if [ -n "${KEEP:-}" ]; then
	trap 'echo "packages-test.sh: kept $tmp"' EXIT
else
	trap 'rm -rf "$tmp"' EXIT
fi
start=$SECONDS
step() { printf '\n== %s (%ds)\n' "$*" $((SECONDS - start)); }

# 1. Build, in a copy of the tree.
step "copying the work tree to $tmp/libusdt"
mkdir "$tmp/libusdt"
(cd "$top" && git ls-files -z --cached --others --exclude-standard |
	xargs -0 tar cf - --no-recursion) | tar xf - -C "$tmp/libusdt"

step "dpkg-source -b (the source package, for lintian)"
(cd "$tmp" && dpkg-source -b libusdt) >"$tmp/source.log" 2>&1 ||
	{ cat "$tmp/source.log" >&2; exit 1; }
dsc=$(ls "$tmp"/libusdt_*.dsc)

step "dpkg-buildpackage -us -uc -b (log: build.log)"
if ! (cd "$tmp/libusdt" &&
	DEB_BUILD_OPTIONS=${DEB_BUILD_OPTIONS:-parallel=2} \
		dpkg-buildpackage -us -uc -b) >"$tmp/build.log" 2>&1; then
	tail -n 40 "$tmp/build.log" >&2
	echo "packages-test.sh: dpkg-buildpackage failed" >&2
	exit 1
fi
changes=$(ls "$tmp"/libusdt_*.changes)
debs=()
for p in libusdt0 libusdt-dev usdt-tools; do
	deb=$(ls "$tmp/${p}"_*.deb)
	debs+=("$(basename "$deb")")
	echo "$(basename "$deb"): $(dpkg-deb -f "$deb" Depends)"
done

# 2. lintian: errors fail, the rest is shown.
step "lintian $(basename "$dsc") $(basename "$changes")"
# Its status: 0 clean, 1 errors, more when it could not check.
lstatus=0
lintian --display-info --pedantic "$dsc" "$changes" >"$tmp/lintian.out" 2>&1 || lstatus=$?
grep -v '^running with root privileges' "$tmp/lintian.out" >"$tmp/lintian.log" || :
if [ -s "$tmp/lintian.log" ]; then cat "$tmp/lintian.log"; else echo "(nothing)"; fi
if [ "$lstatus" -gt 1 ] || grep -q '^E: ' "$tmp/lintian.log"; then
	echo "packages-test.sh: lintian reports errors (status $lstatus)" >&2
	exit 1
fi

# 3. Install and use them in a clean chroot. The script below runs there,
# the .debs' tar on its stdin.
step "installing into a throwaway $suite chroot"
inner=$(cat <<'CHROOT'
set -euo pipefail
fail() { echo "packages-test.sh (chroot): $*" >&2; exit 1; }
step() { printf "\n== (chroot) %s\n" "$*"; }

mkdir -p /tmp/debs /tmp/ex
tar xf - -C /tmp/debs
exec </dev/null
. /etc/os-release
echo "$PRETTY_NAME, kernel $(uname -r)"

apt-get update -qq
step "apt-get install ./$1 ./$2 ./$3"
(cd /tmp/debs && apt-get install -y -qq --no-install-recommends \
	"./$1" "./$2" "./$3" >/tmp/apt.log) || { cat /tmp/apt.log; fail "apt"; }
for p in libusdt0 libusdt-dev usdt-tools libbpf-dev libelf-dev zlib1g-dev; do
	s=$(dpkg-query -W -f="\${Package} \${Version} \${Status}" "$p")
	echo "$s"
	[[ $s == *" install ok installed" ]] || fail "$p is not installed"
done

step "the installed files"
ma=$(dpkg-query -L libusdt0 | sed -n "s|^/usr/lib/\([^/]*\)/libusdt\.so\.0$|\1|p")
[ -n "$ma" ] || fail "no /usr/lib/*/libusdt.so.0 in libusdt0"
for f in /usr/lib/$ma/libusdt.so.0 /usr/lib/$ma/libusdt.so /usr/lib/$ma/libusdt.a \
	/usr/lib/$ma/pkgconfig/libusdt.pc /usr/include/usdt/usdt.h \
	/usr/include/usdt/usdt_version.h /usr/include/usdt/usdt.bpf.h \
	/usr/include/usdt/usdt_impl.bpf.h /usr/include/usdt/usdt_spec.h \
	/usr/bin/usdt /usr/share/man/man1/usdt.1.gz; do
	[ -e "$f" ] || fail "$f is missing"
	echo "$f"
done
zcat /usr/share/man/man1/usdt.1.gz >/tmp/usdt.1
grep -q "^\.TH USDT 1" /tmp/usdt.1 || fail "usdt.1 is no man page"
usdt --version

step "building libusdt-dev's examples with their Makefile.standalone"
apt-get install -y -qq --no-install-recommends gcc libc6-dev make pkg-config \
	clang bpftool systemtap-sdt-dev >/tmp/apt.log || { cat /tmp/apt.log; fail "apt"; }
echo "pkg-config libusdt $(pkg-config --modversion libusdt):" \
	"$(pkg-config --cflags --libs libusdt)"
exdir=/usr/share/doc/libusdt-dev/examples
ls "$exdir"
cp "$exdir"/* /tmp/ex/
cp -a /tmp/ex /tmp/ex-static
make -s -C /tmp/ex -f Makefile.standalone
make -s -C /tmp/ex-static -f Makefile.standalone LIBUSDT_STATIC=1 hello target
# (/lib is /usr/lib: merged /usr.)
ldd /tmp/ex/hello >/tmp/ldd.out
grep -E "libusdt\.so\.0 => (/usr)?/lib/$ma/libusdt\.so\.0 " /tmp/ldd.out ||
	fail "hello is not linked with the installed libusdt.so.0"
ldd /tmp/ex-static/hello >/tmp/ldd.out
! grep -q libusdt /tmp/ldd.out || fail "the static hello uses libusdt.so"
cd /tmp/ex

step "usdt list ./target"
usdt list ./target | tee /tmp/list.out
for probe in hello:greet hello:farewell; do
	grep -q "^$probe " /tmp/list.out || fail "usdt list: no $probe"
done

step "usdt trace -n 3 -c ./target ./target hello:greet \"#%d %s\""
usdt trace -n 3 -c ./target ./target hello:greet "#%d %s" | tee /tmp/trace.out
for hit in "#1 world" "#2 bpf" "#3 usdt"; do
	grep -Eq "^[0-9]+ [0-9]+ [0-9]+ target hello:greet $hit$" /tmp/trace.out ||
		fail "usdt trace: no hit \"$hit\""
done

for prog in ./hello ./hello_skel /tmp/ex-static/hello; do
	step "$prog (attaches to the target next to it, runs it)"
	"$prog" | tee /tmp/hello.out
	for hit in "#1: \"world\"" "#2: \"bpf\"" "#3: \"usdt\""; do
		grep -Eq "^hello(_skel)?: pid [0-9]+ greeted $hit$" /tmp/hello.out ||
			fail "$prog: no greeting $hit"
	done
done
step "./counters (per-attach storage, counters read in place)"
./counters | tee /tmp/counters.out
grep -q "^counters: hello:greet site 0: 3 hits, 2 counted" /tmp/counters.out ||
	fail "counters: no hello:greet count"

step "README.md's Example, followed literally in an empty directory"
apt-get install -y -qq --no-install-recommends sudo >/tmp/apt.log ||
	{ cat /tmp/apt.log; fail "apt"; }
cd /src
lab/readme-example.sh README.md || fail "README.md's Example"
echo
echo "packages-test.sh (chroot): all checks passed"
CHROOT
)
(cd "$tmp" && tar cf - "${debs[@]}") |
	USDT_CHROOT_SCRATCH=1 "$here/chroot.sh" run "$suite" \
		bash -c "$inner" bash "${debs[@]}"

step "done: the packages build, pass lintian, install and trace"
