#!/bin/sh
# Regenerate the seed corpus of fuzz_note (tests/fuzz/corpus/fuzz_note/):
# small ELF files, so that the fuzzer mutates headers and notes rather
# than page padding. Run from the top of the tree after `make fixtures`
# (for build/fixtures/include/sys/sdt.h).
#
#   built-*  files written by tests/unit/elf_builder.h: two PT_LOADs,
#            notes with symbol, GOT and index operands, .symtab, .dynsym,
#            .rela.dyn; x86_64 and aarch64/riscv64 little-endian, s390x
#            big-endian.
#   tiny-*   tests/fixtures/shapes_sema.c linked with -nostdlib and a
#            16-byte page size: real compiler and linker output, ~1 KB.
set -e
out=tests/fuzz/corpus/fuzz_note
inc=build/fixtures/include
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$out"

cat > "$tmp/gen.c" <<'EOC'
#include <stdio.h>
#include "elf_builder.h"

static struct elfb e;
static struct elfb_notes n;

static void dump(const char *dir, const char *name)
{
	char path[512];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "wb");
	fwrite(e.buf, 1, e.len, f);
	fclose(f);
}

int main(int argc, char **argv)
{
	int be;

	for (be = 0; be < 2; be++) {
		memset(&n, 0, sizeof(n));
		n.be = be;
		elfb_probe(&n, ELFB_TEXT_VA, ELFB_BASE_VA, 0, "prov", "a",
			   be ? "-4@%r2 8@8(%r15) -8@16(%r1,%r2)" :
				"-4@%edi 8@counter(%rip) 8@ext_var@GOTPCREL(%rip) "
				"-4@dup(%rip) -4@4+counter(%rip) -8@g(,%rax,8)");
		elfb_probe(&n, ELFB_TEXT_VA + 1, ELFB_BASE_VA, ELFB_PROBES_VA,
			   "prov", "sema", "");
		elfb_probe(&n, ELFB_TEXT_VA + 2, ELFB_BASE_VA - 0x10, 0, "prov",
			   "prelinked", be ? "1@97 -2@-300" :
			   "-1@$97 8@$counter -2@-300(%rbp,%rbx,2)");
		elfb_build(&e, be, be ? EM_S390 : EM_X86_64, ET_DYN, &n);
		dump(argv[1], be ? "built-s390x" : "built-x86_64");
	}
	memset(&n, 0, sizeof(n));
	elfb_probe(&n, ELFB_TEXT_VA, ELFB_BASE_VA, 0, "p", "arm",
		   "-4@[sp, 12] 8@x0 -8@[x1, 48]");
	elfb_probe(&n, ELFB_TEXT_VA + 4, ELFB_BASE_VA, 0, "p", "rv",
		   "-4@-20(s0) 8@a0");
	elfb_build(&e, 0, EM_AARCH64, ET_EXEC, &n);
	dump(argv[1], "built-aarch64");
	elfb_build(&e, 0, EM_RISCV, ET_EXEC, &n);
	dump(argv[1], "built-riscv64");
	return 0;
}
EOC
gcc -Itests/unit "$tmp/gen.c" -o "$tmp/gen"
"$tmp/gen" "$out"

tiny="-O2 -Itests/fixtures -I$inc -nostdlib -Wl,--build-id=none \
	-Wl,-z,max-page-size=16 -Wl,-z,noseparate-code \
	-fno-asynchronous-unwind-tables"
for a in x86_64 aarch64 s390x riscv64; do
	cc=$a-linux-gnu-gcc
	[ "$(gcc -dumpmachine | cut -d- -f1)" = "$a" ] && cc=gcc
	command -v "$cc" >/dev/null || continue
	# shellcheck disable=SC2086
	$cc $tiny -static -fno-pie -no-pie -Wl,-e,shapes_sema_run \
		tests/fixtures/shapes_sema.c -o "$out/tiny-$a"
	strip -R .comment "$out/tiny-$a"
done
# shellcheck disable=SC2086
gcc $tiny -shared -fPIC tests/fixtures/shapes_sema.c -o "$out/tiny-x86_64.so"
du -sh "$out"
