// SPDX-License-Identifier: BSD-2-Clause
/*
 * `usdt list`: every call site of a file, or of every file a process has
 * mapped, with its arguments decoded. Needs no privileges beyond reading
 * the files.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "tool.h"

static const char list_usage[] =
"Usage: usdt list [--json] [-p PID] TARGET [PROVIDER[:NAME]]...\n"
"       usdt list [--json] -p PID [PROVIDER[:NAME]]...\n"
"\n"
"Print every USDT call site of TARGET (a binary or a library, by path or by\n"
"bare name such as libc.so.6), or with -p and no TARGET of every file that\n"
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
		fprintf(f, "addr 0x%" PRIx64 " pc-rel", site + (uint64_t)a->offset);
		break;
	case USDT_ARG_UNSUPPORTED:
	default:
		fprintf(f, "unsupported (%s)", a->reason ? a->reason : "?");
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

static void text_site(FILE *f, const struct usdt_probe *p,
		      const struct col_widths *w)
{
	char name[512], addr[24], off[32], sema[24];
	struct usdt_arg_info a;
	int i, cnt;

	snprintf(name, sizeof(name), "%s:%s", usdt_probe__provider(p),
		 usdt_probe__name(p));
	snprintf(addr, sizeof(addr), "0x%" PRIx64, usdt_probe__address(p));
	snprintf(off, sizeof(off), "0x%" PRIx64, usdt_probe__file_offset(p));
	if (usdt_probe__semaphore(p))
		snprintf(sema, sizeof(sema), "0x%" PRIx64,
			 usdt_probe__semaphore(p));
	else
		snprintf(sema, sizeof(sema), "-");
	fprintf(f, "%-*s  %-*s  file %-*s  sema %-*s  ", w->name, name,
		w->addr, addr, w->off, off, w->sema, sema);

	if (usdt_probe__status(p) < 0) {
		fprintf(f, "error: %s\n", usdt_probe__error(p));
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
		fprintf(f, "%s%s=%s ", i ? ", " : "", a.str ? a.str : "",
			arg_type_name(&a));
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
	fprintf(f, ", \"read_offset\": %" PRId64 ", \"value\": ",
		a->read_offset);
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
 * List one file. Returns the number of sites printed, or a negative errno
 * when the file cannot be read (*why then names the cause).
 */
static int list_file(const struct list_opts *o, const struct target *t,
		     bool first, bool in_array)
{
	struct col_widths w = { 0 };
	struct usdt_file *file;
	const struct usdt_probe *p;
	size_t i, cnt, shown = 0;
	const char *arch;
	bool *match;
	int n;

	file = usdt_file__open(t->open_path, NULL);
	if (!file)
		return -errno;
	cnt = usdt_file__probe_cnt(file);
	match = calloc(cnt ? cnt : 1, sizeof(*match));
	if (!match) {
		usdt_file__close(file);
		return -ENOMEM;
	}
	for (i = 0; i < cnt; i++) {
		char buf[512];

		p = usdt_file__probe(file, i);
		if (!p || !patterns_match(o->pats, o->pat_cnt,
					  usdt_probe__provider(p),
					  usdt_probe__name(p)))
			continue;
		match[i] = true;
		shown++;
		n = snprintf(buf, sizeof(buf), "%s:%s", usdt_probe__provider(p),
			     usdt_probe__name(p));
		if (n > w.name)
			w.name = n < (int)sizeof(buf) ? n : (int)sizeof(buf) - 1;
		n = hex_len(usdt_probe__address(p));
		if (n > w.addr)
			w.addr = n;
		n = hex_len(usdt_probe__file_offset(p));
		if (n > w.off)
			w.off = n;
		n = usdt_probe__semaphore(p) ?
			    hex_len(usdt_probe__semaphore(p)) : 1;
		if (n > w.sema)
			w.sema = n;
	}
	if (!shown)
		goto out;

	arch = usdt_file__arch_name(file);
	if (o->json) {
		bool first_site = true;

		if (in_array)
			fputs(first ? "[\n" : ",\n", stdout);
		fputs("{\"file\": ", stdout);
		json_str(stdout, t->shown);
		if (o->pid > 0)
			printf(", \"pid\": %d", (int)o->pid);
		fputs(", \"arch\": ", stdout);
		json_str(stdout, arch);
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
	} else {
		/* Several files: a header before each one's sites. */
		if (in_array)
			printf("%s%s (%s)\n", first ? "" : "\n", t->shown,
			       arch ? arch : "unknown architecture");
		for (i = 0; i < cnt; i++)
			if (match[i])
				text_site(stdout, usdt_file__probe(file, i), &w);
	}
out:
	free(match);
	usdt_file__close(file);
	return (int)shown;
}

static const char *open_error(int err)
{
	switch (err) {
	case -ENOENT:
		return "no such file";
	case -EACCES:
		return "permission denied";
	case -ENOEXEC:
		return "not a 64-bit ELF file";
	case -ENOSYS:
		return "this libusdt cannot read ELF files yet (ENOSYS)";
	default:
		return strerror(-err);
	}
}

int cmd_list(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "json", no_argument, NULL, 'j' },
		{ "pid", required_argument, NULL, 'p' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct list_opts o = { .pid = 0 };
	struct target *targets = NULL;
	int c, i, err, cnt = 0, total = 0, ret = 1;
	bool whole_process, any_printed = false;

	optind = 1;
	while ((c = getopt_long(argc, argv, "+jp:h", longopts, NULL)) != -1) {
		switch (c) {
		case 'j':
			o.json = true;
			break;
		case 'p':
			o.pid = parse_pid(optarg);
			if (o.pid < 0)
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
	argc -= optind;
	argv += optind;

	/*
	 * With -p, the first word is TARGET if it has a '/' or names (with
	 * no ':') a file the process has mapped; otherwise it is the first
	 * pattern. Without -p it is always TARGET.
	 */
	whole_process = false;
	if (o.pid > 0) {
		whole_process = !argc || (!strchr(argv[0], '/') &&
					  (strchr(argv[0], ':') ||
					   !target_is_mapped(argv[0], o.pid)));
	} else if (!argc) {
		fputs(list_usage, stderr);
		return 2;
	}

	if (whole_process) {
		cnt = targets_of_pid(o.pid, &targets);
		if (cnt < 0)
			return tool_err("list: pid %d: %s", (int)o.pid,
					cnt == -ENOENT ? "no such process" :
							 strerror(-cnt));
	} else {
		targets = calloc(1, sizeof(*targets));
		if (!targets)
			return tool_err("list: out of memory");
		err = target_resolve(argv[0], o.pid, &targets[0]);
		if (err < 0) {
			free(targets);
			return tool_err("list: %s: %s", argv[0],
					err == -ENOENT ? "no such file" :
							 strerror(-err));
		}
		cnt = 1;
		argc--;
		argv++;
	}

	err = patterns_parse(argv, argc, &o.pats, &o.pat_cnt);
	if (err) {
		tool_err("list: out of memory");
		goto out;
	}

	for (i = 0; i < cnt; i++) {
		int n = list_file(&o, &targets[i], !any_printed, whole_process);

		if (n < 0) {
			/* In a whole process, files that are not ELF (locale
			 * archives, caches) are normal and skipped. */
			if (whole_process && n != -ENOSYS)
				continue;
			tool_err("list: %s: %s", targets[i].shown,
				 open_error(n));
			goto out;
		}
		if (n > 0)
			any_printed = true;
		total += n;
	}
	if (whole_process && o.json && any_printed)
		fputs("\n]\n", stdout);
	fflush(stdout);

	if (!total) {
		if (o.pat_cnt)
			tool_err("list: %s: no probes matching %s%s",
				 whole_process ? "process" : targets[0].shown,
				 argv[0], o.pat_cnt > 1 ? " ..." : "");
		else if (whole_process)
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
