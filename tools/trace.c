// SPDX-License-Identifier: BSD-2-Clause
/*
 * `usdt trace`: attach tools/usdt_trace.bpf.c to every matching probe of a
 * file and print each hit with its arguments, as they come.
 *
 * The order of things matters:
 *  1. read the file and build the table of matching probes (provider,
 *     name, and how to print each argument); a probe's index in the table
 *     is its cookie;
 *  2. with -c, fork the command; the child waits on a pipe before exec,
 *     so nothing it does can be missed;
 *  3. open the skeleton, create the manager BEFORE load (it may resize
 *     maps and prepare the program for uprobe_multi), load;
 *  4. attach each probe with its cookie, for the pid (the child's, -p's,
 *     or -1 for all); uprobes live on the file's inode and are filtered by
 *     the process's mm, which exec replaces in the same task, so an attach
 *     made before the child's exec covers the program it becomes;
 *  5. release the child, poll the ring buffer until the end (-n, -d, a
 *     signal, the command or the process ending), then undo 4 and 3.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <math.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <wordexp.h>

#include <bpf/libbpf.h>

#include "tool.h"
#include "trace_event.h"
#include "usdt_trace.skel.h"

static const char trace_usage[] =
"Usage: usdt trace [-p PID | -c 'CMD ARGS'] [--json] [-n COUNT] [-d SECONDS]\n"
"                  TARGET [PROVIDER[:NAME]]...\n"
"\n"
"Print one line per hit of the matching probes of TARGET (a binary or a\n"
"library, by path or by bare name such as libc.so.6), in time order:\n"
"  TIME_NS PID TID COMM PROVIDER:NAME ARG0 ARG1 ...\n"
"Arguments print as signed or unsigned decimals, floats as floats, and ?\n"
"when they cannot be read (why, once per probe and argument, on stderr).\n"
"Without a pattern every probe of TARGET is traced. Needs root.\n"
"\n"
"  -p, --pid PID        trace only process PID (and its threads)\n"
"  -c, --command CMD    run CMD (split into words like a shell would, without\n"
"                       expansions), trace only it, and exit with its status\n"
"  -j, --json           one JSON object per line instead\n"
"  -n, --count COUNT    stop after COUNT hits\n"
"  -d, --duration SECS  stop after SECS seconds\n"
"  -m, --mode MODE      auto (default), multi (uprobe_multi links) or perf\n"
"                       (one perf uprobe per call site)\n"
"  -h, --help           this help\n";

/* How one argument of a probe prints. Taken from the probe's first call
 * site: call sites of one probe nearly always agree. */
struct arg_fmt {
	bool is_signed;
	bool is_float;
	int size;
	const char *reason;	/* why it cannot be read, from the note */
	bool warned;		/* the reason has been printed */
};

struct probe_ent {
	const char *provider;	/* borrowed from the usdt_file */
	const char *name;
	int arg_cnt;
	struct arg_fmt args[TRACE_MAX_ARGS];
	struct usdt_link *link;
};

struct trace_ctx {
	bool json;
	long max_count;
	long count;
	struct probe_ent *probes;
	size_t probe_cnt;
};

static volatile sig_atomic_t stop_signal;

static void on_signal(int sig)
{
	stop_signal = sig;
}

/* ---------------------------------------------------------------------- */
/* Printing                                                               */

/* The shortest decimal that reads back as the same double. */
static void print_double(FILE *f, double d, bool json)
{
	char buf[40];
	int prec;

	if (!isfinite(d)) {
		fputs(json ? "null" : (isnan(d) ? "nan" :
				       d > 0 ? "inf" : "-inf"), f);
		return;
	}
	for (prec = 1; prec <= 17; prec++) {
		snprintf(buf, sizeof(buf), "%.*g", prec, d);
		if (strtod(buf, NULL) == d)
			break;
	}
	fputs(buf, f);
}

static void print_float(FILE *f, float v, bool json)
{
	char buf[40];
	int prec;

	if (!isfinite(v)) {
		print_double(f, v, json);
		return;
	}
	for (prec = 1; prec <= 9; prec++) {
		snprintf(buf, sizeof(buf), "%.*g", prec, (double)v);
		if (strtof(buf, NULL) == v)
			break;
	}
	fputs(buf, f);
}

static void print_value(FILE *f, const struct arg_fmt *fmt, int size,
			uint64_t v, bool json)
{
	if (!size)
		size = fmt->size > 8 ? 8 : fmt->size;
	if (fmt->is_float && size == 4) {
		uint32_t bits = (uint32_t)v;
		float fl;

		memcpy(&fl, &bits, sizeof(fl));
		print_float(f, fl, json);
	} else if (fmt->is_float && size == 8) {
		double d;

		memcpy(&d, &v, sizeof(d));
		print_double(f, d, json);
	} else if (size < 8 || fmt->is_signed) {
		/*
		 * Below 8 bytes, bpf_usdt_arg() has already sign- or
		 * zero-extended the value as this call site's spec says, so
		 * reading it as int64 is right for both (and for call sites
		 * that disagree with the first one).
		 */
		fprintf(f, "%" PRId64, (int64_t)v);
	} else {
		fprintf(f, "%" PRIu64, v);
	}
}

static void warn_unreadable(struct probe_ent *p, int i, int err)
{
	struct arg_fmt *fmt = &p->args[i];

	if (fmt->warned)
		return;
	fmt->warned = true;
	if (err == EOPNOTSUPP || err == ENOTSUP)
		tool_err("%s:%s: argument %d cannot be read: %s", p->provider,
			 p->name, i, fmt->reason ? fmt->reason :
			 "not supported");
	else
		tool_err("%s:%s: argument %d cannot be read: %s", p->provider,
			 p->name, i, strerror(err ? err : EFAULT));
}

static int on_hit(void *data, void *raw, size_t len)
{
	struct trace_ctx *ctx = data;
	const struct usdt_hit *e = raw;
	static const struct arg_fmt unknown = { .size = 8 };
	struct probe_ent *p;
	char comm[TRACE_COMM_LEN + 1];
	int i, cnt;

	if (len < sizeof(*e) || e->cookie >= ctx->probe_cnt)
		return 0;
	if (ctx->max_count && ctx->count >= ctx->max_count)
		return -ECANCELED;
	p = &ctx->probes[e->cookie];
	memcpy(comm, e->comm, TRACE_COMM_LEN);
	comm[TRACE_COMM_LEN] = '\0';
	cnt = e->arg_cnt < 0 ? 0 : e->arg_cnt;
	if (cnt > TRACE_MAX_ARGS)
		cnt = TRACE_MAX_ARGS;

	if (ctx->json) {
		printf("{\"ts\": %" PRIu64 ", \"pid\": %u, \"tid\": %u, \"comm\": ",
		       (uint64_t)e->ts, e->pid, e->tid);
		json_str(stdout, comm);
		fputs(", \"provider\": ", stdout);
		json_str(stdout, p->provider);
		fputs(", \"name\": ", stdout);
		json_str(stdout, p->name);
		fputs(", \"args\": [", stdout);
	} else {
		printf("%" PRIu64 " %u %u %s %s:%s", (uint64_t)e->ts, e->pid,
		       e->tid, comm, p->provider, p->name);
	}
	for (i = 0; i < cnt; i++) {
		const struct arg_fmt *fmt = i < p->arg_cnt ? &p->args[i] :
							     &unknown;

		fputs(ctx->json ? (i ? ", " : "") : " ", stdout);
		if (e->err_mask & (1u << i)) {
			fputs(ctx->json ? "null" : "?", stdout);
			if (i < p->arg_cnt)
				warn_unreadable(p, i, e->errs[i]);
			continue;
		}
		print_value(stdout, fmt, e->sizes[i], e->args[i], ctx->json);
	}
	fputs(ctx->json ? "]}\n" : "\n", stdout);
	fflush(stdout);
	ctx->count++;
	if (ctx->max_count && ctx->count >= ctx->max_count)
		return -ECANCELED;
	return 0;
}

/* ---------------------------------------------------------------------- */
/* The table of probes                                                    */

static int find_probe(const struct probe_ent *t, size_t cnt,
		      const char *provider, const char *name)
{
	size_t i;

	for (i = 0; i < cnt; i++)
		if (!strcmp(t[i].provider, provider) && !strcmp(t[i].name, name))
			return (int)i;
	return -1;
}

/* One entry per distinct provider:name of the file that a pattern
 * matches, in note order. */
static int build_table(struct usdt_file *file, struct pattern *pats,
		       int pat_cnt, struct probe_ent **out, size_t *cnt_out)
{
	size_t i, n = usdt_file__probe_cnt(file), cnt = 0;
	struct probe_ent *t;
	int j;

	*out = NULL;
	*cnt_out = 0;
	t = calloc(n ? n : 1, sizeof(*t));
	if (!t)
		return -ENOMEM;
	for (i = 0; i < n; i++) {
		const struct usdt_probe *p = usdt_file__probe(file, i);
		struct probe_ent *e;

		if (!p || !patterns_match(pats, pat_cnt, usdt_probe__provider(p),
					  usdt_probe__name(p)))
			continue;
		if (find_probe(t, cnt, usdt_probe__provider(p),
			       usdt_probe__name(p)) >= 0)
			continue;
		e = &t[cnt++];
		e->provider = usdt_probe__provider(p);
		e->name = usdt_probe__name(p);
		e->arg_cnt = usdt_probe__status(p) < 0 ? 0 :
			     usdt_probe__arg_cnt(p);
		if (e->arg_cnt > TRACE_MAX_ARGS)
			e->arg_cnt = TRACE_MAX_ARGS;
		for (j = 0; j < e->arg_cnt; j++) {
			struct usdt_arg_info a = { .sz = sizeof(a) };

			e->args[j].size = 8;
			if (usdt_probe__arg(p, j, &a) < 0)
				continue;
			e->args[j].size = a.size;
			e->args[j].is_signed = a.is_signed;
			e->args[j].is_float = a.is_float;
			if (a.kind == USDT_ARG_UNSUPPORTED)
				e->args[j].reason = a.reason;
		}
	}
	*out = t;
	*cnt_out = cnt;
	return 0;
}

/* A name from the notes as a glob that matches only itself. */
static char *glob_escape(const char *s)
{
	char *out = malloc(strlen(s) * 2 + 1), *o = out;

	if (!out)
		return NULL;
	for (; *s; s++) {
		if (strchr("*?[]\\", *s))
			*o++ = '\\';
		*o++ = *s;
	}
	*o = '\0';
	return out;
}

/* ---------------------------------------------------------------------- */
/* The command of -c                                                      */

/*
 * Fork CMD; the child waits until *go_fd is written, then execs. A child
 * that reads EOF instead (we failed, or died) exits 127 without running
 * anything untraced.
 */
static pid_t spawn_held(const char *cmd, int *go_fd)
{
	wordexp_t we;
	int fds[2], err;
	ssize_t n;
	pid_t pid;
	char c;

	err = wordexp(cmd, &we, WRDE_NOCMD);
	if (err || !we.we_wordc) {
		if (!err)
			wordfree(&we);
		errno = EINVAL;
		return -1;
	}
	if (pipe2(fds, O_CLOEXEC)) {
		wordfree(&we);
		return -1;
	}
	fflush(NULL);
	pid = fork();
	if (pid < 0) {
		err = errno;
		close(fds[0]);
		close(fds[1]);
		wordfree(&we);
		errno = err;
		return -1;
	}
	if (!pid) {
		close(fds[1]);
		signal(SIGINT, SIG_DFL);
		signal(SIGTERM, SIG_DFL);
		c = 0;
		do
			n = read(fds[0], &c, 1);
		while (n < 0 && errno == EINTR);
		if (n != 1 || c != 'g')
			_exit(127);
		execvp(we.we_wordv[0], we.we_wordv);
		fprintf(stderr, "%s: trace: cannot run %s: %s\n", tool_name,
			we.we_wordv[0], strerror(errno));
		_exit(127);
	}
	close(fds[0]);
	wordfree(&we);
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

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int silent_print(enum libbpf_print_level level, const char *fmt,
			va_list ap)
{
	if (level != LIBBPF_WARN)
		return 0;
	if (getenv("USDT_DEBUG"))
		return vfprintf(stderr, fmt, ap);
	return 0;
}

static const char *attach_error(int err)
{
	switch (err) {
	case ENOENT:
		return "no such probe or file";
	case EPERM:
	case EACCES:
		return "permission denied (not root?)";
	case ENOTSUP:
		return "not supported (another architecture, or the kernel "
		       "lacks a feature)";
	case E2BIG:
		return "too many call sites for the BPF maps";
	case ENOSYS:
		return "this libusdt cannot attach yet (ENOSYS)";
	default:
		return strerror(err);
	}
}

int cmd_trace(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "pid", required_argument, NULL, 'p' },
		{ "command", required_argument, NULL, 'c' },
		{ "json", no_argument, NULL, 'j' },
		{ "count", required_argument, NULL, 'n' },
		{ "duration", required_argument, NULL, 'd' },
		{ "mode", required_argument, NULL, 'm' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct trace_ctx ctx = { 0 };
	struct usdt_trace *skel = NULL;
	struct usdt_manager *man = NULL;
	struct ring_buffer *rb = NULL;
	struct usdt_file *file = NULL;
	struct pattern *pats = NULL;
	struct target target = { 0 };
	enum usdt_attach_mode mode = USDT_MODE_AUTO;
	const char *cmd = NULL;
	double duration = 0, deadline = 0;
	int c, err, ret = 1, pat_cnt = 0, go_fd = -1, status;
	pid_t pid = 0, child = 0, attach_pid;
	bool child_done = false;
	USDT_OPTS(usdt_manager_opts, mopts);
	struct sigaction sa;
	size_t i;
	char *end;

	optind = 1;
	while ((c = getopt_long(argc, argv, "+p:c:jn:d:m:h", longopts,
				NULL)) != -1) {
		switch (c) {
		case 'p':
			pid = parse_pid(optarg);
			if (pid < 0)
				return tool_err("trace: bad pid '%s'", optarg);
			break;
		case 'c':
			cmd = optarg;
			break;
		case 'j':
			ctx.json = true;
			break;
		case 'n':
			errno = 0;
			ctx.max_count = strtol(optarg, &end, 10);
			if (errno || *end || end == optarg || ctx.max_count <= 0)
				return tool_err("trace: bad count '%s'", optarg);
			break;
		case 'd':
			errno = 0;
			duration = strtod(optarg, &end);
			if (errno || *end || end == optarg || !(duration > 0))
				return tool_err("trace: bad duration '%s'",
						optarg);
			break;
		case 'm':
			if (!strcmp(optarg, "auto"))
				mode = USDT_MODE_AUTO;
			else if (!strcmp(optarg, "multi"))
				mode = USDT_MODE_MULTI;
			else if (!strcmp(optarg, "perf"))
				mode = USDT_MODE_PERF;
			else
				return tool_err("trace: bad mode '%s' (auto, multi or perf)",
						optarg);
			break;
		case 'h':
			fputs(trace_usage, stdout);
			return 0;
		default:
			fputs(trace_usage, stderr);
			return 2;
		}
	}
	argc -= optind;
	argv += optind;
	if (!argc) {
		fputs(trace_usage, stderr);
		return 2;
	}
	if (pid && cmd)
		return tool_err("trace: -p and -c cannot be used together");
	if (pid && kill(pid, 0) && errno == ESRCH)
		return tool_err("trace: pid %d: no such process", (int)pid);

	err = target_resolve(argv[0], pid, &target);
	if (err)
		return tool_err("trace: %s: %s", argv[0],
				err == -ENOENT ? "no such file" : strerror(-err));
	err = patterns_parse(argv + 1, argc - 1, &pats, &pat_cnt);
	if (err) {
		tool_err("trace: out of memory");
		goto out;
	}
	file = usdt_file__open(target.open_path, NULL);
	if (!file) {
		err = errno;
		tool_err("trace: %s: %s", target.shown,
			 err == ENOENT ? "no such file" :
			 err == ENOEXEC ? "not a 64-bit ELF file" :
			 err == ENOSYS ? "this libusdt cannot read ELF files yet (ENOSYS)" :
			 strerror(err));
		goto out;
	}
	err = build_table(file, pats, pat_cnt, &ctx.probes, &ctx.probe_cnt);
	if (err) {
		tool_err("trace: out of memory");
		goto out;
	}
	if (!ctx.probe_cnt) {
		if (pat_cnt)
			tool_err("trace: %s: no probes matching %s%s",
				 target.shown, argv[1], pat_cnt > 1 ? " ..." : "");
		else
			tool_err("trace: %s: no USDT probes", target.shown);
		goto out;
	}
	if (geteuid() != 0) {
		tool_err("trace: must run as root (it loads BPF programs)");
		goto out;
	}

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);

	if (cmd) {
		child = spawn_held(cmd, &go_fd);
		if (child < 0) {
			child = 0;
			tool_err("trace: cannot start '%s': %s", cmd,
				 errno == EINVAL ? "bad command line" :
						   strerror(errno));
			goto out;
		}
	}
	attach_pid = child ? child : pid ? pid : -1;

	libbpf_set_print(silent_print);
	skel = usdt_trace__open();
	if (!skel) {
		tool_err("trace: cannot open the BPF program: %s",
			 strerror(errno));
		goto out;
	}
	skel->rodata->target_tgid = attach_pid > 0 ? (uint32_t)attach_pid : 0;
	mopts.no_uprobe_multi = mode == USDT_MODE_PERF;
	/* The manager must see the object before load: it prepares the
	 * program for uprobe_multi links unless told not to, and a program
	 * prepared so cannot take perf uprobes. */
	man = usdt_manager__new(skel->obj, &mopts);
	if (!man) {
		tool_err("trace: cannot prepare the BPF object: %s",
			 attach_error(errno));
		goto out;
	}
	err = usdt_trace__load(skel);
	if (err) {
		tool_err("trace: cannot load the BPF program: %s",
			 err == -EPERM ? "permission denied (not root, or BPF disabled)" :
			 strerror(-err));
		goto out;
	}

	for (i = 0; i < ctx.probe_cnt; i++) {
		USDT_OPTS(usdt_attach_opts, aopts, .usr_cookie = i,
			  .mode = mode);
		struct probe_ent *p = &ctx.probes[i];
		char *prov = glob_escape(p->provider);
		char *name = glob_escape(p->name);

		if (!prov || !name) {
			free(prov);
			free(name);
			tool_err("trace: out of memory");
			goto out;
		}
		p->link = usdt_manager__attach(man, skel->progs.usdt_trace,
					       attach_pid, target.open_path,
					       prov, name, &aopts);
		err = errno;
		free(prov);
		free(name);
		if (!p->link) {
			tool_err("trace: cannot attach to %s:%s in %s: %s",
				 p->provider, p->name, target.shown,
				 attach_error(err));
			goto out;
		}
	}

	rb = ring_buffer__new(bpf_map__fd(skel->maps.events), on_hit, &ctx,
			      NULL);
	if (!rb) {
		tool_err("trace: cannot open the ring buffer: %s",
			 strerror(errno));
		goto out;
	}

	if (child) {
		/* Everything is attached: let the command run. */
		if (write(go_fd, "g", 1) != 1) {
			tool_err("trace: cannot start the command: %s",
				 strerror(errno));
			goto out;
		}
		close(go_fd);
		go_fd = -1;
	}
	if (duration > 0)
		deadline = now_s() + duration;

	ret = 0;
	while (!stop_signal) {
		err = ring_buffer__poll(rb, 100);
		if (err == -ECANCELED)
			break;
		if (err < 0 && err != -EINTR) {
			ret = tool_err("trace: reading events: %s",
				       strerror(-err));
			break;
		}
		if (deadline && now_s() >= deadline)
			break;
		if (child && waitpid(child, &status, WNOHANG) == child) {
			child_done = true;
			/* Hits made just before the end are still queued. */
			ring_buffer__consume(rb);
			ret = exit_status(status);
			break;
		}
		if (pid && kill(pid, 0) && errno == ESRCH) {
			ring_buffer__consume(rb);
			break;
		}
	}
	if (skel->bss->lost_events)
		tool_err("trace: %llu events lost (the ring buffer was full)",
			 (unsigned long long)skel->bss->lost_events);

out:
	if (go_fd >= 0)
		close(go_fd);	/* a held child reads EOF and exits 127 */
	ring_buffer__free(rb);
	for (i = 0; i < ctx.probe_cnt; i++)
		usdt_link__destroy(ctx.probes[i].link);
	usdt_manager__free(man);
	usdt_trace__destroy(skel);
	if (child && !child_done) {
		/* We stopped first (-n, -d, a signal, an error): the command
		 * would run on untraced, so end it. */
		kill(child, SIGTERM);
		while (waitpid(child, &status, 0) < 0 && errno == EINTR)
			;
	}
	free(ctx.probes);
	usdt_file__close(file);
	patterns_free(pats, pat_cnt);
	target_free(&target);
	return ret;
}
