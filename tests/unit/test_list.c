// SPDX-License-Identifier: BSD-2-Clause
/*
 * `usdt list`, run as a user would run it, on tests/fixtures/list_fixture:
 * its text and JSON outputs checked field by field against what readelf
 * says about the same file, its patterns, its errors, and -p on this very
 * test process. No root needed. x86_64 hosts (the fixture's hand-written
 * argument strings are x86_64 operands).
 */
#include <sys/sdt.h>

#include <fcntl.h>
#include <unistd.h>

#include "test_util.h"
#include "tool_run.h"
#include "elf_builder.h"

#define FIXTURE FIXTURE_DIR "/list_fixture"
#define USDT__TEST_ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

/* ---------------------------------------------------------------------- */
/* What readelf says                                                      */

struct note_site {
	char provider[32], name[32], args[256];
	unsigned long long loc, sema;
};

struct load_seg {
	unsigned long long off, vaddr, filesz;
};

static struct note_site sites[32];
static int site_cnt;
static struct load_seg segs[8];
static int seg_cnt;

static char *slurp_cmd(const char *cmd)
{
	char *buf = NULL;
	size_t len = 0;
	char chunk[4096];
	size_t n;
	FILE *f = popen(cmd, "r");

	if (!f)
		return NULL;
	while ((n = fread(chunk, 1, sizeof(chunk), f)) > 0)
		run_append(&buf, &len, chunk, n);
	pclose(f);
	return buf;
}

static void read_fixture_facts(void)
{
	char *notes = slurp_cmd("readelf -nW " FIXTURE);
	char *phdrs = slurp_cmd("readelf -lW " FIXTURE);
	char *line, *save = NULL;

	assert_non_null(notes);
	assert_non_null(phdrs);
	site_cnt = 0;
	for (line = strtok_r(notes, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save)) {
		char *p;

		if ((p = strstr(line, "Provider: "))) {
			assert_true(site_cnt < 32);
			memset(&sites[site_cnt], 0, sizeof(sites[0]));
			snprintf(sites[site_cnt].provider, 32, "%s", p + 10);
			site_cnt++;
		} else if ((p = strstr(line, "Name: ")) && site_cnt) {
			snprintf(sites[site_cnt - 1].name, 32, "%s", p + 6);
		} else if ((p = strstr(line, "Location: ")) && site_cnt) {
			assert_int_equal(sscanf(p, "Location: %llx, Base: %*x, Semaphore: %llx",
						&sites[site_cnt - 1].loc,
						&sites[site_cnt - 1].sema), 2);
		} else if ((p = strstr(line, "Arguments:")) && site_cnt) {
			p += 10;
			if (*p == ' ')
				p++;
			snprintf(sites[site_cnt - 1].args, 256, "%s", p);
			/* readelf pads an empty list with a blank. */
			while (*sites[site_cnt - 1].args &&
			       sites[site_cnt - 1].args[strlen(sites[site_cnt - 1].args) - 1] == ' ')
				sites[site_cnt - 1].args[strlen(sites[site_cnt - 1].args) - 1] = '\0';
		}
	}
	seg_cnt = 0;
	for (line = strtok_r(phdrs, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save)) {
		struct load_seg s;

		if (sscanf(line, " LOAD 0x%llx 0x%llx 0x%*x 0x%llx", &s.off,
			   &s.vaddr, &s.filesz) == 3 && seg_cnt < 8)
			segs[seg_cnt++] = s;
	}
	free(notes);
	free(phdrs);
	assert_int_equal(site_cnt, 11);
	assert_true(seg_cnt >= 2);
}

static unsigned long long file_off(unsigned long long vaddr)
{
	int i;

	for (i = 0; i < seg_cnt; i++)
		if (vaddr >= segs[i].vaddr &&
		    vaddr < segs[i].vaddr + segs[i].filesz)
			return vaddr - segs[i].vaddr + segs[i].off;
	fail_msg("0x%llx is in no PT_LOAD segment", vaddr);
	return 0;
}

static unsigned long long symbol(const char *name)
{
	char cmd[256], *out;
	unsigned long long v = 0;

	snprintf(cmd, sizeof(cmd), "nm " FIXTURE " | grep ' %s$'", name);
	out = slurp_cmd(cmd);
	assert_non_null(out);
	assert_int_equal(sscanf(out, "%llx", &v), 1);
	free(out);
	return v;
}

static const struct note_site *find_site(const char *name, const char *args)
{
	int i;

	for (i = 0; i < site_cnt; i++)
		if (!strcmp(sites[i].name, name) &&
		    (!args || !strncmp(sites[i].args, args, strlen(args))))
			return &sites[i];
	fail_msg("no site %s in readelf's output", name);
	return NULL;
}

static int setup(void **state)
{
	read_fixture_facts();
	return 0;
}

/* ---------------------------------------------------------------------- */
/* Text output                                                            */

struct text_case {
	const char *name;
	const char *args_prefix;	/* picks one of two sites of a name */
	const char *decoded;		/* what follows "args: " */
};

static const struct text_case text_cases[] = {
	{ "regs", "-4@%edi",
	  "-4@%edi=int32 reg edi, 8@%rax=uint64 reg rax, -1@%al=int8 reg al, "
	  "2@%r10w=uint16 reg r10w" },
	{ "regs", "-4@%esi",
	  "-4@%esi=int32 reg esi, 8@%rbx=uint64 reg rbx, -1@%cl=int8 reg cl, "
	  "2@%r11w=uint16 reg r11w" },
	{ "mem", NULL,
	  "8@-16(%rbp)=uint64 mem[rbp-16], -4@8(%rsp)=int32 mem[rsp+8], "
	  "4@(%rax,%rbx,8)=uint32 mem[rax+rbx*8], "
	  "-8@-24(%rdx,%rcx,4)=int64 mem[rdx+rcx*4-24]" },
	{ "consts", NULL,
	  "-4@$-5=int32 const -5, 8@$123=uint64 const 123, "
	  "1@$255=uint8 const 255, -2@$-1=int16 const -1" },
	{ "floats", NULL,
	  "8f@-8(%rbp)=double mem[rbp-8], 4f@%xmm0=float unsupported (" },
	{ "twelve", NULL,
	  "1@%al=uint8 reg al, 2@%bx=uint16 reg bx, 4@%ecx=uint32 reg ecx, "
	  "8@%rdx=uint64 reg rdx, -1@%sil=int8 reg sil, -2@%di=int16 reg di, "
	  "-4@%r8d=int32 reg r8d, -8@%r9=int64 reg r9, 8@%r10=uint64 reg r10, "
	  "8@%r11=uint64 reg r11, 8@%r12=uint64 reg r12, 8@%r13=uint64 reg r13" },
	{ "thing", NULL, "8@%rdi=uint64 reg rdi" },
	/* Size-less registers: each as wide as its name, unsigned. */
	{ "bare", NULL,
	  "%eax=uint32 reg eax, %ax=uint16 reg ax, %al=uint8 reg al, "
	  "%ah=uint8 reg ah, %sil=uint8 reg sil, %r8w=uint16 reg r8w, "
	  "%r8d=uint32 reg r8d, %bp=uint16 reg bp" },
	{ "noargs", NULL, "none" },
	{ "gated", NULL, "-4@$7=int32 const 7" },
};

static void test_text_sites(void **state)
{
	struct run_result r;
	size_t i;

	assert_int_equal(run_tool(&r, "list", FIXTURE), 0);
	assert_string_equal(r.err, "");
	assert_int_equal(count_lines(r.out), site_cnt);

	for (i = 0; i < USDT__TEST_ARRAY_SIZE(text_cases); i++) {
		const struct text_case *c = &text_cases[i];
		const struct note_site *s = find_site(c->name, c->args_prefix);
		char key[128], want[128], *line;

		snprintf(key, sizeof(key), "args: %s", c->decoded);
		line = line_with(r.out, key);
		if (!line)
			fail_msg("no line with '%s' in:\n%s", key, r.out);
		snprintf(want, sizeof(want), "%s:%s ", s->provider, s->name);
		assert_true(!strncmp(line, want, strlen(want)));
		snprintf(want, sizeof(want), " 0x%llx ", s->loc);
		assert_non_null(strstr(line, want));
		snprintf(want, sizeof(want), " file 0x%llx ", file_off(s->loc));
		assert_non_null(strstr(line, want));
		if (s->sema)
			snprintf(want, sizeof(want), " sema 0x%llx ", s->sema);
		else
			snprintf(want, sizeof(want), " sema - ");
		assert_non_null(strstr(line, want));
		free(line);
	}
	run_result_free(&r);
}

static void test_text_global(void **state)
{
	const struct note_site *s = find_site("global", NULL);
	unsigned long long g = symbol("fixt_global"), pair = symbol("fixt_pair");
	struct run_result r;
	char want[256];

	assert_int_equal(run_tool(&r, "list", FIXTURE, "fixt:global"), 0);
	snprintf(want, sizeof(want),
		 "args: 8@fixt_global(%%rip)=uint64 mem[0x%llx pc-rel], "
		 "-8@fixt_pair+8(%%rip)=int64 mem[0x%llx pc-rel]\n",
		 g, pair + 8);
	assert_non_null(strstr(r.out, want));
	snprintf(want, sizeof(want), "fixt:global  0x%llx", s->loc);
	assert_true(!strncmp(r.out, want, strlen(want)));
	run_result_free(&r);
}

/* Every column starts at the same place on every line. */
static void test_text_aligned(void **state)
{
	static const char *const marks[] = { " file 0x", " sema ", " args: " };
	struct run_result r;
	size_t m;

	assert_int_equal(run_tool(&r, "list", FIXTURE), 0);
	for (m = 0; m < USDT__TEST_ARRAY_SIZE(marks); m++) {
		const char *line = r.out;
		long col = -1;

		while (*line) {
			const char *nl = strchr(line, '\n');
			const char *hit = strstr(line, marks[m]);

			assert_non_null(hit);
			assert_true(hit < nl);
			if (col < 0)
				col = hit - line;
			assert_int_equal(hit - line, col);
			line = nl + 1;
		}
	}
	run_result_free(&r);
}

/* ---------------------------------------------------------------------- */
/* JSON                                                                   */

struct json_case {
	const char *name;
	const char *args_prefix;
	/* The "args" array; %llx-free: PC-relative offsets are checked in
	 * test_json_global. */
	const char *args;
};

#define REG(sz, sg, r)                                                      \
	"{\"size\": " #sz ", \"signed\": " #sg ", \"float\": false, "      \
	"\"kind\": \"reg\", \"reg\": \"" r "\", \"index\": null, "          \
	"\"scale\": null, \"index_ext\": null, \"offset\": 0, "                 \
	"\"read_reg\": \"" r "\", \"read_offset\": 0, \"value\": null, "            \
	"\"reason\": null}"
#define CONST(sz, sg, v)                                                    \
	"{\"size\": " #sz ", \"signed\": " #sg ", \"float\": false, "      \
	"\"kind\": \"const\", \"reg\": null, \"index\": null, "             \
	"\"scale\": null, \"index_ext\": null, \"offset\": 0, "                 \
	"\"read_reg\": null, \"read_offset\": 0, \"value\": " #v ", "             \
	"\"reason\": null}"

static const struct json_case json_cases[] = {
	{ "regs", "-4@%edi",
	  "[" REG(4, true, "edi") ", " REG(8, false, "rax") ", "
	  REG(1, true, "al") ", " REG(2, false, "r10w") "]" },
	{ "mem", NULL,
	  "[{\"size\": 8, \"signed\": false, \"float\": false, "
	  "\"kind\": \"deref\", \"reg\": \"rbp\", \"index\": null, "
	  "\"scale\": null, \"index_ext\": null, \"offset\": -16, "
	  "\"read_reg\": \"rbp\", \"read_offset\": -16, \"value\": null, \"reason\": null}, "
	  "{\"size\": 4, \"signed\": true, \"float\": false, "
	  "\"kind\": \"deref\", \"reg\": \"rsp\", \"index\": null, "
	  "\"scale\": null, \"index_ext\": null, \"offset\": 8, "
	  "\"read_reg\": \"rsp\", \"read_offset\": 8, \"value\": null, \"reason\": null}, "
	  "{\"size\": 4, \"signed\": false, \"float\": false, "
	  "\"kind\": \"index\", \"reg\": \"rax\", \"index\": \"rbx\", "
	  "\"scale\": 8, \"index_ext\": null, \"offset\": 0, "
	  "\"read_reg\": \"rax\", \"read_offset\": 0, \"value\": null, \"reason\": null}, "
	  "{\"size\": 8, \"signed\": true, \"float\": false, "
	  "\"kind\": \"index\", \"reg\": \"rdx\", \"index\": \"rcx\", "
	  "\"scale\": 4, \"index_ext\": null, \"offset\": -24, "
	  "\"read_reg\": \"rdx\", \"read_offset\": -24, \"value\": null, \"reason\": null}]" },
	{ "consts", NULL,
	  "[" CONST(4, true, -5) ", " CONST(8, false, 123) ", "
	  CONST(1, false, 255) ", " CONST(2, true, -1) "]" },
	{ "thing", NULL, "[" REG(8, false, "rdi") "]" },
	{ "noargs", NULL, "[]" },
	{ "gated", NULL, "[" CONST(4, true, 7) "]" },
};

/* The site's fields up to its args, as usdt list --json must print them. */
static void site_head(const struct note_site *s, char *buf, size_t size)
{
	char sema[64];

	if (s->sema)
		snprintf(sema, sizeof(sema), "\"0x%llx\", \"semaphore_offset\": \"0x%llx\"",
			 s->sema, file_off(s->sema));
	else
		snprintf(sema, sizeof(sema), "null, \"semaphore_offset\": null");
	snprintf(buf, size,
		 "{\"provider\": \"%s\", \"name\": \"%s\", \"address\": \"0x%llx\", "
		 "\"file_offset\": \"0x%llx\", \"semaphore\": %s, "
		 "\"args_str\": \"%s\", \"error\": null, \"args\": ",
		 s->provider, s->name, s->loc, file_off(s->loc), sema, s->args);
}

static void test_json_sites(void **state)
{
	struct run_result r;
	char head[1024], want[4096];
	size_t i;
	int k;

	assert_int_equal(run_tool(&r, "list", "--json", FIXTURE), 0);
	assert_string_equal(r.err, "");
	/* One object, with the file and the architecture first. */
	snprintf(want, sizeof(want), "{\"file\": \"%s\", \"arch\": \"x86_64\", "
		 "\"probes\": [", FIXTURE);
	assert_true(!strncmp(r.out, want, strlen(want)));
	assert_non_null(strstr(r.out, "\n]}\n"));
	assert_int_equal(r.out[r.out_len - 1], '\n');

	/* Every site readelf knows, with its addresses and offsets. */
	for (k = 0; k < site_cnt; k++) {
		site_head(&sites[k], head, sizeof(head));
		if (!strstr(r.out, head))
			fail_msg("missing:\n%s\nin:\n%s", head, r.out);
	}
	/* The decoded arguments. */
	for (i = 0; i < USDT__TEST_ARRAY_SIZE(json_cases); i++) {
		const struct json_case *c = &json_cases[i];

		site_head(find_site(c->name, c->args_prefix), head,
			  sizeof(head));
		snprintf(want, sizeof(want), "%s%s}", head, c->args);
		if (!strstr(r.out, want))
			fail_msg("missing:\n%s\nin:\n%s", want, r.out);
	}
	run_result_free(&r);
}

static void test_json_special(void **state)
{
	const struct note_site *s = find_site("global", NULL);
	unsigned long long g = symbol("fixt_global"), pair = symbol("fixt_pair");
	struct run_result r;
	char want[512];

	assert_int_equal(run_tool(&r, "list", "--json", FIXTURE, "fixt:global",
				  "fixt:floats"), 0);
	/* PC-relative: offset from the call site to the symbol. */
	snprintf(want, sizeof(want),
		 "\"kind\": \"pcrel\", \"reg\": \"rip\", \"index\": null, "
		 "\"scale\": null, \"index_ext\": null, \"offset\": %lld, "
		 "\"read_reg\": \"rip\", \"read_offset\": %lld,",
		 (long long)(g - s->loc), (long long)(g - s->loc));
	assert_non_null(strstr(r.out, want));
	snprintf(want, sizeof(want),
		 "{\"size\": 8, \"signed\": true, \"float\": false, "
		 "\"kind\": \"pcrel\", \"reg\": \"rip\", \"index\": null, "
		 "\"scale\": null, \"index_ext\": null, \"offset\": %lld, "
		 "\"read_reg\": \"rip\", \"read_offset\": %lld, \"value\": null, "
		 "\"reason\": null}", (long long)(pair + 8 - s->loc),
		 (long long)(pair + 8 - s->loc));
	assert_non_null(strstr(r.out, want));
	/* Floats: a readable double and a vector register with a reason. */
	assert_non_null(strstr(r.out,
		"{\"size\": 8, \"signed\": false, \"float\": true, "
		"\"kind\": \"deref\", \"reg\": \"rbp\", \"index\": null, "
		"\"scale\": null, \"index_ext\": null, \"offset\": -8, "
		"\"read_reg\": \"rbp\", \"read_offset\": -8, \"value\": null, "
		"\"reason\": null}"));
	assert_non_null(strstr(r.out,
		"{\"size\": 4, \"signed\": false, \"float\": true, "
		"\"kind\": \"unsupported\", "));
	assert_null(strstr(r.out, "\"kind\": \"unsupported\", \"reg\": null, "
			   "\"index\": null, \"scale\": null, "
			   "\"index_ext\": null, \"offset\": 0, "
			   "\"read_reg\": null, \"read_offset\": 0, "
			   "\"value\": null, \"reason\": null"));
	/* Only the two probes asked for. */
	assert_null(strstr(r.out, "\"name\": \"regs\""));
	run_result_free(&r);
}

/*
 * The operand as written (reg, offset) and as read (read_reg, read_offset),
 * which differ for s390x 16-byte arguments (their low half is read), and
 * arm64 32-bit index extension, in JSON and in the text.
 */
static void test_written_and_read(void **state)
{
	static const struct {
		const char *file;
		const char *want[3];	/* in JSON */
		const char *text;
	} cases[] = {
		{ FIXTURE_DIR "/list_fixture_s390x",
		  { "\"kind\": \"reg\", \"reg\": \"r2\", \"index\": null, "
		    "\"scale\": null, \"index_ext\": null, \"offset\": 0, "
		    "\"read_reg\": \"r3\", \"read_offset\": 0,",
		    "\"kind\": \"deref\", \"reg\": \"r11\", \"index\": null, "
		    "\"scale\": null, \"index_ext\": null, \"offset\": -32, "
		    "\"read_reg\": \"r11\", \"read_offset\": -24,",
		    "\"kind\": \"index\", \"reg\": \"r4\", \"index\": \"r3\", "
		    "\"scale\": 1, \"index_ext\": null, \"offset\": 8, "
		    "\"read_reg\": \"r4\", \"read_offset\": 16," },
		  "-16@%r2=int128 reg r3, 16@-32(%r11)=uint128 mem[r11-24], "
		  "-16@8(%r3,%r4)=int128 mem[r4+r3*1+16]" },
		{ FIXTURE_DIR "/list_fixture_aarch64",
		  { "\"kind\": \"index\", \"reg\": \"x3\", \"index\": \"w0\", "
		    "\"scale\": 1, \"index_ext\": \"sxtw\", \"offset\": 0, "
		    "\"read_reg\": \"x3\", \"read_offset\": 0,",
		    "\"kind\": \"index\", \"reg\": \"x3\", \"index\": \"w1\", "
		    "\"scale\": 4, \"index_ext\": \"uxtw\", \"offset\": 0,",
		    "\"kind\": \"index\", \"reg\": \"x3\", \"index\": \"x1\", "
		    "\"scale\": 8, \"index_ext\": null, \"offset\": 0," },
		  "1@[x3, w0, sxtw]=uint8 mem[x3+sxtw(w0)*1], "
		  "-4@[x3, w1, uxtw 2]=int32 mem[x3+uxtw(w1)*4], "
		  "-8@[x3, x1, lsl 3]=int64 mem[x3+x1*8]" },
	};
	size_t i, k;

	for (i = 0; i < USDT__TEST_ARRAY_SIZE(cases); i++) {
		struct run_result r;

		assert_int_equal(run_tool(&r, "list", "--json", cases[i].file), 0);
		for (k = 0; k < 3; k++)
			if (!strstr(r.out, cases[i].want[k]))
				fail_msg("missing:\n%s\nin:\n%s", cases[i].want[k],
					 r.out);
		run_result_free(&r);
		assert_int_equal(run_tool(&r, "list", cases[i].file), 0);
		if (!strstr(r.out, cases[i].text))
			fail_msg("missing:\n%s\nin:\n%s", cases[i].text, r.out);
		run_result_free(&r);
	}
}

static void test_json_escape(void **state)
{
	/* Through the tool's JSON writer: a path with characters that need
	 * escaping, made as a symlink to the fixture. */
	char dir[] = "/tmp/usdt-list-XXXXXX", link[128], cwd[4096];
	struct run_result r;

	assert_non_null(mkdtemp(dir));
	assert_non_null(getcwd(cwd, sizeof(cwd)));
	snprintf(link, sizeof(link), "%s/a\"b\\c\td", dir);
	{
		char target[4200];

		/* FIXTURE is under OBJDIR, which may be absolute. */
		if (FIXTURE[0] == '/')
			snprintf(target, sizeof(target), "%s", FIXTURE);
		else
			snprintf(target, sizeof(target), "%s/%s", cwd, FIXTURE);
		assert_int_equal(symlink(target, link), 0);
	}
	assert_int_equal(run_tool(&r, "list", "--json", link, "other"), 0);
	{
		char want[256];

		snprintf(want, sizeof(want), "{\"file\": \"%s/a\\\"b\\\\c\\td\"",
			 dir);
		assert_true(!strncmp(r.out, want, strlen(want)));
	}
	run_result_free(&r);
	unlink(link);
	rmdir(dir);
}

/*
 * Names and argument strings are bytes of a file someone else wrote: the
 * text output escapes what a terminal would act on (a probe named to clear
 * root's screen), JSON keeps the exact bytes in its own escapes.
 */
static void test_text_escape(void **state)
{
	char path[] = "/tmp/usdt-list-esc-XXXXXX";
	struct elfb_notes n = { .be = false };
	struct elfb e;
	struct run_result r;
	const char *c;
	int fd;

	elfb_probe(&n, ELFB_TEXT_VA, ELFB_BASE_VA, 0, "evil\033[2J",
		   "n\a\177\377", "8@%rax");
	elfb_probe(&n, ELFB_TEXT_VA + 1, ELFB_BASE_VA, 0, "evil\033[2J",
		   "bad", "8@%rax -4@\033]0;owned\a");
	elfb_build(&e, false, EM_X86_64, ET_DYN, &n);
	fd = mkstemp(path);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, e.buf, e.len), (ssize_t)e.len);
	close(fd);

	assert_int_equal(run_tool(&r, "list", path), 0);
	/* Nothing but printable ASCII and the line ends. */
	for (c = r.out; *c; c++)
		if (*c != '\n' && (*c < 0x20 || *c >= 0x7f))
			fail_msg("byte 0x%02x in:\n%s", (unsigned char)*c, r.out);
	assert_non_null(strstr(r.out, "evil\\x1b[2J:n\\x07\\x7f\\xff "));
	assert_non_null(strstr(r.out, "evil\\x1b[2J:bad "));
	assert_non_null(strstr(r.out, "\\x1b]0;owned\\x07"));
	assert_int_equal(count_lines(r.out), 2);
	/* The columns line up on the escaped names. */
	assert_int_equal(strstr(r.out, " 0x") - r.out,
			 strstr(strchr(r.out, '\n') + 1, " 0x") -
				 (strchr(r.out, '\n') + 1));
	run_result_free(&r);

	/* JSON: the same bytes, as JSON escapes. */
	assert_int_equal(run_tool(&r, "list", "--json", path), 0);
	assert_non_null(strstr(r.out, "\"provider\": \"evil\\u001b[2J\""));
	assert_non_null(strstr(r.out, "\"name\": \"n\\u0007\\u007f\\u00ff\""));
	assert_null(strchr(r.out, '\033'));
	run_result_free(&r);
	unlink(path);
}

/*
 * A semaphore at an odd address, which the kernel would refuse: the site
 * is listed with the reader's reason, in both outputs.
 */
static void test_sema_odd(void **state)
{
	static const char why[] = "semaphore at an odd file offset: the kernel counts only a 2-byte aligned one (ref_ctr_offset)";
	char path[] = "/tmp/usdt-list-odd-XXXXXX";
	struct elfb_notes n = { .be = false };
	struct run_result r;
	struct elfb e;
	int fd;

	elfb_probe(&n, ELFB_TEXT_VA, ELFB_BASE_VA, ELFB_PROBES_VA + 1, "p",
		   "odd", "");
	elfb_build(&e, false, EM_X86_64, ET_DYN, &n);
	fd = mkstemp(path);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, e.buf, e.len), (ssize_t)e.len);
	close(fd);

	assert_int_equal(run_tool(&r, "list", path), 0);
	assert_int_equal(count_lines(r.out), 1);
	assert_non_null(strstr(r.out, "  error: "));
	assert_non_null(strstr(r.out, why));
	run_result_free(&r);
	assert_int_equal(run_tool(&r, "list", "--json", path), 0);
	assert_non_null(strstr(r.out, "\"error\": \"semaphore at an odd file offset:"));
	run_result_free(&r);
	unlink(path);
}

/* ---------------------------------------------------------------------- */
/* Patterns and errors                                                    */

struct pattern_case {
	const char *pattern;
	int lines;		/* sites printed; 0: error expected */
};

static const struct pattern_case pattern_cases[] = {
	{ "fixt:regs", 2 },
	{ "fixt:re*", 2 },
	{ "fixt", 10 },
	{ "fixt:*", 10 },
	{ "other", 1 },
	{ "*:thing", 1 },
	{ "*:[nt]*", 3 },	/* noargs, twelve, thing */
	{ "?ixt:gated", 1 },
	{ "fixt:nosuch", 0 },
	{ "nosuch", 0 },
	/* A bare word that is no provider but a probe name: that probe. */
	{ "regs", 2 },
	{ "thing", 1 },
	{ "t[hw]*", 2 },	/* thing, twelve */
};

static void test_patterns(void **state)
{
	size_t i;

	for (i = 0; i < USDT__TEST_ARRAY_SIZE(pattern_cases); i++) {
		const struct pattern_case *c = &pattern_cases[i];
		struct run_result r;

		run_tool(&r, "list", FIXTURE, c->pattern);
		if (c->lines) {
			assert_int_equal(r.status, 0);
			assert_int_equal(count_lines(r.out), c->lines);
		} else {
			assert_int_not_equal(r.status, 0);
			assert_string_equal(r.out, "");
			assert_non_null(strstr(r.err, "no probes matching"));
			assert_int_equal(count_lines(r.err), 1);
		}
		run_result_free(&r);
	}
	/* Two patterns: the union. */
	{
		struct run_result r;

		assert_int_equal(run_tool(&r, "list", FIXTURE, "other",
					  "fixt:gated"), 0);
		assert_int_equal(count_lines(r.out), 2);
		run_result_free(&r);
	}
}

struct error_case {
	const char *target;
	const char *message;
};

static const struct error_case error_cases[] = {
	{ "/nonexistent/file", "/nonexistent/file: no such file" },
	{ "tests/unit/test_list.c", "test_list.c: not a 64-bit ELF file" },
	{ "/dev/null", "/dev/null: not a regular file" },
	{ "tests/unit", "tests/unit: not a regular file" },
	{ USDT_BIN, ": no USDT probes" },
};

static void test_errors(void **state)
{
	size_t i;

	for (i = 0; i < USDT__TEST_ARRAY_SIZE(error_cases); i++) {
		struct run_result r;

		run_tool(&r, "list", error_cases[i].target);
		assert_int_equal(r.status, 1);
		assert_string_equal(r.out, "");
		assert_int_equal(count_lines(r.err), 1);
		if (!strstr(r.err, error_cases[i].message))
			fail_msg("'%s' lacks '%s'", r.err,
				 error_cases[i].message);
		assert_true(!strncmp(r.err, "usdt: ", 6));
		run_result_free(&r);
	}
}

/*
 * A bare name in the current directory that is a symlink loop is said to
 * be one, by list and by trace: it was searched for in the library paths
 * and reported as "no such file".
 */
static void test_symlink_loop(void **state)
{
	static const char *const cmds[] = { "list", "trace" };
	char dir[] = "/tmp/usdt-loop-XXXXXX", a[64], b[64], tool[4096];
	char cmd[4200], want[64];
	size_t i;

	assert_non_null(mkdtemp(dir));
	snprintf(a, sizeof(a), "%s/la", dir);
	snprintf(b, sizeof(b), "%s/lb", dir);
	assert_int_equal(symlink("lb", a), 0);
	assert_int_equal(symlink("la", b), 0);
	assert_non_null(realpath(USDT_BIN, tool));
	for (i = 0; i < USDT__TEST_ARRAY_SIZE(cmds); i++) {
		const char *argv[] = { "/bin/sh", "-c", cmd, NULL };
		struct run_result r;

		snprintf(cmd, sizeof(cmd), "cd %s && exec %s %s la", dir, tool,
			 cmds[i]);
		snprintf(want, sizeof(want),
			 "usdt: %s: la: Too many levels of symbolic links\n",
			 cmds[i]);
		run_argv(argv, &r);
		if (r.status != 1 || strcmp(r.err, want))
			fail_msg("%s: status %d, stderr '%s', want 1 and '%s'",
				 cmds[i], r.status, r.err, want);
		run_result_free(&r);
	}
	unlink(a);
	unlink(b);
	rmdir(dir);
}

/*
 * Output nobody can take is an error, as for `usdt trace`: exit 1 with
 * the reason, text and JSON, and a closed stdout is refused before a file
 * opened for reading takes its descriptor (writes there would fail
 * unseen).
 */
static void test_write_error(void **state)
{
	static const struct {
		const char *cmd, *message;
	} cases[] = {
		{ USDT_BIN " list " FIXTURE " > /dev/full",
		  "usdt: list: writing the output: No space left on device\n" },
		{ USDT_BIN " list --json " FIXTURE " > /dev/full",
		  "usdt: list: writing the output: No space left on device\n" },
		{ USDT_BIN " list " FIXTURE " >&-",
		  "usdt: list: writing the output: standard output is closed\n" },
	};
	size_t i;

	for (i = 0; i < USDT__TEST_ARRAY_SIZE(cases); i++) {
		const char *argv[] = { "/bin/sh", "-c", cases[i].cmd, NULL };
		struct run_result r;

		run_argv(argv, &r);
		if (r.status != 1 || strcmp(r.err, cases[i].message))
			fail_msg("'%s': status %d, stderr '%s', want 1 and '%s'",
				 cases[i].cmd, r.status, r.err,
				 cases[i].message);
		run_result_free(&r);
	}
}

static void test_usage(void **state)
{
	struct run_result r;

	assert_int_equal(run_tool(&r, "list", "--help"), 0);
	assert_non_null(strstr(r.out, "Usage: usdt list"));
	run_result_free(&r);
	assert_int_equal(run_tool(&r, "--help"), 0);
	assert_non_null(strstr(r.out, "list"));
	assert_non_null(strstr(r.out, "trace"));
	run_result_free(&r);
	assert_int_equal(run_tool(&r, "trace", "--help"), 0);
	assert_non_null(strstr(r.out, "Usage: usdt trace"));
	run_result_free(&r);
	assert_int_equal(run_tool(&r, "list"), 2);
	assert_non_null(strstr(r.err, "Usage: usdt list"));
	run_result_free(&r);
	assert_int_equal(run_tool(&r, "list", "--bogus", FIXTURE), 2);
	run_result_free(&r);
	assert_int_equal(run_tool(&r, "frobnicate"), 2);
	assert_non_null(strstr(r.err, "unknown command"));
	run_result_free(&r);
}

/* ---------------------------------------------------------------------- */
/* -p: this process has a probe of its own.                               */

__attribute__((noinline)) static void self_probe(int v)
{
	STAP_PROBE1(selftest, here, v);
}

static void test_pid(void **state)
{
	char pid[16], want[64];
	struct run_result r;

	self_probe(1);
	snprintf(pid, sizeof(pid), "%d", (int)getpid());

	/* Every mapped file: ours has the probe; a header names the file. */
	assert_int_equal(run_tool(&r, "list", "-p", pid), 0);
	assert_non_null(strstr(r.out, "/test_list (x86_64)\n"));
	assert_non_null(strstr(r.out, "\nselftest:here "));
	run_result_free(&r);

	/* A pattern without TARGET. */
	assert_int_equal(run_tool(&r, "list", "-p", pid, "selftest:*"), 0);
	assert_int_equal(count_lines(r.out), 2);
	run_result_free(&r);

	/* TARGET by the base name of a mapped file. */
	assert_int_equal(run_tool(&r, "list", "-p", pid, "test_list",
				  "selftest"), 0);
	assert_true(!strncmp(r.out, "selftest:here ", 14));
	run_result_free(&r);

	/* JSON: an array of objects, with the pid. */
	assert_int_equal(run_tool(&r, "list", "--json", "-p", pid,
				  "selftest"), 0);
	assert_true(!strncmp(r.out, "[\n{\"file\": \"/", 13));
	snprintf(want, sizeof(want), "\"pid\": %s, \"arch\": \"x86_64\"", pid);
	assert_non_null(strstr(r.out, want));
	assert_non_null(strstr(r.out, "\"name\": \"here\""));
	assert_non_null(strstr(r.out, "\n]\n"));
	run_result_free(&r);

	/* No such process. */
	assert_int_equal(run_tool(&r, "list", "-p", "999999999"), 1);
	assert_non_null(strstr(r.err, "no such process"));
	run_result_free(&r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_text_sites),
		cmocka_unit_test(test_text_global),
		cmocka_unit_test(test_text_aligned),
		cmocka_unit_test(test_json_sites),
		cmocka_unit_test(test_json_special),
		cmocka_unit_test(test_json_escape),
		cmocka_unit_test(test_text_escape),
		cmocka_unit_test(test_sema_odd),
		cmocka_unit_test(test_written_and_read),
		cmocka_unit_test(test_patterns),
		cmocka_unit_test(test_errors),
		cmocka_unit_test(test_symlink_loop),
		cmocka_unit_test(test_write_error),
		cmocka_unit_test(test_usage),
		cmocka_unit_test(test_pid),
	};

#ifndef __x86_64__
	printf("SKIP: test_list: the fixture is x86_64 code\n");
	return USDT_TEST_SKIP;
#endif
	return cmocka_run_group_tests(tests, setup, NULL);
}
