// SPDX-License-Identifier: BSD-2-Clause
/*
 * `usdt trace`: attach tools/usdt_trace.bpf.c to every matching probe of a
 * file and print each hit with its arguments as it comes, or a summary
 * the BPF program keeps (counts, a histogram, latencies).
 *
 * The order of things matters:
 *  1. read the file and build the table of matching probes (provider,
 *     name, how to print each argument of each call site, the user's
 *     format); a probe's index in the table is its cookie;
 *  2. with -c, fork the command; the child waits on a pipe before exec,
 *     so nothing it does can be missed, and dies with us;
 *  3. open the skeleton, set the mode, filter and map sizes, create the
 *     manager BEFORE load (it may resize maps and prepare the program for
 *     uprobe_multi), load, fill the per-probe settings;
 *  4. attach each probe with its cookie, for the pid (the child's, -p's,
 *     or -1 for all); uprobes live on the file's inode and are filtered by
 *     the process's mm, which exec replaces in the same task, so an attach
 *     made before the child's exec covers the program it becomes;
 *  5. release the child, poll the ring buffer until the end (-n, -d, a
 *     signal, the command or the process ending, stdout closed), then
 *     undo 4 and 3.
 * A signal in steps 1-4 ends the tool with 128 + the signal: nothing was
 * traced. Once tracing ran, a signal ends it normally.
 *
 * Where each step lives: the options and the files and groups here, step
 * 1's table in trace_table.c, 2 (the held command) and 5 here, 3 and 4 in
 * trace_load.c; the formats in trace_fmt.c, the filter in trace_filter.c,
 * summaries in trace_sum.c, stacks in trace_stack.c, the targets in
 * trace_files.c, the files a process maps later in trace_watch.c, those
 * of every process (-a) in trace_all.c, and
 * --listen's HTTP server and Prometheus text in trace_http.c and
 * trace_prom.c.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/random.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>

#include "trace.h"
#include "usdt_tool.h"
#include "usdt_trace.skel.h"

/* clang-format off */
static const char trace_usage[] =
"Usage: usdt trace [OPTIONS] TARGET [PROVIDER[:NAME] [FORMAT]]... [TARGET...]\n"
"       usdt trace [OPTIONS] -p PID [PROVIDER[:NAME] [FORMAT]]...\n"
"       usdt trace [OPTIONS] -a PROVIDER[:NAME] [FORMAT] [PROVIDER[:NAME]...]\n"
"\n"
"Print one line per hit of the matching probes of TARGET (a binary or a\n"
"library, by path or by bare name such as libc.so.6 or python3, found as\n"
"the loader or a shell would), in time order:\n"
"  TIME_NS PID TID COMM PROVIDER:NAME ARG0 ARG1 ...\n"
"Arguments print as signed or unsigned decimals, floats as floats (as\n"
"each call site declares them), and ? when they cannot be read (why, once\n"
"per probe and argument, on stderr). A FORMAT after a pattern prints that\n"
"probe's arguments as printf would: %s (the string the argument points to)\n"
"%d %i %u %x %X %o %p %c %f, with flags, width and precision (%-10s %08x\n"
"%.3f), length modifiers (%hhu %hd %ld), %.*s (exactly as many bytes as the\n"
"argument before the string says, no NUL needed; for (pointer, length)\n"
"write %1$.*2$s) and numbered arguments\n"
"(%2$d); or bcc's '\"FMT\", EXPR, ...' with up to 8 typed loads such as\n"
"*(int32 *)(arg2 + 16) (an 8-byte one is a pointer for %s: '\"%s\",\n"
"*(uint64 *)(arg0 + 8)', a struct's char * field, or str(*(uint64 *)arg0)),\n"
"and str(arg0, arg1) for %s: the string of arg1's\n"
"count of bytes arg0 points to, no NUL needed (HotSpot's names), up to\n"
"-s less one. Arguments count from arg0, as in bpftrace (bcc's\n"
"arg1 is arg0 here). Without a pattern every probe of TARGET is traced.\n"
"A TARGET with no USDT notes at all is said so (\"'FILE' has no USDT\n"
"probes\"), not taken for a pattern that matches nothing.\n"
"Needs root, or CAP_BPF and CAP_PERFMON (and CAP_SYS_PTRACE for others'\n"
"processes; and CAP_SYS_ADMIN for perf uprobes: -m perf, or a kernel\n"
"before 6.6).\n"
"Options may come before or after TARGET. With -p PID and no TARGET, every\n"
"file the process maps is traced (one replaced on disk too: the old one),\n"
"and each one it maps later (dlopen()). With -p or -c, a bare library name\n"
"the process does not map yet (-c 'java ...' libjvm.so) is traced once it\n"
"maps a file of that name. Without -p or -c, a TARGET that a\n"
"package upgrade replaces on disk is followed: processes started after it\n"
"are traced in the new file (said on stderr).\n"
"With -a, the matching probes of every process are traced, those started\n"
"later too (bpftrace's usdt:*:PROVIDER:NAME): each file with such probes\n"
"is attached once, while some process maps it.\n"
"A later TARGET is a path with a '/' (./b); the patterns after a TARGET\n"
"are its own. A quoted glob TARGET ('/usr/lib/*/libfoo*.so') names every\n"
"file it matches.\n"
"\n"
"  -p, --pid PID        trace only process PID (and its threads)\n"
"  -a, --all-processes  trace the probes the patterns match in every\n"
"                       process's files, without a TARGET: every process\n"
"                       is looked at every 0.2 s (more apart on a host\n"
"                       where that costs over 5% of a CPU), a file read\n"
"                       once; hits before the look that finds a newly\n"
"                       mapped file are missed. Each pattern names a\n"
"                       provider (python:function__entry; python alone is\n"
"                       python:*); a bare word is a provider here\n"
"  -c, --command CMD    run CMD (split into words at blanks, with ' \" and \\\n"
"                       quoting, no expansions), trace only it, and exit\n"
"                       with its status\n"
"  -j, --json           one JSON object per line (per interval for summaries),\n"
"                       with the wall-clock time, and a FORMAT's text\n"
"  -n, --limit COUNT    stop after COUNT hits\n"
"  -d, --duration SECS  stop after SECS seconds\n"
"  -s, --string-size N  read at most N bytes of each %s string (default 64)\n"
"      --fault-in       fault in, at the hit, the pages of strings (typed\n"
"                       loads, filter and --by strings) the process has not\n"
"                       touched yet: a sleepable BPF program, in processes\n"
"                       of your own user (Linux 6.0+). HAZARD: a process\n"
"                       that stalls the fault (userfaultfd, a hung FUSE\n"
"                       server) stalls every uprobe detach on the machine,\n"
"                       by any tool, and this tool's exit, as long as it\n"
"                       likes. Without it, such strings are read again from\n"
"                       user space as hits print (? if not within 0.2 s);\n"
"                       the filter and --by see them unreadable\n"
"  -f, --filter EXPR    only hits where EXPR holds, decided in the kernel:\n"
"                       argN, pid, tid compared (== != < <= > >=) with an\n"
"                       integer, or argN == / != a \"string\" (also\n"
"                       str(argN, argM): argM's count of bytes), joined by\n"
"                       && and ||\n"
"      --count          count hits per probe name (across files: two\n"
"                       copies of a library are one row) instead of\n"
"                       printing them\n"
"      --by-pid         with --count, per process too\n"
"      --by KEY         with --count or --latency, per value of KEY too,\n"
"                       most hits first: argN, or str(argN) for the string\n"
"                       it points to (up to 63 bytes), or str(argN, argM)\n"
"                       for argM's count of its bytes (no NUL needed); or\n"
"                       up to 4 of them (2 strings) joined by commas,\n"
"                       printed as columns: --by 'str(arg1),arg2'\n"
"      --sum ARGN       with --count, also the sum of argument ARGN per\n"
"                       row (probe name, and pid, and --by key), a column\n"
"                       after the count: --count --by 'str(arg0)' --sum arg2\n"
"      --hist ARGN      log2 histogram of argument ARGN per probe name\n"
"      --latency START END\n"
"                       log2 histogram of the time from probe START to the\n"
"                       next END on the same thread, and unmatched counts\n""                       (with --by KEY: per key of START's arguments, the\n"
"                       pairs, their total and mean time, as bcc's\n"
"                       ucalls -L)\n"
"      --slower-than TIME\n"
"                       with --latency, also a line for each pair that\n"
"                       took TIME or more (500us, 10ms, 1.5s), as it ends:\n"
"                       TIME_NS PID TID COMM START -> END NS ns [KEY], the\n"
"                       --by KEY read at START (bcc's dbslower)\n"
"  -i, --interval SECS  print summaries every SECS seconds, not only at the end\n"
"      --listen [ADDR:]PORT\n"
"                       with --count, --hist or --latency (and --by: a\n"
"                       series per key), also serve the totals at\n"
"                       http://ADDR:PORT/metrics in Prometheus's\n"
"                       text format, until a signal or -d ends the trace\n"
"                       (the traced command or process ending does not);\n"
"                       ADDR defaults to 127.0.0.1 (this machine only),\n"
"                       0.0.0.0 or [::] serve every address\n"
"  -m, --mode MODE      auto (default), multi (uprobe_multi links) or perf\n"
"                       (one perf uprobe per call site)\n"
"  -b, --buffer-size N  the ring buffer's size in bytes (K and M suffixes;\n"
"                       rounded up to a power of two; default 8M)\n"
"  -q, --quiet          no \"tracing N probes\" line on stderr at the start\n"
"      --ustack         each hit's user stack, a frame a line (C++ names\n"
"                       demangled with the system's libstdc++, if any)\n"
"      --time-unit UNIT the times of lines (TIME_NS, --slower-than's,\n"
"                       --latency --by's total and mean) in us, ms or s\n"
"                       (decimals: 1234.567891 ms), not ns; --latency's\n"
"                       histogram in powers of two of the unit\n"
"      --text-only      print only each hit's FORMAT text (or its arguments),\n"
"                       without TIME_NS PID TID COMM PROVIDER:NAME: output\n"
"                       a script reads as the program's own\n"
"  -e, --enable PATTERN also attach these probes, only to set their\n"
"                       semaphores (their hits are not reported); e.g.\n"
"                       python:line, without which CPython 3.11 reports\n"
"                       few python:function__entry hits\n"
"      --allow-red-zone-writes\n"
"                       on x86_64, put the uprobe of a \"nop; nop5\" site on\n"
"                       the nop5, which Linux 6.18+ turns into a call: a\n"
"                       cheaper hit, but the kernel then writes below the\n"
"                       traced thread's stack pointer, into values a leaf\n"
"                       function keeps there (the red zone): only for\n"
"                       programs built with -mno-red-zone\n"
"  -h, --help           this help\n"
"\n"
"Examples:\n"
"  usdt trace -c './app -v' ./app 'myapp:*'\n"
"  usdt trace ./app -n 1\n"
"  usdt trace -p 1234 --count\n"
"  usdt trace -a -e python:line python:function__entry '%s %s:%d'\n"
"  usdt trace -a --count --by-pid python:function__entry\n"
"  usdt trace -p 1234 -e python:line /usr/bin/python3 \\\n"
"      python:function__entry '%s %s:%d'\n"
"  usdt trace -p 1234 libjvm.so hotspot:method__entry '%2$.*3$s.%4$.*5$s'\n"
"  usdt trace ./app myapp:request '%2$-20.20s status %1$03hhu'\n"
"  usdt trace ./app myapp:request '\"%d\", *(int32 *)(arg2 + 16)'\n""  usdt trace -p 1234 libjvm.so hotspot:method__entry \\\n"
"      '\"%s.%s\", str(arg1, arg2), str(arg3, arg4)'\n"
"  usdt trace --count --by 'str(arg1, arg2),str(arg3, arg4)' -p 1234 \\\n"
"      libjvm.so hotspot:method__entry\n"
"  usdt trace --count --by 'str(arg1)' -e python:line -p 1234 \\\n"
"      python:function__entry\n"
"  usdt trace -p 1234 --ustack myapp:request\n"
"  usdt trace --text-only -p 1234 myapp:request '%s %d'\n"
"  usdt trace ./a 'p:*' ./b 'q:*'         (two files, each its patterns)\n"
"  usdt trace '/usr/lib/*/libfoo*.so' 'foo:*'  (every file the glob names)\n"
"  usdt trace -q -b 64M ./app request     (\"request\" of any provider)\n"
"  usdt trace --filter 'arg1 == \"GET\"' ./app myapp:request\n"
"  usdt trace --count --by-pid -i 1 /usr/bin/python3 'python:*'\n"
"  usdt trace --hist 2 /usr/bin/python3 python:function__entry\n"
"  usdt trace --count --by-pid --listen 9100 /usr/bin/python3 'python:*'\n"
"  usdt trace --latency mysql:query__start mysql:query__done \\\n"
"      --by 'str(arg0)' --listen 9100 -p 1234 /usr/sbin/mysqld\n"
"  usdt trace --latency python:gc__start python:gc__done /usr/bin/python3\n"
"  usdt trace --latency mysql:query__start mysql:query__done \\\n"
"      --by 'str(arg0)' --slower-than 10ms -p 1234 /usr/sbin/mysqld\n"
"  usdt trace --filter 'arg2 > 100 && pid == 42' ./app myapp:request\n";
/* clang-format on */

static void on_signal(int sig)
{
	trace_stop_signal = sig;
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static bool parse_secs(const char *s, double *out)
{
	char *end;

	errno = 0;
	*out = strtod(s, &end);
	return !errno && !*end && end != s && *out > 0 && *out < 1e9;
}

/* ---------------------------------------------------------------------- */
/* Options                                                                */

/* --latency takes two words: join "START" "END" into one option argument
 * (separated by a newline, which no probe name has) before getopt. */
static char **join_latency(int argc, char **argv, int *argc_out, char **joined)
{
	char **v = calloc((size_t)argc + 1, sizeof(*v));
	int i, n = 0;

	*joined = NULL;
	if (!v)
		return NULL;
	for (i = 0; i < argc; i++) {
		v[n++] = argv[i];
		if (!strcmp(argv[i], "--"))
			break;
		if (strcmp(argv[i], "--latency") || i + 2 >= argc || *joined)
			continue;
		if (asprintf(joined, "%s\n%s", argv[i + 1], argv[i + 2]) < 0) {
			free(v);
			return NULL;
		}
		v[n++] = *joined;
		i += 2;
	}
	for (i++; i < argc; i++)
		v[n++] = argv[i];
	*argc_out = n;
	return v;
}

static int set_mode(struct trace_opts *o, enum trace_mode m)
{
	if (o->sum.mode != TRACE_EVENTS && o->sum.mode != m)
		return tool_err(
			"trace: --count, --hist and --latency exclude each other");
	o->sum.mode = m;
	return 0;
}

/* One part of --by at *p, consumed: argN, str(argN) or str(argN, argM);
 * *strs counts the string parts. 0, -EINVAL, or -E2BIG: a string too
 * many. */
static int by_part_parse(const char **p, struct trace_by_part *bp, int *strs)
{
	const char *s = *p;
	int a, n;
	char *end;
	long v;

	if (!trace_str_expr(&s, &a, &n)) {
		if (*strs == TRACE_BY_STRS)
			return -E2BIG;
		*bp = (struct trace_by_part){ .arg = (uint8_t)a,
					      .str = (uint8_t)++ * strs,
					      .len_arg = (uint8_t)(n + 1) };
		*p = s;
		return 0;
	}
	if (strncmp(s, "arg", 3) || s[3] < '0' || s[3] > '9')
		return -EINVAL;
	errno = 0;
	v = strtol(s + 3, &end, 10);
	if (errno || v >= TRACE_MAX_ARGS)
		return -EINVAL;
	*bp = (struct trace_by_part){ .arg = (uint8_t)v };
	*p = end;
	return 0;
}

/* --by PART[,PART]...: the key's parts, printed as columns in order. */
static int parse_by(struct trace_opts *o, const char *arg)
{
	struct sum_cfg *c = &o->sum;
	const char *p = arg;
	int strs = 0, err, i;

	if (c->by_cnt)
		return tool_err("trace: --by given twice ('%s', then '%s'): give one --by, its parts joined by commas, as in --by '%s,%s'",
				c->by_word, arg, c->by_word, arg);
	c->by_word = arg;
	do {
		struct trace_by_part *bp = &c->by[c->by_cnt];

		while (*p == ' ')
			p++;
		if (c->by_cnt == TRACE_BY_PARTS)
			return tool_err("trace: --by '%s': more than %d parts",
					arg, TRACE_BY_PARTS);
		err = by_part_parse(&p, bp, &strs);
		if (err == -E2BIG)
			return tool_err("trace: --by '%s': more than %d strings",
					arg, TRACE_BY_STRS);
		if (err)
			goto bad;
		for (i = 0; i < c->by_cnt; i++)
			if (c->by[i].arg == bp->arg)
				return tool_err("trace: --by '%s': arg%d is in two parts",
						arg, bp->arg);
		c->by_cnt++;
		while (*p == ' ')
			p++;
	} while (*p == ',' && p++);
	if (!*p)
		return 0;
bad:
	return tool_err("trace: bad --by '%s' (parts joined by commas, each argN, str(argN), or str(argN, argM) for a string of argM bytes; N and M from 0 to %d)",
			arg, TRACE_MAX_ARGS - 1);
}

/* --time-unit ns|us|ms|s: the digits of fraction the times get. */
static int parse_time_unit(struct trace_opts *o, struct trace_ctx *ctx,
			   const char *arg)
{
	static const char *const units[] = { "ns", "us", "ms", "s" };
	int i;

	for (i = 0; i < 4; i++)
		if (!strcmp(arg, units[i])) {
			ctx->time_digits = o->sum.time_digits = 3 * i;
			return 0;
		}
	return tool_err("trace: bad --time-unit '%s' (ns, us, ms or s)", arg);
}

/* --slower-than N[ns|us|ms|s]: a unit is needed (bcc's dbslower takes ms,
 * bpftrace ns: a bare number would mean one of them by surprise). */
static int parse_duration(struct trace_opts *o, const char *arg)
{
	static const struct {
		const char *unit;
		double ns;
	} units[] = {
		{ "ns", 1 },
		{ "us", 1e3 },
		{ "ms", 1e6 },
		{ "s", 1e9 },
	};
	char *end;
	double v;
	size_t i;

	errno = 0;
	v = strtod(arg, &end);
	for (i = 0; end != arg && i < sizeof(units) / sizeof(units[0]); i++)
		if (!strcmp(end, units[i].unit))
			break;
	if (errno || end == arg || i == sizeof(units) / sizeof(units[0]) ||
	    !(v > 0) || v * units[i].ns >= 1e18 || v * units[i].ns < 1)
		return tool_err("trace: bad --slower-than '%s' (a time above 0 with its unit: 500us, 10ms, 1.5s, 200ns)",
				arg);
	o->sum.slower_ns = (uint64_t)(v * units[i].ns);
	return 0;
}

/* The largest ring buffer -b takes: 1 GiB. */
#define TRACE_RB_MAX (1u << 30)

/* -b N[K|M]: a power of two from one page to TRACE_RB_MAX, rounded up. */
static int parse_rb_size(struct trace_opts *o, const char *arg)
{
	unsigned long long n, page = (unsigned long long)sysconf(_SC_PAGESIZE);
	unsigned int shift = 0;
	char *end;

	errno = 0;
	n = strtoull(arg, &end, 10);
	if (*end == 'K' || *end == 'k')
		shift = 10, end++;
	else if (*end == 'M' || *end == 'm')
		shift = 20, end++;
	if (errno || *end || end == arg || *arg == '-' || !n ||
	    n > TRACE_RB_MAX >> shift)
		return tool_err("trace: bad buffer size '%s' (1 to 1G bytes)",
				arg);
	n <<= shift;
	o->rb_size = (uint32_t)page;
	while (o->rb_size < n)
		o->rb_size <<= 1;
	return 0;
}

static int parse_long_opt(struct trace_opts *o, int c, char *arg)
{
	char *end;
	long n;

	switch (c) {
	case 'C':
		return set_mode(o, TRACE_COUNT);
	case 'P':
		o->sum.by_pid = true;
		return 0;
	case 'H':
		if (!strncmp(arg, "arg", 3))
			arg += 3;
		errno = 0;
		n = strtol(arg, &end, 10);
		if (errno || *end || end == arg || n < 0 || n >= TRACE_MAX_ARGS)
			return tool_err("trace: bad argument number for --hist (0 to %d)",
					TRACE_MAX_ARGS - 1);
		o->sum.hist_arg = (int)n;
		return set_mode(o, TRACE_HIST);
	case 'A':
		if (!strncmp(arg, "arg", 3))
			arg += 3;
		errno = 0;
		n = strtol(arg, &end, 10);
		if (errno || *end || end == arg || n < 0 || n >= TRACE_MAX_ARGS)
			return tool_err("trace: bad argument number for --sum (0 to %d)",
					TRACE_MAX_ARGS - 1);
		o->sum.sum_arg = (int)n;
		return 0;
	case 'T':
		return parse_duration(o, arg);
	case 'L':
		end = strchr(arg, '\n');
		if (!end)
			return tool_err(
				"trace: --latency takes two probes, START and END");
		*end = '\0';
		o->sum.lat_start = arg;
		o->sum.lat_end = end + 1;
		return set_mode(o, TRACE_LATENCY);
	case 'b':
		return parse_rb_size(o, arg);
	case 'B':
		return parse_by(o, arg);
	case 'U':
		o->ustack = true;
		return 0;
	case 'X':
		o->text_only = true;
		return 0;
	case 'F':
		o->fault_in = true;
		return 0;
	case 'q':
		o->quiet = true;
		return 0;
	case 'W':
		o->listen = arg;
		return 0;
	case 'R':
		o->red_zone = true;
		return 0;
	case 'e':
		o->enables[o->enable_cnt++] = arg;
		return 0;
	case 's':
		errno = 0;
		n = strtol(arg, &end, 10);
		if (errno || *end || end == arg || n < 2 || n > TRACE_STR_MAX)
			return tool_err("trace: bad string size '%s' (2 to %d)",
					arg, TRACE_STR_MAX);
		o->str_size = (unsigned int)n;
		return 0;
	}
	return 2;
}

static int parse_opt(struct trace_opts *o, struct trace_ctx *ctx, int c,
		     char *arg)
{
	char *end;

	switch (c) {
	case 'p':
		o->pid = parse_pid(arg);
		return o->pid < 0 ? tool_err("trace: bad pid '%s'", arg) : 0;
	case 'c':
		o->cmd = arg;
		return 0;
	case 'a':
		o->all = true;
		return 0;
	case 'j':
		ctx->json = o->sum.json = true;
		return 0;
	case 'u':
		return parse_time_unit(o, ctx, arg);
	case 'n':
		errno = 0;
		ctx->max_count = strtol(arg, &end, 10);
		if (errno || *end || end == arg || ctx->max_count <= 0)
			return tool_err("trace: bad count '%s'", arg);
		return 0;
	case 'd':
		return parse_secs(arg, &o->duration) ?
			       0 :
			       tool_err("trace: bad duration '%s'", arg);
	case 'i':
		return parse_secs(arg, &o->interval) ?
			       0 :
			       tool_err("trace: bad interval '%s'", arg);
	case 'f':
		o->filter = arg;
		return 0;
	case 'm':
		if (!strcmp(arg, "auto"))
			o->mode = USDT_MODE_AUTO;
		else if (!strcmp(arg, "multi"))
			o->mode = USDT_MODE_MULTI;
		else if (!strcmp(arg, "perf"))
			o->mode = USDT_MODE_PERF;
		else
			return tool_err("trace: bad mode '%s' (auto, multi or perf)",
					arg);
		return 0;
	}
	return parse_long_opt(o, c, arg);
}

/* Options that do not go together; sets what ctx takes from them. 0 or
 * 1. */
static int check_opts(const struct trace_opts *o, struct trace_ctx *ctx)
{
	if (o->pid && o->cmd)
		return tool_err("trace: -p and -c cannot be used together");
	if (o->all && (o->pid || o->cmd))
		return tool_err(
			"trace: -a traces every process: it goes with neither -p nor -c");
	if (o->all && o->sum.mode == TRACE_LATENCY)
		return tool_err(
			"trace: -a does not go with --latency (its probes are needed at the start)");
	if (o->sum.by_pid && o->sum.mode != TRACE_COUNT)
		return tool_err("trace: --by-pid goes with --count");
	if (o->sum.by_cnt && o->sum.mode != TRACE_COUNT &&
	    o->sum.mode != TRACE_LATENCY)
		return tool_err("trace: --by goes with --count or --latency");
	if (o->sum.sum_arg >= 0 && o->sum.mode != TRACE_COUNT)
		return tool_err("trace: --sum goes with --count");
	if (o->sum.slower_ns && o->sum.mode != TRACE_LATENCY)
		return tool_err("trace: --slower-than goes with --latency");
	ctx->text_only = o->text_only;
	if (ctx->text_only && (o->sum.mode != TRACE_EVENTS || ctx->json))
		return tool_err(
			"trace: --text-only goes with events' text, not with --json, --count, --hist or --latency");
	if (o->ustack && o->sum.mode != TRACE_EVENTS)
		return tool_err(
			"trace: --ustack goes with events, not with --count, --hist or --latency");
	ctx->ustack = o->ustack;
	ctx->str_size = o->str_size;
	if (o->interval && o->sum.mode == TRACE_EVENTS)
		return tool_err(
			"trace: -i goes with --count, --hist or --latency");
	if (o->listen && o->sum.mode == TRACE_EVENTS)
		return tool_err(
			"trace: --listen goes with --count, --hist or --latency");
	return 0;
}

/* Returns 0, or the exit status to return (2 for usage, 1 for a bad
 * value, -1 for --help). */
static int parse_args(int argc, char **argv, struct trace_opts *o,
		      struct trace_ctx *ctx)
{
	static const struct option longopts[] = {
		{ "pid", required_argument, NULL, 'p' },
		{ "all-processes", no_argument, NULL, 'a' },
		{ "command", required_argument, NULL, 'c' },
		{ "json", no_argument, NULL, 'j' },
		{ "limit", required_argument, NULL, 'n' },
		{ "duration", required_argument, NULL, 'd' },
		{ "interval", required_argument, NULL, 'i' },
		{ "filter", required_argument, NULL, 'f' },
		{ "string-size", required_argument, NULL, 's' },
		{ "count", no_argument, NULL, 'C' },
		{ "by-pid", no_argument, NULL, 'P' },
		{ "hist", required_argument, NULL, 'H' },
		{ "latency", required_argument, NULL, 'L' },
		{ "mode", required_argument, NULL, 'm' },
		{ "buffer-size", required_argument, NULL, 'b' },
		{ "by", required_argument, NULL, 'B' },
		{ "sum", required_argument, NULL, 'A' },
		{ "slower-than", required_argument, NULL, 'T' },
		{ "ustack", no_argument, NULL, 'U' },
		{ "text-only", no_argument, NULL, 'X' },
		{ "time-unit", required_argument, NULL, 'u' },
		{ "fault-in", no_argument, NULL, 'F' },
		{ "quiet", no_argument, NULL, 'q' },
		{ "enable", required_argument, NULL, 'e' },
		{ "allow-red-zone-writes", no_argument, NULL, 'R' },
		{ "listen", required_argument, NULL, 'W' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int c, err;

	o->enables = calloc((size_t)argc + 1, sizeof(*o->enables));
	if (!o->enables)
		return tool_err("trace: out of memory");
	optind = 1;
	while ((c = getopt_long(argc, argv, "p:ac:jn:d:i:f:s:m:b:qe:h",
				longopts, NULL)) != -1) {
		if (c == 'h') {
			fputs(trace_usage, stdout);
			return -1;
		}
		if (c == '?' || c == ':') {
			fputs(trace_usage, stderr);
			return 2;
		}
		err = parse_opt(o, ctx, c, optarg);
		if (err)
			return err;
	}
	o->pos = argv + optind;
	o->pos_cnt = argc - optind;
	o->pat_from = 1;
	/* -p PID alone, or with patterns first: every file it maps. A
	 * TARGET has a '/' or (without ':') names a file it maps. */
	if (o->pid > 0 && (!o->pos_cnt ||
			   (!strchr(o->pos[0], '/') &&
			    (strchr(o->pos[0], ':') || strchr(o->pos[0], '%') ||
			     !target_is_mapped(o->pos[0], o->pid)))))
		o->pat_from = 0;
	if (o->all && !o->pos_cnt && o->sum.mode != TRACE_LATENCY)
		return tool_err(
			"trace: -a needs a pattern that names a provider, as in -a python:function__entry");
	if (o->all)
		o->pat_from = 0; /* no TARGET: patterns alone */
	if (!o->pos_cnt && o->pat_from) {
		fputs(trace_usage, stderr);
		return 2;
	}
	return check_opts(o, ctx);
}

/* ---------------------------------------------------------------------- */
/* The command of -c                                                      */

/*
 * Split a command line into words the way a shell would, without any
 * expansion: blanks separate words; '...' is literal; "..." is literal
 * except \" \\ \$ \`; a backslash outside quotes takes the next character
 * as is. Returns a NULL-terminated vector whose words live in one block
 * after it (free the vector only), or NULL with errno EINVAL or ENOMEM.
 */
static char **split_command(const char *cmd)
{
	size_t len = strlen(cmd), max_words = len / 2 + 2;
	char **v = malloc(max_words * sizeof(*v) + len + 1);
	char *o = v ? (char *)(v + max_words) : NULL, q = 0;
	size_t n = 0;
	bool in_word = false;

	if (!v)
		return NULL;
	for (; *cmd; cmd++) {
		char c = *cmd;

		if (!q && (c == ' ' || c == '\t' || c == '\n')) {
			if (in_word)
				*o++ = '\0';
			in_word = false;
			continue;
		}
		if (!in_word) {
			v[n++] = o;
			in_word = true;
		}
		if (!q && (c == '\'' || c == '"')) {
			q = c;
		} else if (q == c) {
			q = 0;
		} else if (c == '\\' && q != '\'' && cmd[1] &&
			   (!q || strchr("\"\\$`", cmd[1]))) {
			*o++ = *++cmd;
		} else {
			*o++ = c;
		}
	}
	if (in_word)
		*o = '\0';
	v[n] = NULL;
	if (q || !n) {
		free(v);
		errno = EINVAL;
		return NULL;
	}
	return v;
}

/* The child of spawn_held(): wait for "g", then exec. Never returns. */
static void held_child(char **argv, int fds[2], pid_t parent)
{
	ssize_t n;
	char c = 0;

	close(fds[1]);
	signal(SIGINT, SIG_DFL);
	signal(SIGTERM, SIG_DFL);
	signal(SIGHUP, SIG_DFL);
	signal(SIGPIPE, SIG_DFL);
	/* If we die (even by SIGKILL), so does the command: it must not run
	 * on untraced. The flag survives exec. */
	if (prctl(PR_SET_PDEATHSIG, SIGKILL) || getppid() != parent)
		_exit(127);
	do
		n = read(fds[0], &c, 1);
	while (n < 0 && errno == EINTR);
	if (n != 1 || c != 'g')
		_exit(127);
	execvp(argv[0], argv);
	fprintf(stderr, "%s: trace: cannot run %s: %s\n", tool_name, argv[0],
		tool_strerror(errno));
	_exit(127);
}

/*
 * Fork CMD; the child waits until *go_fd is written, then execs. A child
 * that reads EOF instead (we failed, or died) exits 127 without running
 * anything untraced.
 */
static pid_t spawn_held(const char *cmd, int *go_fd)
{
	char **argv = split_command(cmd);
	pid_t pid, parent = getpid();
	int fds[2], err;

	if (!argv)
		return -1;
	if (pipe2(fds, O_CLOEXEC)) {
		free(argv);
		return -1;
	}
	fflush(NULL);
	pid = fork();
	if (!pid)
		held_child(argv, fds, parent);
	err = errno;
	close(fds[0]);
	free(argv);
	if (pid < 0) {
		close(fds[1]);
		errno = err;
		return -1;
	}
	*go_fd = fds[1];
	return pid;
}

static int exit_status(int status)
{
	if (WIFEXITED(status))
		return WEXITSTATUS(status);
	if (WIFSIGNALED(status))
		return 128 + WTERMSIG(status);
	return 1;
}

/* ---------------------------------------------------------------------- */
/* Tracing                                                                */

/* Has process pid ended? A zombie nobody reaps has: its pidfd polls
 * readable (or, without pidfds, /proc says Z or X). */
static bool pid_ended(pid_t pid, int pid_fd)
{
	struct pollfd pfd = { .fd = pid_fd, .events = POLLIN };

	if (pid_fd >= 0)
		return poll(&pfd, 1, 0) > 0;
	return usdt__proc_gone(pid);
}

/* Is stdout a pipe whose reader has gone? */
static bool stdout_gone(void)
{
	struct pollfd pfd = { .fd = STDOUT_FILENO, .events = 0 };

	return poll(&pfd, 1, 0) > 0 && (pfd.revents & (POLLERR | POLLHUP));
}

static uint64_t lost_count(const struct trace_run *r)
{
	return r->skel->bss->lost_events + r->skel->bss->lost_sums +
	       r->skel->bss->lost_overlap;
}

/* Has the command or process traced ended? (Said once.) */
static bool target_ended(struct trace_run *r, int *ret)
{
	int status;

	if (r->target_done)
		return false;
	if (r->child && waitpid(r->child, &status, WNOHANG) == r->child) {
		r->child_done = true;
		*ret = exit_status(status);
		r->target_done = true;
	} else if (r->o.pid && pid_ended(r->o.pid, r->pid_fd)) {
		r->target_done = true;
	}
	return r->target_done;
}

/* Should the trace end now (other than by -n or a write error)? With
 * --listen the totals are served on after the traced process ended, until
 * a signal or -d. */
static bool trace_over(struct trace_run *r, double deadline, int *ret)
{
	if (trace_stop_signal || (deadline && now_s() >= deadline))
		return true;
	if (target_ended(r, ret)) {
		if (!r->http)
			return true;
		fprintf(stderr,
			"%s: trace: %s ended; /metrics is served on until a signal%s\n",
			tool_name, r->child ? "the command" : "the process",
			r->o.duration > 0 ? " or -d" : "");
	}
	return !r->http && stdout_gone();
}

/*
 * --listen's page: the summary's totals, then the tool's own health. Built
 * in the poll loop between readings of the ring buffer, from the maps
 * (for --by, up to TRACE_BY_KEYS keys: a few milliseconds), so hits wait
 * in the ring buffer meanwhile, as they do while a summary prints.
 */
static int metrics_page(void *arg, struct prom_buf *b)
{
	struct trace_run *r = arg;
	size_t files, sites = trace_site_cnt(r, &files);
	int err = sum_metrics(r->sums, b);

	if (err)
		return err;
	prom_head(b, "usdt_lost_events_total", "counter",
		  "Events dropped because the ring buffer was full.");
	prom_printf(b, "usdt_lost_events_total %llu\n",
		    (unsigned long long)r->skel->bss->lost_events);
	prom_head(b, "usdt_lost_hits_total", "counter",
		  "Hits not counted: the summary map was full, or the call site could not be looked up.");
	prom_printf(b, "usdt_lost_hits_total %llu\n",
		    (unsigned long long)r->skel->bss->lost_sums);
	prom_head(b, "usdt_overlapped_hits_total", "counter",
		  "Hits skipped: 4 other runs of the program were under way on the same CPU (a preemptible kernel).");
	prom_printf(b, "usdt_overlapped_hits_total %llu\n",
		    (unsigned long long)r->skel->bss->lost_overlap);
	prom_head(b, "usdt_attached_probes", "gauge", "Probes attached.");
	prom_printf(b, "usdt_attached_probes %zu\n", r->attached);
	prom_head(b, "usdt_attached_sites", "gauge", "Call sites attached.");
	prom_printf(b, "usdt_attached_sites %zu\n", sites);
	prom_head(b, "usdt_attached_files", "gauge",
		  "Files with call sites attached.");
	prom_printf(b, "usdt_attached_files %zu\n", files);
	return b->oom ? -ENOMEM : 0;
}

/* Wait for hits up to 100 ms; with --listen, serve scrapes meanwhile
 * (trace_http.c never blocks). As ring_buffer__poll(). */
/* How long to wait for hits, ms: a TARGET that a process has yet to map
 * is looked for every 20 ms (its first hits come as soon as it is
 * mapped: a JVM runs its first methods right after it maps libjvm.so). */
static int wait_ms(const struct trace_run *r)
{
	int g;

	for (g = 0; g < r->group_cnt; g++)
		if (r->groups[g].wait_mapped && !r->groups[g].found)
			return 20;
	return 100;
}

static int wait_hits(struct trace_run *r)
{
	if (!r->http)
		return ring_buffer__poll(r->rb, wait_ms(r));
	if (!http_poll(r->http, ring_buffer__epoll_fd(r->rb), wait_ms(r)))
		return 0;
	return ring_buffer__consume(r->rb);
}

static int print_sums(struct trace_run *r, double t0, bool final)
{
	int err = sum_print(r->sums, now_s() - t0, lost_count(r), final,
			    bpf_map__fd(r->skel->maps.starts));

	if (err == -ENOMEM)
		return tool_err("trace: out of memory");
	if (err)
		r->ctx.write_err = -err;
	return err ? 1 : 0;
}

/* -a: a look at every process (trace_all.c), the next one due
 * TRACE_ALL_MS later, or 20 times as long as this one took: the looks
 * take at most 5% of a CPU. 0 or the exit status. */
static int all_look(struct trace_run *r)
{
	double t0 = now_s(), every = TRACE_ALL_MS / 1000.0, t;
	int err = trace_all_scan(r);

	t = now_s();
	if ((t - t0) * 20 > every)
		every = (t - t0) * 20;
	r->next_all = t + every;
	return err;
}

/* Poll until the end; returns the exit status. */
static int trace_loop(struct trace_run *r)
{
	double t0 = now_s(), deadline = 0, next = 0;
	int err, ret = 0;

	if (r->o.duration > 0)
		deadline = t0 + r->o.duration;
	if (r->o.interval > 0)
		next = t0 + r->o.interval;
	for (;;) {
		err = wait_hits(r);
		if (err == -ECANCELED)
			break;
		if (err < 0 && err != -EINTR)
			return tool_err("trace: reading events: %s",
					tool_strerror(-err));
		if (next && now_s() >= next) {
			if (print_sums(r, t0, false))
				break;
			next += r->o.interval;
		}
		/* (A process --listen serves on after has no maps to read.) */
		if (r->watch && !r->target_done && now_s() >= r->next_scan) {
			err = trace_watch_scan(r);
			if (err)
				return err;
			r->next_scan = now_s() + wait_ms(r) * 2 / 1000.0;
		}
		if (r->all && now_s() >= r->next_all) {
			err = all_look(r);
			if (err)
				return err;
		}
		if (r->follow && now_s() >= r->next_follow) {
			err = trace_follow_scan(r);
			if (err)
				return err;
			r->next_follow = now_s() + 0.2;
		}
		if (trace_over(r, deadline, &ret)) {
			/* Hits made just before the end are still queued. */
			ring_buffer__consume(r->rb);
			break;
		}
	}
	if (r->sums && !r->ctx.write_err && print_sums(r, t0, true) &&
	    !r->ctx.write_err)
		return 1;
	/* A reader that went away (| head) ends the trace normally, and so
	 * does a signal that cut a blocked write short. */
	if (r->ctx.write_err == EINTR && trace_stop_signal)
		r->ctx.write_err = 0;
	if (r->ctx.write_err && r->ctx.write_err != EPIPE)
		return tool_err("trace: writing the output: %s",
				tool_strerror(r->ctx.write_err));
	if (r->skel->bss->lost_events)
		tool_err("trace: %llu events lost (the ring buffer was full)",
			 (unsigned long long)r->skel->bss->lost_events);
	if (r->skel->bss->lost_sums)
		tool_err("trace: %llu hits not counted (the summary map was full, or the call site could not be looked up)",
			 (unsigned long long)r->skel->bss->lost_sums);
	if (r->skel->bss->lost_overlap)
		tool_err("trace: %llu hits skipped (4 other runs of the program were under way on the same CPU: the kernel preempted them, or they waited for faults)",
			 (unsigned long long)r->skel->bss->lost_overlap);
	return ret;
}

/*
 * The tool's own soft RLIMIT_NOFILE up to the hard limit: per-site perf
 * uprobes take two descriptors a site, the spec map one per chunk, and
 * libusdt never raises the limit of the program it serves. Ours uses no
 * select(). Called after -c's command is forked, which keeps the limit it
 * was given. A failure leaves the limit, and the library says what it
 * needs.
 */
static void raise_nofile(void)
{
	struct rlimit rl;

	if (getrlimit(RLIMIT_NOFILE, &rl) || rl.rlim_cur == rl.rlim_max)
		return;
	rl.rlim_cur = rl.rlim_max;
	setrlimit(RLIMIT_NOFILE, &rl);
}

/* Steps 3 to 5; returns the exit status. */
static int trace_start(struct trace_run *r)
{
	int err;

	raise_nofile();
	r->ctx.wall_off = wall_offset();
	err = trace_load(r);
	if (!err)
		err = trace_attach_all(r);
	if (err)
		return err;
	r->rb = ring_buffer__new(bpf_map__fd(r->skel->maps.events), on_hit,
				 &r->ctx, NULL);
	if (!r->rb)
		return tool_err("trace: cannot open the ring buffer: %s",
				tool_strerror(errno));
	if (r->o.sum.mode != TRACE_EVENTS) {
		r->sums = sum_new(&r->o.sum,
				  bpf_map__fd(r->o.sum.by_cnt ?
						      r->skel->maps.by_sums :
						      r->skel->maps.sums),
				  r->ctx.probes, r->ctx.probe_cnt);
		if (!r->sums)
			return tool_err("trace: out of memory");
		r->ctx.sums = r->sums;
	}
	if (r->all)
		err = all_look(r);
	if (err)
		return err;
	if (r->all && !r->attached)
		fprintf(stderr,
			"%s: trace: every process: no matching probes yet; waiting for processes that map them\n",
			tool_name);
	if (trace_stop_signal)
		return 128 + trace_stop_signal;
	trace_say_attached(r);
	if (r->child) {
		/* Everything is attached: let the command run. */
		if (write(r->go_fd, "g", 1) != 1)
			return tool_err("trace: cannot start the command: %s",
					tool_strerror(errno));
		close(r->go_fd);
		r->go_fd = -1;
	}
	return trace_loop(r);
}

/*
 * A bare word W names a provider ("W:*"). Where no traced file has a
 * provider W but some have a probe named W, it names that probe in every
 * provider ("*:W"), with a note when there are several.
 */
static void resolve_bare(struct trace_run *r, int g, struct pattern *pat)
{
	const char *seen = NULL;
	size_t others = 0;
	int f;

	for (f = 0; f < r->file_cnt; f++)
		if (r->files[f].group == g &&
		    pattern_bare_scan(pat, r->files[f].file, &seen, &others) ==
			    BARE_PROVIDER)
			return;
	if (!seen)
		return;
	if (others)
		fprintf(stderr,
			"%s: trace: note: no provider is named '%s'; tracing the probes of that name in every provider (%s and others)\n",
			tool_name, pat->provider, seen);
	free(pat->name);
	pat->name = pat->provider;
	pat->provider = strdup("*");
	if (!pat->provider) {
		pat->provider = pat->name;
		pat->name = NULL;
	}
}

/*
 * The tables of the files opened; bare words resolved first, against every
 * file of their TARGET. 0, or 1 (out of memory, said).
 */
static int build_tables(struct trace_run *r)
{
	struct selection *sel;
	int g, i;

	for (g = 0; g < r->group_cnt; g++) {
		sel = &r->groups[g].sel;
		for (i = 0; i < sel->pat_cnt; i++) {
			if (!sel->pats[i].bare)
				continue;
			resolve_bare(r, g, &sel->pats[i]);
			if (!sel->pats[i].name)
				return tool_err("trace: out of memory");
		}
	}
	for (i = 0; i < r->file_cnt; i++)
		if (r->files[i].file &&
		    trace_build_table(&r->files[i], i,
				      &r->groups[r->files[i].group].sel,
				      &r->ctx))
			return tool_err("trace: out of memory");
	return 0;
}

/* Open the files of TARGET word g; 0 or the exit status. A file a glob
 * matched that is no ELF file, or cannot be read, is skipped (said). */
static int open_group(struct trace_run *r, int g)
{
	const char *word = r->groups[g].target;
	int err, i, first = r->file_cnt;

	err = trace_files_add(word, r->o.pid, g, &r->files, &r->file_cnt);
	/* A library the process will map (a JVM's libjvm.so, dlopen()ed
	 * from a directory of its own): traced once it does. */
	if (err == -ENOENT && (r->o.pid || r->o.cmd) && !strchr(word, '/') &&
	    !strpbrk(word, "*?[")) {
		r->groups[g].wait_mapped = true;
		return 0;
	}
	if (err)
		return tool_err("trace: %s: %s", word,
				err == -ENOENT ?
					"no such file" :
				err == -E2BIG ?
					"the glob matches over 4096 files" :
					tool_strerror(-err));
	for (i = first; i < r->file_cnt; i++) {
		struct trace_file *f = &r->files[i];

		err = trace_open_file(f);
		if (!err)
			continue;
		if (err == -ENOMEM || !f->globbed)
			return tool_err("trace: %s: %s", f->target.shown,
					tool_open_error(&f->target, err));
		fprintf(stderr, "%s: trace: warning: %s: skipped: %s\n",
			tool_name, f->target.shown,
			tool_open_error(&f->target, err));
	}
	return 0;
}

/* Is a TARGET waiting for the process to map it? */
static bool waits_mapped(const struct trace_run *r)
{
	int g;

	for (g = 0; g < r->group_cnt; g++)
		if (r->groups[g].wait_mapped)
			return true;
	return false;
}

static const char *first_waiting(const struct trace_run *r)
{
	int g;

	for (g = 0; g < r->group_cnt; g++)
		if (r->groups[g].wait_mapped)
			return r->groups[g].target;
	return "";
}

/*
 * -a reads every file of every process that a pattern could match: one
 * that names no provider ('*', '*:NAME') would take every file with USDT
 * notes (libc's, in every process), so it is refused. 0 or the exit
 * status.
 */
static int all_check_patterns(const struct trace_run *r)
{
	const struct selection *sel = &r->groups[0].sel;
	const char *prov;
	int i;

	for (i = 0; i < sel->pat_cnt; i++) {
		prov = sel->pats[i].provider;
		if (prov[strspn(prov, "*?")])
			continue;
		return tool_err("trace: -a: '%s:%s' names no provider: every file with USDT probes in every process would be traced; name one, as in -a python:function__entry",
				prov, sel->pats[i].name);
	}
	return 0;
}

/* The files to trace, with their probes in the table; 0 or the exit
 * status. */
static int open_files(struct trace_run *r)
{
	int err, i;

	if (r->o.all) {
		r->shown = "every process";
		return all_check_patterns(r);
	}
	if (!r->o.pat_from) {
		snprintf(r->shown_buf, sizeof(r->shown_buf), "pid %d",
			 (int)r->o.pid);
		r->shown = r->shown_buf;
		r->file_cnt = trace_files_of_pid(r->o.pid, &r->files);
		if (r->file_cnt < 0) {
			err = -r->file_cnt;
			r->file_cnt = 0;
			return tool_err("trace: %s: %s", r->shown,
					tool_strerror(err));
		}
		/* Files that cannot be read or have no probes are not ours
		 * to complain about. */
		for (i = 0; i < r->file_cnt; i++)
			if (trace_open_file(&r->files[i]) == -ENOMEM)
				return tool_err("trace: out of memory");
		return build_tables(r);
	}
	r->shown = r->groups[0].target;
	for (i = 0; i < r->group_cnt; i++) {
		err = open_group(r, i);
		if (err)
			return err;
	}
	return build_tables(r);
}

/* Can word be a TARGET after the first? A path, with a '/': patterns
 * never have one (sdt.h's names are identifiers), formats have a '%'. */
static bool is_target_word(const char *word)
{
	return strchr(word, '/') && !strchr(word, '%');
}

/* Split the positional words into TARGETs and what follows each; parse
 * their patterns and formats. 0 or the exit status. */
static int make_groups(struct trace_run *r)
{
	const struct trace_opts *o = &r->o;
	struct trace_group *g;
	int i;

	r->groups = calloc((size_t)o->pos_cnt + 1, sizeof(*r->groups));
	if (!r->groups)
		return tool_err("trace: out of memory");
	g = r->groups;
	g->target = o->pat_from ? o->pos[0] : NULL;
	g->from = o->pat_from;
	r->group_cnt = 1;
	for (i = o->pat_from; i < o->pos_cnt; i++) {
		if (!is_target_word(o->pos[i]))
			continue;
		if (o->all)
			return tool_err("trace: '%s': -a takes patterns, no TARGET (every process's files are looked at)",
					o->pos[i]);
		if (!o->pat_from)
			return tool_err("trace: '%s': a TARGET comes first (with -p PID and patterns alone, every file the process maps is traced)",
					o->pos[i]);
		g->to = i;
		g = &r->groups[r->group_cnt++];
		g->target = o->pos[i];
		g->from = i + 1;
	}
	g->to = o->pos_cnt;
	for (i = 0; i < r->group_cnt; i++)
		if (trace_selection_parse(o, r->groups[i].from, r->groups[i].to,
					  &r->groups[i].sel))
			return 1;
	return 0;
}

/* Say which patterns of TARGET word g matched nothing. */
static void warn_group(const struct trace_run *r, int g)
{
	const struct selection *sel = &r->groups[g].sel;
	const char *in = r->group_cnt > 1 ? " in " : "";
	const char *target = r->group_cnt > 1 ? r->groups[g].target : "";
	const struct pattern *p;
	size_t k;
	int i;

	for (k = 0; !sel->pat_cnt && k < r->ctx.probe_cnt; k++)
		if (r->files[r->ctx.probes[k].file].group == g)
			break;
	if (!sel->pat_cnt && k == r->ctx.probe_cnt)
		fprintf(stderr, "%s: trace: warning: %s: no USDT probes\n",
			tool_name, r->groups[g].target);
	for (i = 0; i < sel->pat_cnt; i++) {
		p = &sel->pats[i];
		if (!p->used)
			fprintf(stderr,
				"%s: trace: warning: no probe matches %s:%s%s%s\n",
				tool_name, p->provider, p->name, in, target);
	}
}

static void warn_patterns(const struct trace_run *r)
{
	int g;

	if (r->o.sum.mode == TRACE_LATENCY)
		return; /* trace_check_table() says it */
	for (g = 0; g < r->group_cnt; g++)
		warn_group(r, g);
}

static bool file_has(struct usdt_file *file, const char *provider,
		     const char *name)
{
	size_t i, n = usdt_file__probe_cnt(file);
	const struct usdt_probe *q;

	for (i = 0; i < n; i++) {
		q = usdt_file__probe(file, i);
		if (q && !strcmp(usdt_probe__provider(q), provider) &&
		    !strcmp(usdt_probe__name(q), name))
			return true;
	}
	return false;
}

/*
 * CPython 3.11 (Debian 12's) fires python:function__entry and __return
 * for few calls unless python:line is enabled too: a run without it looks
 * broken and says nothing. Said where a traced file has python:line and
 * the run leaves it off.
 */
static void hint_python_line(const struct trace_run *r)
{
	const struct probe_ent *p;
	int file = -1;
	size_t k;

	for (k = 0; k < r->ctx.probe_cnt; k++) {
		p = &r->ctx.probes[k];
		if (strcmp(p->provider, "python"))
			continue;
		if (!strcmp(p->name, "line"))
			return;
		if (!strncmp(p->name, "function__", 10))
			file = p->file;
	}
	if (file >= 0 && file_has(r->files[file].file, "python", "line"))
		fprintf(stderr,
			"%s: trace: note: CPython 3.11 reports few python:function__* hits unless python:line is enabled too: add -e python:line\n",
			tool_name);
}

/* Does process pid map file now, by device and inode? 1, 0, or a
 * negative errno (unknown). */
static int pid_maps(pid_t pid, const struct usdt_file *file)
{
	const struct usdt__map_id *id;
	struct usdt__mapping m;
	char *line = NULL;
	size_t cap = 0;
	int is = usdt__file_map_id(file, &id);
	FILE *f;

	if (is)
		return is;
	f = usdt__maps_open(pid);
	if (!f)
		return -errno;
	while (!is && usdt__maps_next(f, &line, &cap, &m) > 0)
		if (m.exec)
			is = usdt__mapping_is(pid, &m, id);
	free(line);
	fclose(f);
	return is;
}

/* -p PID with files named: one the process does not map now is traced
 * once it does (an exec, a dlopen()); until then nothing comes, which a
 * note says rather than a silent trace. Named, not a glob's matches: a
 * read of the process's maps per file, for as many files as words. */
static void hint_unmapped(const struct trace_run *r)
{
	const struct trace_file *f;
	int i;

	if (!r->o.pid || r->o.cmd || r->all)
		return;
	for (i = 0; i < r->file_cnt; i++) {
		f = &r->files[i];
		if (!f->file || f->globbed || pid_maps(r->o.pid, f->file) != 0)
			continue;
		fprintf(stderr, "%s: trace: note: process %d does not map ",
			tool_name, (int)r->o.pid);
		print_escaped(stderr, f->target.shown, strlen(f->target.shown));
		fprintf(stderr,
			" now: its hits come once it does (an exec or dlopen())\n");
	}
}

/* Has any traced file a USDT note at all? */
static bool any_notes(const struct trace_run *r)
{
	int i;

	for (i = 0; i < r->file_cnt; i++)
		if (r->files[i].file && usdt_file__probe_cnt(r->files[i].file))
			return true;
	return false;
}

/* Steps 1 and 2; returns 0 or the exit status. */
/* Nothing to trace in the files named: why, as an error. A pattern is not
 * what is wrong with a file of no notes (a binary built without
 * <sys/sdt.h>, a stripped copy). */
static int no_probes(const struct trace_run *r, const struct selection *sel)
{
	if (!any_notes(r) && r->file_cnt == 1)
		return tool_err("trace: '%s' has no USDT probes (no .note.stapsdt section)",
				r->files[0].target.shown);
	if (!any_notes(r))
		return tool_err("trace: %s: none of its files has USDT probes",
				r->shown);
	if (sel->pat_cnt)
		return tool_err("trace: %s: no probes matching %s:%s%s",
				r->shown, sel->pats[0].provider,
				sel->pats[0].name,
				sel->pat_cnt > 1 || r->group_cnt > 1 ? " ..." :
								       "");
	return tool_err("trace: %s: no USDT probes", r->shown);
}

static int trace_prepare(struct trace_run *r)
{
	const struct selection *sel;
	int err;

	if (r->o.pid && pid_check("trace", r->o.pid))
		return 1;
	err = make_groups(r);
	if (!err)
		err = open_files(r);
	if (err)
		return err;
	/* -a: the files come with the first look, once the BPF side is in
	 * (trace_start()). */
	r->all = r->o.all;
	if (r->all) {
		r->attach_pid = -1; /* every process */
		return 0;
	}
	sel = &r->groups[0].sel;
	/* -p PID alone: files it maps later are traced too (not with
	 * --latency, whose roles are fixed at the start). */
	r->watch = (!r->o.pat_from || waits_mapped(r)) &&
		   r->o.sum.mode != TRACE_LATENCY;
	/* Named files, every process: one a package upgrade replaces is
	 * followed to the new file (not with --latency either). */
	r->follow = r->o.pat_from && !r->o.pid && !r->o.cmd &&
		    r->o.sum.mode != TRACE_LATENCY;
	if (waits_mapped(r) && r->o.sum.mode == TRACE_LATENCY)
		return tool_err("trace: %s: no such file (--latency needs its probes at the start)",
				first_waiting(r));
	if (waits_mapped(r)) {
		fprintf(stderr,
			"%s: trace: %s: not mapped yet; waiting for the %s to map it\n",
			tool_name, first_waiting(r),
			r->o.cmd ? "command" : "process");
	} else if (!r->ctx.probe_cnt && r->watch) {
		fprintf(stderr,
			"%s: trace: %s: no %sprobes yet; waiting for the files it maps\n",
			tool_name, r->shown, sel->pat_cnt ? "matching " : "");
	} else if (!r->ctx.probe_cnt) {
		return no_probes(r, sel);
	}
	if (!r->watch) /* else they may match files mapped later */
		warn_patterns(r);
	hint_python_line(r);
	hint_unmapped(r);
	/* --latency: every group's first two patterns are START and END. */
	err = trace_check_table(&r->ctx, &r->o, sel);
	if (err)
		return err;
	r->by_pattern = r->ctx.probe_cnt >= TRACE_BY_PATTERN_MIN &&
			trace_patterns_disjoint(r);
	if (r->o.pid)
		r->pid_fd = (int)syscall(SYS_pidfd_open, r->o.pid, 0);
	if (r->o.cmd) {
		r->child = spawn_held(r->o.cmd, &r->go_fd);
		if (r->child < 0) {
			r->child = 0;
			return tool_err("trace: cannot start '%s': %s",
					r->o.cmd,
					errno == EINVAL ? "bad command line" :
							  tool_strerror(errno));
		}
	}
	r->attach_pid = r->child ? r->child : r->o.pid ? r->o.pid : -1;
	return 0;
}

static int start_listen(struct trace_run *r)
{
	char why[512];

	if (!r->o.listen)
		return 0;
	r->http = http_listen(r->o.listen, metrics_page, r, why, sizeof(why));
	return r->http ? 0 : tool_err("trace: --listen: %s", why);
}

static void trace_cleanup(struct trace_run *r)
{
	int status;
	size_t i;

	if (r->go_fd >= 0)
		close(r->go_fd); /* a held child reads EOF and exits 127 */
	http_free(r->http);
	ring_buffer__free(r->rb);
	sum_free(r->sums);
	for (i = 0; i < r->ctx.probe_cnt; i++)
		usdt_link__destroy(r->ctx.probes[i].link);
	for (i = 0; i < (size_t)r->pat_link_cnt; i++)
		usdt_link__destroy(r->pat_links[i]);
	free(r->pat_links);
	free(r->ctx.site_refs);
	usdt_manager__free(r->man);
	usdt_trace__destroy(r->skel);
	if (r->child && !r->child_done) {
		/* We stopped first (-n, -d, a signal, an error): the command
		 * would run on untraced, so end it. */
		kill(r->child, SIGTERM);
		while (waitpid(r->child, &status, 0) < 0 && errno == EINTR)
			;
	}
	if (r->pid_fd >= 0)
		close(r->pid_fd);
	free(r->ctx.probes);
	trace_watch_free(r);
	trace_all_free(r);
	trace_files_free(r->files, r->file_cnt);
	stack_free(r->ctx.stacks);
	for (i = 0; r->groups && i < (size_t)r->group_cnt; i++)
		trace_selection_free(&r->groups[i].sel);
	free(r->groups);
}

int cmd_trace(int argc, char **argv)
{
	struct trace_run r = { .go_fd = -1,
			       .pid_fd = -1,
			       .o = { .str_size = 64, .sum.sum_arg = -1 } };
	struct sigaction sa;
	char **args, *joined;
	int n, ret;

	/* A closed stdout would be taken by the next open() (a BPF map, the
	 * traced file), and the output written there. */
	if (stdout_closed("trace"))
		return 1;
	args = join_latency(argc, argv, &n, &joined);
	if (!args)
		return tool_err("trace: out of memory");
	ret = parse_args(n, args, &r.o, &r.ctx);
	if (ret) {
		ret = ret < 0 ? 0 : ret;
		goto out;
	}
	/* From here a signal ends the tool cleanly, whatever step it is in;
	 * a closed stdout is a write error, not a death by SIGPIPE. */
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);

	/* --listen's port first: a busy one fails before anything is read,
	 * started or attached. */
	ret = start_listen(&r);
	if (!ret)
		ret = trace_prepare(&r);
	if (!ret && trace_stop_signal)
		ret = 128 + trace_stop_signal;
	if (!ret)
		ret = trace_start(&r);
	trace_cleanup(&r);
out:
	free(r.o.enables);
	free(args);
	free(joined);
	/* A read still held in the kernel (trace_peek.c) ends only with the
	 * process: end it now, without the atexit handlers, one of which
	 * (LeakSanitizer's, in sanitizer builds) first stops every thread
	 * and would wait for that one as long as the page is held. */
	if (trace_peek_stuck()) {
		fflush(NULL);
		_exit(ret);
	}
	return ret;
}
