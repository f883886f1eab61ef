// SPDX-License-Identifier: BSD-2-Clause
/*
 * The reader against real compilers: every fixture built by
 * tests/fixtures/fixtures.mk (gcc, clang, cross gcc for aarch64, s390x and
 * riscv64; -O0/-O2/-O3; PIE, no-PIE, shared; the "g" constraint) is opened
 * and compared, call site by call site, with what binutils' readelf -n
 * says, and with the bytes of the file: each call site's file offset must
 * hold a nop, each semaphore must be the symbol <sys/sdt.h> names.
 *
 * Every argument must parse to something readable, except the ones listed
 * in expected_unsupported[] below, each with the reason the compiler's
 * output cannot be read. An argument whose reason says "not built yet"
 * is counted and reported, not failed: that was a stub parser's reason.
 * All four parsers are built now and no source gives that reason, so the
 * count ("wait for an arch parser") is 0; it stays for a fifth arch.
 *
 * The fixtures are found in $USDT_FIXTURE_DIR, else in ../../fixtures
 * from this program (build/tests/unit/ -> build/fixtures/).
 */
#include <dirent.h>
#include <elf.h>
#include <libgen.h>
#include <limits.h>
#include <sys/stat.h>

#include "test_util.h"
#include "base/internal.h"
#include "reader/arch_ops.h"
#include "compact_check.h"

/*
 * Arguments the compilers emit in a form that cannot be read from a
 * uprobe. None so far: <sys/sdt.h>'s default "nor" constraint keeps every
 * operand out of floating-point and vector registers (floats arrive in
 * general registers or memory, e.g. x86 "4f@%eax"), and a 16-byte
 * __int128 in a register pair reads as its low half (USDT_SPEC_F_TRUNC).
 * An entry names the architecture (NULL: any), a fixture-name substring
 * (NULL: any), the probe, the argument (-1: any) and why.
 */
struct unsupported_rule {
	const char *arch;
	const char *fixture;
	const char *probe;
	int arg;
	const char *why;
};

static const struct unsupported_rule expected_unsupported[] = {
	/* anchor.c: only the adrp precedes the site. */
	{ "aarch64", "anchor", "only", 0,
	  "section anchor .LANCHOR1: no instruction before the site gives its low 12 bits" },
	/* anchor.c in a shared library: the anchor's register lives across
	 * a call through the PLT. */
	{ "aarch64", "anchor.so", "call", 0,
	  "section anchor .LANCHOR1: its base register is not set by adrp/lui in straight-line code" },
	/* The "g" constraint writes an anchored object's address as the
	 * bare label: no instruction goes with it. */
	{ "riscv64", "constraint-g", "pointers", 3,
	  "section anchor .LANCHOR0: its address is not in the file" },
	{ "riscv64", "constraint-g", "addresses", 0,
	  "section anchor .LANCHOR0: its address is not in the file" },
	{ NULL, NULL, NULL, 0, NULL },
};

static char fixture_dir[PATH_MAX];

/* One stapsdt note as readelf prints it. */
struct re_note {
	char provider[128];
	char name[128];
	uint64_t location, base, semaphore;
	char args[1024];
};

static char *skip_prefix(char *line, const char *prefix)
{
	while (*line == ' ')
		line++;
	if (strncmp(line, prefix, strlen(prefix)))
		return NULL;
	return line + strlen(prefix);
}

static void chomp(char *s)
{
	size_t n = strlen(s);

	while (n && (s[n - 1] == '\n' || s[n - 1] == '\r'))
		s[--n] = '\0';
}

/* Run readelf -n and collect the stapsdt notes, in file order. */
static size_t readelf_notes(const char *path, struct re_note **out)
{
	char cmd[PATH_MAX * 3], line[2048], *v;
	struct re_note *notes = NULL, *n = NULL;
	size_t cnt = 0;
	FILE *fp;

	snprintf(cmd, sizeof(cmd), "LC_ALL=C readelf -n --wide '%s'", path);
	fp = popen(cmd, "r");
	assert_non_null(fp);
	while (fgets(line, sizeof(line), fp)) {
		chomp(line);
		/* With --wide, "Provider:" shares the owner's line. */
		if ((v = strstr(line, "\tProvider: ")) ||
		    (v = strstr(line, " Provider: "))) {
			v = strstr(v, ": ") + 2;
			notes = realloc(notes, (cnt + 1) * sizeof(*notes));
			assert_non_null(notes);
			n = &notes[cnt++];
			memset(n, 0, sizeof(*n));
			snprintf(n->provider, sizeof(n->provider), "%s", v);
		} else if (n && (v = skip_prefix(line, "Name: "))) {
			snprintf(n->name, sizeof(n->name), "%s", v);
		} else if (n && (v = skip_prefix(line, "Location: "))) {
			unsigned long long loc, base, sema;

			assert_int_equal(sscanf(v, "%llx, Base: %llx, Semaphore: %llx",
						&loc, &base, &sema), 3);
			n->location = loc;
			n->base = base;
			n->semaphore = sema;
		} else if (n && (v = skip_prefix(line, "Arguments:"))) {
			if (*v == ' ')
				v++;
			snprintf(n->args, sizeof(n->args), "%s", v);
			n = NULL;
		}
	}
	assert_int_equal(pclose(fp), 0);
	*out = notes;
	return cnt;
}

/* The address nm gives a symbol, or 0. */
static uint64_t nm_symbol(const char *path, const char *sym)
{
	char cmd[PATH_MAX * 3], line[1024], name[512], type;
	unsigned long long addr, found = 0;
	FILE *fp;

	snprintf(cmd, sizeof(cmd), "LC_ALL=C nm '%s' 2>/dev/null", path);
	fp = popen(cmd, "r");
	assert_non_null(fp);
	while (fgets(line, sizeof(line), fp)) {
		if (sscanf(line, "%llx %c %511s", &addr, &type, name) == 3 &&
		    !strcmp(name, sym))
			found = addr;
	}
	pclose(fp);
	return found;
}

/*
 * anchor.c's probes: an argument written relative to a compiler-local
 * label (".LANCHOR0") that was read must add exactly the low 12 bits of
 * the static it reads (from nm) to its base register, which holds that
 * address's page. The probe's second argument names the static. Returns
 * how many such arguments were read.
 */
static size_t check_anchor(const char *path, const struct usdt_probe *p)
{
	struct usdt_arg_info a = { .sz = sizeof(a) }, which = { .sz = sizeof(a) };
	uint64_t addr;

	if (usdt_probe__arg_cnt(p) != 2 ||
	    usdt_probe__arg(p, 0, &a) || usdt_probe__arg(p, 1, &which))
		fail_msg("%s: %s: not anchor.c's two arguments", path,
			 usdt_probe__name(p));
	assert_int_equal(which.kind, USDT_ARG_CONST);
	addr = nm_symbol(path, which.value == 1 ? "s_first" : "z_first");
	assert_int_not_equal(addr, 0);
	/* riscv64 -no-pie "%lo(s_first)(a5)": the linker relaxed the lui
	 * away (gp-relative loads), so a5 is not read: s_first is. */
	if (strstr(a.str, "%lo(") && !strstr(a.str, ".L")) {
		assert_int_equal(a.kind, USDT_ARG_ABS);
		assert_null(a.read_reg);
		assert_int_equal(a.offset, addr);
		return 0;
	}
	if (!strstr(a.str, ".L") || a.kind == USDT_ARG_UNSUPPORTED)
		return 0;
	assert_int_equal(a.kind, USDT_ARG_DEREF);
	if (a.offset != (int64_t)(addr & 0xfff))
		fail_msg("%s: %s: '%s' adds %lld, the static is at 0x%llx",
			 path, usdt_probe__name(p), a.str, (long long)a.offset,
			 (unsigned long long)addr);
	return 1;
}

/* Does the file hold the arch's nop at off? */
static bool is_nop(int machine, const unsigned char *p, size_t avail)
{
	switch (machine) {
	case EM_X86_64:
		return avail >= 1 && p[0] == 0x90;
	case EM_AARCH64:	/* hint #0, little-endian */
		return avail >= 4 && !memcmp(p, "\x1f\x20\x03\xd5", 4);
	case EM_S390:		/* nop 0 = bc 0,0 */
		return avail >= 4 && !memcmp(p, "\x47\x00\x00\x00", 4);
	case EM_RISCV:		/* addi x0,x0,0, or c.nop */
		return (avail >= 4 && !memcmp(p, "\x13\x00\x00\x00", 4)) ||
		       (avail >= 2 && !memcmp(p, "\x01\x00", 2));
	default:
		return false;
	}
}

static unsigned char *slurp(const char *path, size_t *len)
{
	unsigned char *buf;
	struct stat st;
	FILE *fp = fopen(path, "rb");

	assert_non_null(fp);
	assert_int_equal(fstat(fileno(fp), &st), 0);
	buf = malloc((size_t)st.st_size + 1);
	assert_non_null(buf);
	assert_int_equal(fread(buf, 1, (size_t)st.st_size, fp),
			 (size_t)st.st_size);
	fclose(fp);
	*len = (size_t)st.st_size;
	return buf;
}

static const struct unsupported_rule *find_rule(const char *arch,
						const char *fixture,
						const char *probe, int arg)
{
	const struct unsupported_rule *r;

	for (r = expected_unsupported; r->why; r++) {
		if ((!r->arch || !strcmp(r->arch, arch)) &&
		    (!r->fixture || strstr(fixture, r->fixture)) &&
		    !strcmp(r->probe, probe) && (r->arg < 0 || r->arg == arg))
			return r;
	}
	return NULL;
}

/* Totals over all fixtures, printed at the end. */
static size_t total_sites, total_args, total_pending;
static size_t kind_cnt[USDT_ARG_UNSUPPORTED + 1];

static void check_args(const char *fixture, const char *arch,
		       const struct usdt_probe *p, size_t *pending)
{
	char joined[1024] = "";
	int i, cnt = usdt_probe__arg_cnt(p);

	for (i = 0; i < cnt; i++) {
		struct usdt_arg_info info = { .sz = sizeof(info) };
		const struct unsupported_rule *rule;
		const char *at;
		int size;

		assert_int_equal(usdt_probe__arg(p, i, &info), 0);
		if (i)
			strcat(joined, " ");
		strncat(joined, info.str, sizeof(joined) - strlen(joined) - 1);

		/* The size prefix is what the splitter says. */
		at = strchr(info.str, '@');
		assert_non_null(at);
		size = abs(atoi(info.str));
		if (size != info.size)
			fail_msg("%s: %s:%s arg %d '%s': size %d", fixture,
				 usdt_probe__provider(p), usdt_probe__name(p),
				 i, info.str, info.size);
		assert_int_equal(info.is_signed, info.str[0] == '-');

		total_args++;
		kind_cnt[info.kind <= USDT_ARG_UNSUPPORTED ? info.kind :
			 USDT_ARG_UNSUPPORTED]++;
		if (info.kind != USDT_ARG_UNSUPPORTED)
			continue;
		assert_non_null(info.reason);
		if (strstr(info.reason, "not built yet")) {
			(*pending)++;
			continue;
		}
		rule = find_rule(arch, fixture, usdt_probe__name(p), i);
		if (!rule || strcmp(info.reason, rule->why))
			fail_msg("%s: %s:%s arg %d '%s' unsupported: %s",
				 fixture, usdt_probe__provider(p),
				 usdt_probe__name(p), i, info.str,
				 info.reason);
	}
	/* The arguments cover the whole string, in order. */
	if (strcmp(joined, usdt_probe__args_str(p)))
		fail_msg("%s: %s:%s: args '%s' split as '%s'", fixture,
			 usdt_probe__provider(p), usdt_probe__name(p),
			 usdt_probe__args_str(p), joined);
}

static void test_fixture(void **state)
{
	const char *name = *state;
	char path[PATH_MAX * 2], sema_sym[300];
	struct re_note *notes = NULL;
	struct usdt_file *f;
	unsigned char *bytes;
	size_t cnt, i, len, pending = 0, anchored = 0;
	const char *arch;

	snprintf(path, sizeof(path), "%s/%s", fixture_dir, name);
	f = usdt_file__open(path, NULL);
	if (!f)
		fail_msg("%s: cannot open: %s", path, strerror(errno));
	arch = usdt_file__arch_name(f);
	assert_non_null(arch);
	assert_int_equal(usdt_file__is_dyn(f), !strstr(name, "nopie"));

	cnt = readelf_notes(path, &notes);
	/* shapes.c and shapes_sema.c have 26 call sites between them
	 * (fewer where a compiler does not inline a call site twice);
	 * anchor.c has 3. */
	if (strstr(name, "anchor") ? cnt != 3 : cnt < 25)
		fail_msg("%s: readelf shows %zu stapsdt notes", path, cnt);
	assert_int_equal(usdt_file__probe_cnt(f), cnt);
	bytes = slurp(path, &len);

	for (i = 0; i < cnt; i++) {
		const struct usdt_probe *p = usdt_file__probe(f, i);
		const struct re_note *n = &notes[i];
		uint64_t off = usdt_probe__file_offset(p);

		if (usdt_probe__status(p))
			fail_msg("%s: site %zu %s:%s: status %d: %s", name, i,
				 n->provider, n->name, usdt_probe__status(p),
				 usdt_probe__error(p));
		assert_string_equal(usdt_probe__provider(p), n->provider);
		assert_string_equal(usdt_probe__name(p), n->name);
		assert_string_equal(usdt_probe__args_str(p), n->args);
		/* Not prelinked: the note's base is .stapsdt.base's. */
		assert_int_equal(usdt_probe__address(p), n->location);
		assert_int_equal(usdt_probe__semaphore(p), n->semaphore);

		if (off >= len || !is_nop(usdt_file__machine(f), bytes + off,
					  len - off))
			fail_msg("%s: %s:%s: no nop at file offset 0x%llx",
				 name, n->provider, n->name,
				 (unsigned long long)off);

		if (!strcmp(n->provider, "shapes_sema")) {
			uint64_t soff = usdt_probe__semaphore_offset(p);

			snprintf(sema_sym, sizeof(sema_sym), "%s_%s_semaphore",
				 n->provider, n->name);
			assert_int_not_equal(n->semaphore, 0);
			assert_int_equal(n->semaphore, nm_symbol(path, sema_sym));
			/* Two bytes of zero in the file, in .probes. */
			assert_true(soff && soff + 2 <= len);
			assert_int_equal(bytes[soff] | bytes[soff + 1], 0);
		} else {
			assert_int_equal(n->semaphore, 0);
			assert_int_equal(usdt_probe__semaphore_offset(p), 0);
		}
		check_args(name, arch, p, &pending);
		if (strstr(name, "anchor"))
			anchored += check_anchor(path, p);
	}
	/* The old reader refused every anchored argument: arm64 reads two
	 * of anchor.c's three in an executable, one in a library. */
	if (strstr(name, "aarch64") && strstr(name, "anchor"))
		assert_int_equal(anchored, strstr(name, ".so") ? 1 : 2);
	total_sites += cnt;
	total_pending += pending;
	if (pending)
		printf("  %s (%s): %zu of the arguments wait for the %s parser\n",
		       name, arch, pending, arch);
	compact_check(path, f, 0);
	free(bytes);
	free(notes);
	usdt_file__close(f);
}

static int cmp_names(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static void find_fixture_dir(void)
{
	char exe[PATH_MAX];
	const char *env = getenv("USDT_FIXTURE_DIR");
	ssize_t n;

	if (env) {
		snprintf(fixture_dir, sizeof(fixture_dir), "%s", env);
		return;
	}
	n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (n < 0) {
		snprintf(fixture_dir, sizeof(fixture_dir), "build/fixtures");
		return;
	}
	exe[n] = '\0';
	snprintf(fixture_dir, sizeof(fixture_dir), "%s/../../fixtures",
		 dirname(exe));
}

int main(void)
{
	static const char *const required[] = {
		"gcc-O0", "gcc-O2", "gcc-O2-nopie", "gcc-O2-shared.so",
	};
	struct CMUnitTest *tests;
	char **names = NULL;
	size_t cnt = 0, i, k;
	struct dirent *de;
	DIR *dir;
	int ret;

	find_fixture_dir();
	dir = opendir(fixture_dir);
	if (!dir) {
		printf("no fixture directory %s: run `make fixtures`\n",
		       fixture_dir);
		return 1;
	}
	while ((de = readdir(dir))) {
		char p[PATH_MAX * 2];
		struct stat st;

		snprintf(p, sizeof(p), "%s/%s", fixture_dir, de->d_name);
		if (de->d_name[0] == '.' || stat(p, &st) || !S_ISREG(st.st_mode))
			continue;
		names = realloc(names, (cnt + 1) * sizeof(*names));
		names[cnt++] = strdup(de->d_name);
	}
	closedir(dir);
	qsort(names, cnt, sizeof(*names), cmp_names);
	for (k = 0; k < USDT__ARRAY_SIZE(required); k++) {
		for (i = 0; i < cnt && strcmp(names[i], required[k]); i++)
			;
		if (i == cnt) {
			printf("fixture %s/%s is missing: run `make fixtures`\n",
			       fixture_dir, required[k]);
			return 1;
		}
	}

	tests = calloc(cnt, sizeof(*tests));
	for (i = 0; i < cnt; i++) {
		tests[i].name = names[i];
		tests[i].test_func = test_fixture;
		tests[i].initial_state = names[i];
	}
	ret = _cmocka_run_group_tests("fixtures", tests, cnt, NULL, NULL);

	printf("%zu fixtures, %zu call sites, %zu arguments: ", cnt,
	       total_sites, total_args);
	for (k = 0; k <= USDT_ARG_UNSUPPORTED; k++)
		if (kind_cnt[k])
			printf("%s %zu, ", usdt_arg_kind_str(k), kind_cnt[k]);
	printf("of which %zu wait for an arch parser\n", total_pending);
	for (i = 0; i < cnt; i++)
		free(names[i]);
	free(names);
	free(tests);
	return ret;
}
