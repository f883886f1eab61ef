#!/bin/bash
# Install libusdt into a temporary DESTDIR, then build and run a tiny
# consumer through pkg-config, once against the static library and once
# against the shared one. Also checks that the shared library exports
# exactly the symbols of src/libusdt.map.
set -euo pipefail
cd "$(dirname "$0")/.."

dest=$(mktemp -d)
trap 'rm -rf "$dest"' EXIT
prefix=/usr
make --no-print-directory install DESTDIR="$dest" PREFIX="$prefix" >/dev/null

export PKG_CONFIG_SYSROOT_DIR="$dest"
export PKG_CONFIG_PATH="$dest$prefix/lib/pkgconfig"
pcdir="$dest$prefix/lib/pkgconfig"
test -f "$pcdir/libusdt.pc"
# Every public header under <usdt/...>, none loose in includedir, where
# another project's usdt.h could be.
for h in usdt.h usdt_version.h usdt.bpf.h usdt_impl.bpf.h usdt_spec.h; do
	test -f "$dest$prefix/include/usdt/$h"
	if [ -e "$dest$prefix/include/$h" ]; then
		echo "consumer: $h installed outside include/usdt/" >&2
		exit 1
	fi
done

cat > "$dest/consumer.c" <<'C'
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <usdt/usdt.h>

int main(void)
{
	char buf[64];
	struct usdt_file *f = usdt_file__open("/nonexistent/file", NULL);

	if (f || errno != ENOENT) {
		fprintf(stderr, "consumer: expected ENOENT, got %s\n",
			usdt_strerror(errno, buf, sizeof(buf)));
		return 1;
	}
	printf("consumer: libusdt %d.%d works (%s)\n", USDT_MAJOR_VERSION,
	       USDT_MINOR_VERSION, usdt_strerror(-ENOENT, buf, sizeof(buf)));
	return 0;
}
C

# Shared.
cc "$dest/consumer.c" -o "$dest/consumer-shared" \
	$(pkg-config --cflags --libs libusdt)
LD_LIBRARY_PATH="$dest$prefix/lib" "$dest/consumer-shared"
# The binary must really use libusdt.so.
LD_LIBRARY_PATH="$dest$prefix/lib" ldd "$dest/consumer-shared" | grep 'libusdt.so.0 => '"$dest" >/dev/null

# Static.
cc "$dest/consumer.c" -o "$dest/consumer-static" \
	$(pkg-config --cflags libusdt) "$dest$prefix/lib/libusdt.a" \
	$(pkg-config --libs --static libusdt | sed 's/-lusdt//')
"$dest/consumer-static"
if ldd "$dest/consumer-static" | grep libusdt >/dev/null; then
	echo "consumer-static links libusdt.so" >&2
	exit 1
fi

# The examples, both sides, built from a copy of examples/ by its
# Makefile.standalone against the installed headers and library only.
cp examples/*.c examples/*.h examples/Makefile.standalone "$dest/"
make --no-print-directory -s -C "$dest" -f Makefile.standalone \
	hello hello_skel >/dev/null
test -x "$dest/hello" && test -x "$dest/hello_skel"

# Exports: exactly the names in the version script.
want=$(sed -n 's/^\t\t\(usdt_[a-z0-9_]*\);$/\1/p' src/libusdt.map | sort)
have=$(nm -D --defined-only "$dest$prefix/lib/libusdt.so" |
	awk '{print $3}' | sed 's/@.*//' | grep -v '^LIBUSDT_' | sort)
if [ "$want" != "$have" ]; then
	echo "exported symbols differ from src/libusdt.map:" >&2
	diff <(echo "$want") <(echo "$have") >&2 || true
	exit 1
fi
echo "consumer: static and shared builds work; $(echo "$have" | wc -l) symbols exported, all in the map"
