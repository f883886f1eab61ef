// SPDX-License-Identifier: BSD-2-Clause
/*
 * `usdt list`: every call site of a file, or of every file a process has
 * mapped, with its arguments decoded. Needs no privileges beyond reading
 * the files.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "tool.h"

/* clang-format off */
static const char list_usage[] =
"Usage: usdt list [--json] [-p PID] TARGET [PROVIDER[:NAME]]...\n"
"       usdt list [--json] -p PID [PROVIDER[:NAME]]...\n"
"\n"
"Print every USDT call site of TARGET (a binary or a library, by path or by\n"
"bare name such as libc.so.6 or python3, found as the loader or a shell\n"
"would), or with -p and no TARGET of every file that\n"
"process has mapped. Patterns select probes; shell globs are allowed in\n"
"either half, and PROVIDER alone means PROVIDER:*.\n"
"\n"
"  -j, --json     one JSON object per file (an array of them with -p and\n"
"                 no TARGET), as described in usdt(1)\n"
"  -p, --pid PID  read the files as process PID sees them\n"
"  -h, --help     this help\n"
"\n"
"Each line: PROVIDER:NAME, the call site's address, its file offset (what\n"
"a uprobe uses), the semaphore's address (or -), then each argument as\n"
"SPEC=TYPE HOW, e.g. -4@%edi=int32 reg edi, 8@-16(%rbp)=uint64 mem[rbp-16].\n";
/* clang-format on */

struct list_opts {
	bool json;
	pid_t pid;
	struct pattern *pats;
	int pat_cnt;
};

/* The constant as the program sees it: sign-extended for signed sizes. */
static int64_t const_signed(const struct usdt_arg_info *a)
{
	int bits = a->size >= 8 ? 64 : a->size * 8;
	uint64_t v = a->value;

	if (bits == 64)
		return (int64_t)v;
	v &= (1ULL << bits) - 1;
	if (v & (1ULL << (bits - 1)))
		v |= ~0ULL << bits;
	return (int64_t)v;
}

/* Text output of a string from the file: escaped (see print_escaped()). */
static size_t print_str(FILE *f, const char *s)
{
	return print_escaped(f, s, strlen(s));
}

/* Register names without the '%' AT&T puts in front of them. */
static const char *reg_plain(const char *r)
{
	return r && r[0] == '%' ? r + 1 : r;
}

static void print_disp(FILE *f, int64_t off, bool first)
{
	if (off < 0)
		fprintf(f, "-%" PRIu64, (uint64_t)0 - (uint64_t)off);
	else if (off > 0 || first)
		fprintf(f, "%s%" PRId64, first ? "" : "+", off);
}

/* The index as read: "w0*4", or "sxtw(w0)*4" for a 32-bit index that is
 * extended first. */
static void print_index(FILE *f, const struct usdt_arg_info *a)
{
	if (a->index_ext)
		fprintf(f, "%s(%s)*%d", a->index_ext, reg_plain(a->index),
			a->scale);
	else
		fprintf(f, "%s*%d", reg_plain(a->index), a->scale);
}

/* How an argument is read, in a few words: "reg edi", "mem[rbp-16]"
 * (for a 16-byte s390x argument, its low half: what is read). */
static void describe_arg(FILE *f, const struct usdt_probe *p,
			 const struct usdt_arg_info *a)
{
	uint64_t site = usdt_probe__address(p);
	const char *reg = reg_plain(a->read_reg);

	switch (a->kind) {
	case USDT_ARG_CONST:
		if (a->is_signed)
			fprintf(f, "const %" PRId64, const_signed(a));
		else
			fprintf(f, "const %" PRIu64, a->value);
		break;
	case USDT_ARG_REG:
		fprintf(f, "reg %s", reg);
		break;
	case USDT_ARG_DEREF:
		fprintf(f, "mem[%s", reg ? reg : "");
		print_disp(f, a->read_offset, !reg);
		fputc(']', f);
		break;
	case USDT_ARG_INDEX:
		fputs("mem[", f);
		if (reg)
			fprintf(f, "%s+", reg);
		print_index(f, a);
		print_disp(f, a->read_offset, false);
		fputc(']', f);
		break;
	case USDT_ARG_PCREL:
		fprintf(f, "mem[0x%" PRIx64 " pc-rel]",
			site + (uint64_t)a->read_offset);
		break;
	case USDT_ARG_ABS:
		fprintf(f, "mem[0x%" PRIx64 "]", (uint64_t)a->read_offset);
		break;
	case USDT_ARG_PCADDR:
		fprintf(f, "addr 0x%" PRIx64 " pc-rel",
			site + (uint64_t)a->offset);
		break;
	case USDT_ARG_UNSUPPORTED:
	default:
		fputs("unsupported (", f);
		print_str(f, a->reason ? a->reason : "?");
		fputc(')', f);
		break;
	}
}

static int get_arg(const struct usdt_probe *p, int i, struct usdt_arg_info *a)
{
	memset(a, 0, sizeof(*a));
	a->sz = sizeof(*a);
	return usdt_probe__arg(p, i, a);
}

/* ---------------------------------------------------------------------- */
/* Text                                                                   */

struct col_widths {
	int name, addr, off, sema;
};

static int hex_len(uint64_t v)
{
	char buf[24];

	return snprintf(buf, sizeof(buf), "0x%" PRIx64, v);
}

/* The width of "PROVIDER:NAME" as text_site() prints it. */
static int name_len(const struct usdt_probe *p)
{
	const char *prov = usdt_probe__provider(p), *name = usdt_probe__name(p);
	size_t n = escaped_len(prov, strlen(prov)) + 1 +
		   escaped_len(name, strlen(name));

	return n > INT_MAX ? INT_MAX : (int)n;
}

static void text_site(FILE *f, const struct usdt_probe *p,
		      const struct col_widths *w)
{
	char addr[24], off[32], sema[24];
	struct usdt_arg_info a;
	int i, cnt, n;

	n = (int)print_str(f, usdt_probe__provider(p));
	fputc(':', f);
	n += 1 + (int)print_str(f, usdt_probe__name(p));
	fprintf(f, "%*s", w->name > n ? w->name - n : 0, "");
	snprintf(addr, sizeof(addr), "0x%" PRIx64, usdt_probe__address(p));
	snprintf(off, sizeof(off), "0x%" PRIx64, usdt_probe__file_offset(p));
	if (usdt_probe__semaphore(p))
		snprintf(sema, sizeof(sema), "0x%" PRIx64,
			 usdt_probe__semaphore(p));
	else
		snprintf(sema, sizeof(sema), "-");
	fprintf(f, "  %-*s  file %-*s  sema %-*s  ", w->addr, addr, w->off, off,
		w->sema, sema);

	if (usdt_probe__status(p) < 0) {
		fputs("error: ", f);
		print_str(f, usdt_probe__error(p));
		fputc('\n', f);
		return;
	}
	cnt = usdt_probe__arg_cnt(p);
	if (!cnt) {
		fputs("args: none\n", f);
		return;
	}
	fputs("args: ", f);
	for (i = 0; i < cnt; i++) {
		if (get_arg(p, i, &a) < 0) {
			fprintf(f, "%s?", i ? ", " : "");
			continue;
		}
		fputs(i ? ", " : "", f);
		print_str(f, a.str ? a.str : "");
		fprintf(f, "=%s ", arg_type_name(&a));
		describe_arg(f, p, &a);
	}
	fputc('\n', f);
}

/* ---------------------------------------------------------------------- */
/* JSON                                                                   */

static void json_hex(FILE *f, const char *key, uint64_t v, bool null_if_0)
{
	fprintf(f, "\"%s\": ", key);
	if (null_if_0 && !v)
		fputs("null", f);
	else
		fprintf(f, "\"0x%" PRIx64 "\"", v);
}

static void json_arg(FILE *f, const struct usdt_arg_info *a)
{
	fprintf(f, "{\"size\": %d, \"signed\": %s, \"float\": %s, \"kind\": ",
		a->size, a->is_signed ? "true" : "false",
		a->is_float ? "true" : "false");
	json_str(f, usdt_arg_kind_str(a->kind));
	fputs(", \"reg\": ", f);
	json_str(f, a->reg);
	fputs(", \"index\": ", f);
	json_str(f, a->index);
	if (a->index)
		fprintf(f, ", \"scale\": %d", a->scale);
	else
		fputs(", \"scale\": null", f);
	fputs(", \"index_ext\": ", f);
	json_str(f, a->index_ext);
	/* reg and offset as written; read_reg and read_offset as read. */
	fprintf(f, ", \"offset\": %" PRId64 ", \"read_reg\": ", a->offset);
	json_str(f, a->read_reg);
	fprintf(f,
		", \"read_offset\": %" PRId64 ", \"value\": ", a->read_offset);
	if (a->kind != USDT_ARG_CONST)
		fputs("null", f);
	else if (a->is_signed)
		fprintf(f, "%" PRId64, const_signed(a));
	else
		fprintf(f, "%" PRIu64, a->value);
	fputs(", \"reason\": ", f);
	json_str(f, a->kind == USDT_ARG_UNSUPPORTED ? a->reason : NULL);
	fputc('}', f);
}

static void json_site(FILE *f, const struct usdt_probe *p)
{
	struct usdt_arg_info a;
	int i, cnt;

	fputs("{\"provider\": ", f);
	json_str(f, usdt_probe__provider(p));
	fputs(", \"name\": ", f);
	json_str(f, usdt_probe__name(p));
	fputs(", ", f);
	json_hex(f, "address", usdt_probe__address(p), false);
	fputs(", ", f);
	json_hex(f, "file_offset", usdt_probe__file_offset(p), false);
	fputs(", ", f);
	json_hex(f, "semaphore", usdt_probe__semaphore(p), true);
	fputs(", ", f);
	/* A semaphore at file offset 0 cannot exist; null means none. */
	json_hex(f, "semaphore_offset",
		 usdt_probe__semaphore(p) ? usdt_probe__semaphore_offset(p) : 0,
		 true);
	fputs(", \"args_str\": ", f);
	json_str(f, usdt_probe__args_str(p));
	fputs(", \"error\": ", f);
	json_str(f, usdt_probe__status(p) < 0 ? usdt_probe__error(p) : NULL);
	fputs(", \"args\": [", f);
	cnt = usdt_probe__status(p) < 0 ? 0 : usdt_probe__arg_cnt(p);
	for (i = 0; i < cnt; i++) {
		if (get_arg(p, i, &a) < 0)
			continue;
		if (i)
			fputs(", ", f);
		json_arg(f, &a);
	}
	fputs("]}", f);
}

/* ---------------------------------------------------------------------- */

/*
 * The patterns as they apply to file: a bare word that names no provider
 * of file but names probes there stands for "*:W" (a shallow copy, to be
 * freed alone). NULL when out of memory.
 */
static struct pattern *file_patterns(const struct list_opts *o,
				     struct usdt_file *file)
{
	struct pattern *v = NULL;
	const char *seen;
	size_t others;
	int i;

	for (i = 0; i < o->pat_cnt; i++) {
		seen = NULL;
		if (!o->pats[i].bare ||
		    pattern_bare_scan(&o->pats[i], file, &seen, &others) !=
			    BARE_NAME)
			continue;
		if (!v) {
			v = malloc((size_t)o->pat_cnt * sizeof(*v));
			if (!v)
				return NULL;
			memcpy(v, o->pats, (size_t)o->pat_cnt * sizeof(*v));
		}
		v[i].name = v[i].provider;
		v[i].provider = (char *)"*";
	}
	return v ? v : o->pats;
}

/*
 * Mark the sites of file that the patterns select, and measure the text
 * columns they need. Returns how many are marked.
 */
static size_t match_sites(const struct list_opts *o, struct pattern *pats,
			  struct usdt_file *file, bool *match,
			  struct col_widths *w)
{
	size_t i, cnt = usdt_file__probe_cnt(file), shown = 0;
	const struct usdt_probe *p;
	int n;

	for (i = 0; i < cnt; i++) {
		p = usdt_file__probe(file, i);
		if (!p ||
		    !patterns_match(pats, o->pat_cnt, usdt_probe__provider(p),
				    usdt_probe__name(p)))
			continue;
		match[i] = true;
		shown++;
		n = name_len(p);
		if (n > w->name)
			w->name = n;
		n = hex_len(usdt_probe__address(p));
		if (n > w->addr)
			w->addr = n;
		n = hex_len(usdt_probe__file_offset(p));
		if (n > w->off)
			w->off = n;
		n = usdt_probe__semaphore(p) ?
			    hex_len(usdt_probe__semaphore(p)) :
			    1;
		if (n > w->sema)
			w->sema = n;
	}
	return shown;
}

/* One file's object: {"file": ..., "probes": [...]}, in an array (after
 * "[" when first, after "," otherwise) when in_array. */
static void json_file(const struct list_opts *o, const struct target *t,
		      struct usdt_file *file, const bool *match, bool first,
		      bool in_array)
{
	size_t i, cnt = usdt_file__probe_cnt(file);
	bool first_site = true;

	if (in_array)
		fputs(first ? "[\n" : ",\n", stdout);
	fputs("{\"file\": ", stdout);
	json_str(stdout, t->shown);
	if (o->pid > 0)
		printf(", \"pid\": %d", (int)o->pid);
	fputs(", \"arch\": ", stdout);
	json_str(stdout, usdt_file__arch_name(file));
	fputs(", \"probes\": [", stdout);
	for (i = 0; i < cnt; i++) {
		if (!match[i])
			continue;
		fputs(first_site ? "\n  " : ",\n  ", stdout);
		first_site = false;
		json_site(stdout, usdt_file__probe(file, i));
	}
	fputs("\n]}", stdout);
	if (!in_array)
		fputc('\n', stdout);
}

/* One file's sites as text, after a header naming the file when several
 * files are listed (in_array). */
static void text_file(const struct target *t, struct usdt_file *file,
		      const bool *match, const struct col_widths *w, bool first,
		      bool in_array)
{
	size_t i, cnt = usdt_file__probe_cnt(file);
	const char *arch = usdt_file__arch_name(file);

	if (in_array) {
		fputs(first ? "" : "\n", stdout);
		print_str(stdout, t->shown);
		printf(" (%s)\n", arch ? arch : "unknown architecture");
	}
	for (i = 0; i < cnt; i++)
		if (match[i])
			text_site(stdout, usdt_file__probe(file, i), w);
}

/*
 * List one file. Returns the number of sites printed, or a negative errno
 * when the file cannot be read.
 */
static int list_file(const struct list_opts *o, const struct target *t,
		     bool first, bool in_array)
{
	struct col_widths w = { 0 };
	struct usdt_file *file;
	struct pattern *pats;
	size_t cnt, shown;
	bool *match;

	file = target_open(t);
	if (!file)
		return -errno;
	cnt = usdt_file__probe_cnt(file);
	match = calloc(cnt ? cnt : 1, sizeof(*match));
	pats = file_patterns(o, file);
	if (!match || (!pats && o->pat_cnt)) {
		free(match);
		usdt_file__close(file);
		return -ENOMEM;
	}
	shown = match_sites(o, pats, file, match, &w);
	if (pats != o->pats)
		free(pats);
	if (shown && o->json)
		json_file(o, t, file, match, first, in_array);
	else if (shown)
		text_file(t, file, match, &w, first, in_array);
	free(match);
	usdt_file__close(file);
	return (int)shown;
}

/* Parse the options into o. Returns -1 to go on, else the exit code. */
static int list_parse_opts(int argc, char **argv, struct list_opts *o)
{
	static const struct option longopts[] = {
		{ "json", no_argument, NULL, 'j' },
		{ "pid", required_argument, NULL, 'p' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int c;

	optind = 1;
	while ((c = getopt_long(argc, argv, "+jp:h", longopts, NULL)) != -1) {
		switch (c) {
		case 'j':
			o->json = true;
			break;
		case 'p':
			o->pid = parse_pid(optarg);
			if (o->pid < 0)
				return tool_err("list: bad pid '%s'", optarg);
			break;
		case 'h':
			fputs(list_usage, stdout);
			return 0;
		default:
			fputs(list_usage, stderr);
			return 2;
		}
	}
	return -1;
}

/*
 * The files to list: TARGET, the first word (*used set to 1), or every
 * file of the process (*whole set). With -p, the first word is TARGET if
 * it has a '/' or names (with no ':') a file the process has mapped;
 * otherwise it is the first pattern. Without -p it is always TARGET.
 * Returns the count, or -1 with the error printed.
 */
static int list_targets(const struct list_opts *o, int argc, char **argv,
			struct target **out, bool *whole, int *used)
{
	int cnt, err;

	*whole =
		o->pid > 0 && (!argc || (!strchr(argv[0], '/') &&
					 (strchr(argv[0], ':') ||
					  !target_is_mapped(argv[0], o->pid))));
	*used = 0;
	if (*whole) {
		cnt = targets_of_pid(o->pid, out);
		if (cnt < 0)
			tool_err("list: pid %d: %s", (int)o->pid,
				 cnt == -ENOENT ? "no such process" :
						  tool_strerror(-cnt));
		return cnt < 0 ? -1 : cnt;
	}
	*out = calloc(1, sizeof(**out));
	if (!*out) {
		tool_err("list: out of memory");
		return -1;
	}
	err = target_resolve(argv[0], o->pid, &(*out)[0]);
	if (err < 0) {
		free(*out);
		*out = NULL;
		tool_err("list: %s: %s", argv[0],
			 err == -ENOENT ? "no such file" : tool_strerror(-err));
		return -1;
	}
	*used = 1;
	return 1;
}

/* List every target. Returns the number of sites printed, or -1 with the
 * error printed. */
static int list_all(const struct list_opts *o, const struct target *targets,
		    int cnt, bool whole)
{
	bool any_printed = false;
	int i, n, total = 0;

	for (i = 0; i < cnt; i++) {
		n = list_file(o, &targets[i], !any_printed, whole);
		if (n < 0) {
			/* In a whole process, files that are not ELF (locale
			 * archives, caches) are normal and skipped. */
			if (whole)
				continue;
			tool_err("list: %s: %s", targets[i].shown,
				 tool_open_error(&targets[i], n));
			return -1;
		}
		if (n > 0)
			any_printed = true;
		total += n;
	}
	if (whole && o->json && any_printed)
		fputs("\n]\n", stdout);
	return total;
}

int cmd_list(int argc, char **argv)
{
	struct list_opts o = { .pid = 0 };
	struct target *targets = NULL;
	int err, cnt, used, total, ret = 1;
	bool whole;

	if (stdout_closed("list"))
		return 1;
	err = list_parse_opts(argc, argv, &o);
	if (err >= 0)
		return err;
	argc -= optind;
	argv += optind;
	if (o.pid <= 0 && !argc) {
		fputs(list_usage, stderr);
		return 2;
	}
	if (o.pid > 0 && pid_check("list", o.pid))
		return 1;

	cnt = list_targets(&o, argc, argv, &targets, &whole, &used);
	if (cnt < 0)
		return 1;
	argc -= used;
	argv += used;

	err = patterns_parse(argv, argc, &o.pats, &o.pat_cnt);
	if (err) {
		tool_err("list: out of memory");
		goto out;
	}
	total = list_all(&o, targets, cnt, whole);
	err = stdout_flush();
	if (total < 0)
		goto out;
	/* As for trace: a reader that went away (| head) is no error. */
	if (err && err != EPIPE) {
		tool_err("list: writing the output: %s", tool_strerror(err));
		goto out;
	}
	if (!total) {
		if (o.pat_cnt)
			tool_err("list: %s: no probes matching %s%s",
				 whole ? "process" : targets[0].shown, argv[0],
				 o.pat_cnt > 1 ? " ..." : "");
		else if (whole)
			tool_err("list: pid %d: no USDT probes in any mapped file",
				 (int)o.pid);
		else
			tool_err("list: %s: no USDT probes", targets[0].shown);
		goto out;
	}
	ret = 0;
out:
	patterns_free(o.pats, o.pat_cnt);
	targets_free(targets, cnt);
	return ret;
}
