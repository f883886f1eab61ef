// SPDX-License-Identifier: BSD-2-Clause
/*
 * `usdt trace --listen`: the tool's /metrics read by this test over a
 * plain socket (exact counts, escaped label values, one series per probe
 * name across files, 404 elsewhere), by
 * promtool (the format), and by a real Prometheus server that scrapes it
 * every second (Debian's prometheus package; scripts/deps.sh prometheus).
 * A busy port is an error before anything is attached. Every port is one
 * the kernel just gave out, so another run on the machine does not
 * collide. Needs root and BPF.
 */
#include <arpa/inet.h>
#include <ctype.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include "trace_test.h"
#include "usdt.h"

#define PT FIXTURE_DIR "/prom_target"
#define ROUNDS 50

/* A TCP port of 127.0.0.1 free just now. */
static int free_port(void)
{
	struct sockaddr_in a = { .sin_family = AF_INET,
				 .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t len = sizeof(a);
	int fd = socket(AF_INET, SOCK_STREAM, 0);

	assert_true(fd >= 0);
	assert_int_equal(bind(fd, (struct sockaddr *)&a, sizeof(a)), 0);
	assert_int_equal(getsockname(fd, (struct sockaddr *)&a, &len), 0);
	close(fd);
	return ntohs(a.sin_port);
}

/* GET path from 127.0.0.1:port: the status (0: no answer), and in *out
 * the whole answer, headers and all (free()). */
static int http_get(int port, const char *path, char **out)
{
	struct sockaddr_in a = { .sin_family = AF_INET,
				 .sin_port = htons((uint16_t)port),
				 .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	struct pollfd pfd = { .events = POLLIN };
	size_t len = 0;
	char req[512], buf[4096];
	int status = 0, n;

	*out = NULL;
	run_append(out, &len, "", 0);
	pfd.fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	assert_true(pfd.fd >= 0);
	if (connect(pfd.fd, (struct sockaddr *)&a, sizeof(a))) {
		close(pfd.fd);
		return 0;
	}
	n = snprintf(req, sizeof(req), "GET %s HTTP/1.0\r\nHost: x\r\n\r\n",
		     path);
	assert_int_equal(write(pfd.fd, req, (size_t)n), n);
	while (poll(&pfd, 1, 10000) == 1 &&
	       (n = (int)read(pfd.fd, buf, sizeof(buf))) > 0)
		run_append(out, &len, buf, (size_t)n);
	close(pfd.fd);
	sscanf(*out, "HTTP/1.%*d %d", &status);
	return status;
}

/* The body of an answer. */
static const char *body_of(const char *answer)
{
	const char *p = strstr(answer, "\r\n\r\n");

	return p ? p + 4 : answer;
}

/* The contents of a file (free()); "" if it cannot be read. */
static char *slurp(const char *path)
{
	size_t len = 0;
	char *s = NULL, buf[4096];
	int fd = open(path, O_RDONLY), n;

	run_append(&s, &len, "", 0);
	while (fd >= 0 && (n = (int)read(fd, buf, sizeof(buf))) > 0)
		run_append(&s, &len, buf, (size_t)n);
	if (fd >= 0)
		close(fd);
	return s;
}

/* A running program, its stdout and stderr in files of dir. */
struct bg {
	pid_t pid;
	char out[256], err[256];
};

/* What a test started and has not stopped: killed after it, should it
 * fail half-way (a --listen trace serves until told to stop). */
static pid_t started[4];

static void bg_start(struct bg *b, const char *dir, const char *name,
		     const char *const argv[])
{
	size_t i;

	snprintf(b->out, sizeof(b->out), "%s/%s.out", dir, name);
	snprintf(b->err, sizeof(b->err), "%s/%s.err", dir, name);
	fflush(NULL);
	b->pid = fork();
	assert_true(b->pid >= 0);
	if (!b->pid) {
		int o = open(b->out, O_WRONLY | O_CREAT | O_TRUNC, 0600);
		int e = open(b->err, O_WRONLY | O_CREAT | O_TRUNC, 0600);

		if (o < 0 || e < 0 || dup2(o, 1) < 0 || dup2(e, 2) < 0)
			_exit(126);
		execvp(argv[0], (char *const *)argv);
		_exit(127);
	}
	for (i = 0; i < ARRAY_SIZE(started) && started[i]; i++)
		;
	assert_true(i < ARRAY_SIZE(started));
	started[i] = b->pid;
}

/* It is reaped, or about to be: not to be killed after the test. */
static void bg_forget(const struct bg *b)
{
	size_t i;

	for (i = 0; i < ARRAY_SIZE(started); i++)
		if (started[i] == b->pid)
			started[i] = 0;
}

/* Wait up to secs for it to end (then SIGKILL it): its exit status, or
 * 128 + the signal. */
static int bg_wait(struct bg *b, double secs)
{
	double end = now_s() + secs;
	int status;

	bg_forget(b);
	while (waitpid(b->pid, &status, WNOHANG) != b->pid) {
		if (now_s() > end) {
			kill(b->pid, SIGKILL);
			waitpid(b->pid, &status, 0);
			break;
		}
		usleep(10000);
	}
	return WIFEXITED(status) ? WEXITSTATUS(status) :
				   128 + WTERMSIG(status);
}

/* End it with SIGTERM (SIGKILL after 10 s). */
static int bg_stop(struct bg *b)
{
	kill(b->pid, SIGTERM);
	return bg_wait(b, 10);
}

/* Wait up to secs for needle in file path; fails the test with the
 * file's text otherwise. */
static void wait_file(const char *path, const char *needle, double secs,
		      const struct bg *b)
{
	double end = now_s() + secs;
	char *s;

	for (;;) {
		s = slurp(path);
		if (strstr(s, needle))
			break;
		if (now_s() > end || waitpid(b->pid, NULL, WNOHANG) == b->pid)
			fail_msg("no '%s' in %s:\n%s\nstderr:\n%s", needle, path,
				 s, slurp(b->err));
		free(s);
		usleep(20000);
	}
	free(s);
}

/* pm:req's call sites in the fixture, as its compiler laid them out
 * (clang with the sanitizers makes four copies of the probe). */
static int req_sites(void)
{
	struct usdt_file *f = usdt_file__open(PT, NULL);
	size_t i, n = 0;

	assert_non_null(f);
	for (i = 0; i < usdt_file__probe_cnt(f); i++) {
		const struct usdt_probe *p = usdt_file__probe(f, i);

		n += !strcmp(usdt_probe__provider(p), "pm") &&
		     !strcmp(usdt_probe__name(p), "req");
	}
	usdt_file__close(f);
	return (int)n;
}

static bool have(const char *prog)
{
	char cmd[128];
	struct run_result r;
	const char *argv[] = { "sh", "-c", cmd, NULL };
	int status;

	snprintf(cmd, sizeof(cmd), "command -v %s", prog);
	status = run_argv(argv, &r);
	run_result_free(&r);
	if (status)
		print_message("SKIP: no %s (scripts/deps.sh prometheus)\n",
			      prog);
	return status == 0;
}

static char tmp_dir[] = "/tmp/usdt-listen-XXXXXX";

static int setup(void **state)
{
	(void)state;
	return mkdtemp(tmp_dir) ? 0 : -1;
}

static int kill_started(void **state)
{
	size_t i;

	(void)state;
	for (i = 0; i < ARRAY_SIZE(started); i++) {
		if (!started[i])
			continue;
		kill(started[i], SIGKILL);
		waitpid(started[i], NULL, 0);
		started[i] = 0;
	}
	return 0;
}

static int teardown(void **state)
{
	const char *argv[] = { "rm", "-rf", tmp_dir, NULL };
	struct run_result r;

	(void)state;
	run_argv(argv, &r);
	run_result_free(&r);
	return 0;
}

/* Words --listen does not take, and events: errors before anything is
 * traced. */
static void test_listen_usage(void **state)
{
	struct run_result r;

	(void)state;
	run_fails(&r, "usdt: trace: --listen goes with --count, --hist or --latency\n",
		  "trace", "--listen", "9100", PT, "pm:req");
	run_fails(&r, "usdt: trace: --listen: bad address '70000' (PORT, ADDR:PORT or [ADDR]:PORT, port 1 to 65535)\n",
		  "trace", "--count", "--listen", "70000", PT, "pm:req");
	run_fails(&r, "usdt: trace: --listen: bad address ':80'",
		  "trace", "--count", "--listen", ":80", PT, "pm:req");
	run_fails(&r, "usdt: trace: --listen: cannot listen on 192.0.2.1:9100: Cannot assign requested address\n",
		  "trace", "--count", "--listen", "192.0.2.1:9100", PT,
		  "pm:req");
}

static int cmp_line(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* No two samples of text have one name and one set of labels: Prometheus
 * fails the whole scrape over that, and promtool check metrics does not
 * look. */
static void series_unique(const char *text)
{
	char *copy = strdup(text), **v, *line, *end, *save = NULL;
	size_t n = 0, i;

	assert_non_null(copy);
	v = calloc((size_t)count_str(text, "\n") + 1, sizeof(*v));
	assert_non_null(v);
	for (line = strtok_r(copy, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save)) {
		end = strrchr(line, ' ');
		if (*line == '#' || !end)
			continue;
		*end = '\0';	/* the value off */
		v[n++] = line;
	}
	qsort(v, n, sizeof(*v), cmp_line);
	for (i = 1; i < n; i++)
		if (!strcmp(v[i - 1], v[i]))
			fail_msg("two samples of %s in:\n%s", v[i], text);
	free(v);
	free(copy);
}

/* promtool check metrics on text: its lint passes; and no series has two
 * samples (series_unique()). */
static void promtool_passes(const char *text)
{
	char path[300], cmd[400];
	const char *argv[] = { "sh", "-c", cmd, NULL };
	struct run_result r;
	FILE *f;

	snprintf(path, sizeof(path), "%s/metrics.txt", tmp_dir);
	f = fopen(path, "w");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
	snprintf(cmd, sizeof(cmd), "promtool check metrics < %s 2>&1", path);
	if (run_argv(argv, &r))
		fail_msg("promtool check metrics: %s\non:\n%s", r.out, text);
	run_result_free(&r);
	series_unique(text);
}

/*
 * --count --by-pid --by str(arg0): after the target's ROUNDS rounds, each
 * name counts exactly ROUNDS, its label value escaped; the page passes
 * promtool; other paths get 404; a second --listen on the port fails
 * before it attaches; the command's end does not end the serving, and
 * SIGTERM ends it with the command's status.
 */
static void test_listen_count(void **state)
{
	int port = free_port();
	char where[32], cmd[300], want[300], *page, *ans, *out;
	const char *argv[] = { USDT_BIN, "trace", "-q", "--count", "--by-pid",
			       "--by", "str(arg0)", "--listen", where, "-c", cmd,
			       PT, "pm:req", NULL };
	static const char *const names[] = { "plain", "a\\\"b\\\\c",
					     "two\\nlines", "bad\xef\xbf\xbd" };
	struct run_result r;
	struct bg tool;
	int pid = 0;
	size_t i;

	(void)state;
	if (!have("promtool"))
		skip();	/* scripts/deps.sh prometheus; a failure under CI */
	snprintf(where, sizeof(where), "127.0.0.1:%d", port);
	snprintf(cmd, sizeof(cmd), PT " %d", ROUNDS);
	bg_start(&tool, tmp_dir, "count", argv);
	wait_file(tool.out, "done\n", 60, &tool);
	out = slurp(tool.out);
	assert_int_equal(sscanf(out, "pid %d", &pid), 1);
	free(out);
	assert_int_equal(http_get(port, "/metrics", &ans), 200);
	expect_in(ans, "Content-Type: text/plain; version=0.0.4");
	page = strdup(body_of(ans));
	free(ans);
	for (i = 0; i < ARRAY_SIZE(names); i++) {
		snprintf(want, sizeof(want), "\nusdt_probe_hits_total{provider=\"pm\",probe=\"req\",pid=\"%d\",arg0=\"%s\"} %d\n",
			 pid, names[i], ROUNDS);
		expect_in(page, want);
	}
	assert_int_equal(count_str(page, "\nusdt_probe_hits_total{"), 4);
	expect_in(page, "# TYPE usdt_probe_hits_total counter\n");
	expect_in(page, "\nusdt_lost_hits_total 0\n");
	expect_in(page, "\nusdt_overlapped_hits_total 0\n");
	expect_in(page, "\nusdt_attached_probes 1\n");
	snprintf(want, sizeof(want), "\nusdt_attached_sites %d\n",
		 req_sites());
	expect_in(page, want);
	promtool_passes(page);
	free(page);

	assert_int_equal(http_get(port, "/", &ans), 404);
	free(ans);
	assert_int_equal(http_get(port, "/metrics/x", &ans), 404);
	free(ans);

	run_tool(&r, "trace", "--count", "--listen", where, PT, "pm:req");
	assert_int_equal(r.status, 1);
	snprintf(want, sizeof(want), "usdt: trace: --listen: cannot listen on %s: Address already in use", where);
	expect_in(r.err, want);
	assert_null(strstr(r.err, "tracing"));
	run_result_free(&r);

	/* Still serving, the command long gone. */
	assert_int_equal(http_get(port, "/metrics", &ans), 200);
	free(ans);
	assert_int_equal(bg_stop(&tool), 0);
	out = slurp(tool.out);
	snprintf(want, sizeof(want), "%12d %8d pm:req plain\n", ROUNDS, pid);
	expect_in(out, want);
	free(out);
	out = slurp(tool.err);
	assert_string_equal(out, "usdt: trace: the command ended; /metrics is served on until a signal\n");
	free(out);
}

/*
 * --hist: pm:size fired with 1 to ROUNDS (50): cumulative log2 buckets,
 * the sum the BPF program added up, the count; promtool passes it.
 */
static void test_listen_hist(void **state)
{
	static const char *const lines[] = {
		"{provider=\"pm\",probe=\"size\",arg=\"0\",le=\"-1\"} 0\n",
		"{provider=\"pm\",probe=\"size\",arg=\"0\",le=\"0\"} 0\n",
		"{provider=\"pm\",probe=\"size\",arg=\"0\",le=\"1\"} 1\n",
		"{provider=\"pm\",probe=\"size\",arg=\"0\",le=\"3\"} 3\n",
		"{provider=\"pm\",probe=\"size\",arg=\"0\",le=\"31\"} 31\n",
		"{provider=\"pm\",probe=\"size\",arg=\"0\",le=\"63\"} 50\n",
		"{provider=\"pm\",probe=\"size\",arg=\"0\",le=\"+Inf\"} 50\n",
		"_sum{provider=\"pm\",probe=\"size\",arg=\"0\"} 1275\n",
		"_count{provider=\"pm\",probe=\"size\",arg=\"0\"} 50\n",
	};
	int port = free_port();
	char where[32], cmd[300], *ans;
	const char *argv[] = { USDT_BIN, "trace", "-q", "--hist", "0",
			       "--listen", where, "-c", cmd, PT, "pm:size",
			       NULL };
	struct bg tool;
	size_t i;

	(void)state;
	if (!have("promtool"))
		skip();	/* scripts/deps.sh prometheus; a failure under CI */
	snprintf(where, sizeof(where), "127.0.0.1:%d", port);
	snprintf(cmd, sizeof(cmd), PT " %d", ROUNDS);
	bg_start(&tool, tmp_dir, "hist", argv);
	wait_file(tool.out, "done\n", 60, &tool);
	assert_int_equal(http_get(port, "/metrics", &ans), 200);
	expect_in(ans, "# TYPE usdt_probe_argument histogram\n");
	for (i = 0; i < ARRAY_SIZE(lines); i++)
		expect_in(ans, lines[i]);
	/* The argument is a long: a bucket for negatives, then 0 and the
	 * 63 bounds 2^k - 1 up to 2^63 - 1, and +Inf. */
	assert_int_equal(count_str(ans, "usdt_probe_argument_bucket{"), 66);
	promtool_passes(body_of(ans));
	free(ans);
	assert_int_equal(bg_stop(&tool), 0);
}

/*
 * --latency pm:req pm:size: each round's last pm:req (its name "bad" and
 * U+FFFD) pairs with its pm:size, the three before it are replaced
 * (unmatched). With --by str(arg0), a summary per key: ROUNDS pairs
 * under the last name, a total above 0; with --time-unit ms, a histogram
 * whose buckets are whole milliseconds. promtool passes both.
 */
static void test_listen_latency(void **state)
{
	int port = free_port();
	char where[32], cmd[300], *ans;
	const char *by_argv[] = { USDT_BIN, "trace", "-q", "--latency",
				  "pm:req", "pm:size", "--by", "str(arg0)",
				  "--listen", where, "-c", cmd, PT, NULL };
	const char *ms_argv[] = { USDT_BIN, "trace", "-q", "--latency",
				  "pm:req", "pm:size", "--time-unit", "ms",
				  "--listen", where, "-c", cmd, PT, NULL };
	const char *p;
	struct bg tool;

	(void)state;
	if (!have("promtool"))
		skip();	/* scripts/deps.sh prometheus; a failure under CI */
	snprintf(where, sizeof(where), "127.0.0.1:%d", port);
	snprintf(cmd, sizeof(cmd), PT " %d", ROUNDS);
	bg_start(&tool, tmp_dir, "latency_by", by_argv);
	wait_file(tool.out, "done\n", 60, &tool);
	assert_int_equal(http_get(port, "/metrics", &ans), 200);
	expect_in(ans, "# TYPE usdt_latency_seconds summary\n");
	expect_in(ans, "\nusdt_latency_seconds_count{start=\"pm:req\",end=\"pm:size\",arg0=\"bad\xef\xbf\xbd\"} 50\n");
	p = strstr(ans, "\nusdt_latency_seconds_sum{start=\"pm:req\",end=\"pm:size\",arg0=\"bad\xef\xbf\xbd\"} ");
	assert_non_null(p);
	assert_true(strtod(strstr(p, "} ") + 2, NULL) > 0);
	assert_int_equal(count_str(ans, "\nusdt_latency_seconds_count{"), 1);
	expect_in(ans, "\nusdt_latency_unmatched_starts_total{start=\"pm:req\",end=\"pm:size\"} 150\n");
	expect_in(ans, "\nusdt_latency_unmatched_ends_total{start=\"pm:req\",end=\"pm:size\"} 0\n");
	promtool_passes(body_of(ans));
	free(ans);
	assert_int_equal(bg_stop(&tool), 0);

	port = free_port();
	snprintf(where, sizeof(where), "127.0.0.1:%d", port);
	bg_start(&tool, tmp_dir, "latency_ms", ms_argv);
	wait_file(tool.out, "done\n", 60, &tool);
	assert_int_equal(http_get(port, "/metrics", &ans), 200);
	expect_in(ans, "# TYPE usdt_latency_seconds histogram\n");
	/* [0, 1) ms, [1, 2) ms: up to the last ns of each. */
	expect_in(ans, "\nusdt_latency_seconds_bucket{start=\"pm:req\",end=\"pm:size\",le=\"0.000999999\"} ");
	expect_in(ans, "\nusdt_latency_seconds_bucket{start=\"pm:req\",end=\"pm:size\",le=\"0.001999999\"} ");
	expect_in(ans, "\nusdt_latency_seconds_bucket{start=\"pm:req\",end=\"pm:size\",le=\"+Inf\"} 50\n");
	expect_in(ans, "\nusdt_latency_seconds_count{start=\"pm:req\",end=\"pm:size\"} 50\n");
	assert_int_equal(count_str(ans, "\nusdt_latency_seconds_bucket{"), 65);
	promtool_passes(body_of(ans));
	free(ans);
	assert_int_equal(bg_stop(&tool), 0);
}

/*
 * The tool, with opts (NULL-ended) and --listen on a port, on two copies
 * of libtracelib.so by a glob TARGET (every process), hit by a process
 * each, 3 and 5 times (arg0 1..3 and 1..5): its /metrics once both ended
 * (free()), checked by promtool_passes(); the tool is stopped. name: its
 * output files'.
 */
static char *two_copies_page(const char *name, const char *const *opts)
{
	const char *argv[16] = { USDT_BIN, "trace" };
	static const char *const rounds[] = { "3", "5" };
	char where[32], glob[300], cmd[700], *ans, *page;
	const char *sh[] = { "sh", "-c", cmd, NULL };
	int port = free_port(), n = 2, i;
	struct run_result r;
	struct bg tool;

	snprintf(cmd, sizeof(cmd), "cp %s %s/lib1.so && cp %s %s/lib2.so",
		 FIXTURE_DIR "/libtracelib.so", tmp_dir,
		 FIXTURE_DIR "/libtracelib.so", tmp_dir);
	if (run_argv(sh, &r))
		fail_msg("%s: %s", cmd, r.out);
	run_result_free(&r);
	while (*opts && n < 11)
		argv[n++] = *opts++;
	snprintf(where, sizeof(where), "127.0.0.1:%d", port);
	snprintf(glob, sizeof(glob), "%s/lib*.so", tmp_dir);
	argv[n++] = "--listen";
	argv[n++] = where;
	argv[n++] = glob;
	argv[n++] = "tracelib:hit";
	/* Its own files: the last run's stderr already says "Ctrl-C". */
	bg_start(&tool, tmp_dir, name, argv);
	wait_file(tool.err, "in 2 files; Ctrl-C to stop\n", 30, &tool);
	for (i = 0; i < 2; i++) {
		snprintf(cmd, sizeof(cmd), "echo g | %s %s/lib%d.so %s",
			 FIXTURE_DIR "/dlopen_target", tmp_dir, i + 1,
			 rounds[i]);
		if (run_argv(sh, &r))
			fail_msg("%s: %s", cmd, r.out);
		run_result_free(&r);
	}
	assert_int_equal(http_get(port, "/metrics", &ans), 200);
	page = strdup(body_of(ans));
	free(ans);
	assert_non_null(page);
	promtool_passes(page);
	assert_int_equal(bg_stop(&tool), 0);
	return page;
}

/*
 * The same probe in two files (two copies of a library): one series per
 * name, its value the sum of both files' (two with the same labels fail
 * a Prometheus scrape), and one histogram, its buckets added up.
 */
static void test_listen_two_files(void **state)
{
	static const char *const hist[] = {
		"{provider=\"tracelib\",probe=\"hit\",arg=\"0\",le=\"0\"} 0\n",
		"{provider=\"tracelib\",probe=\"hit\",arg=\"0\",le=\"1\"} 2\n",
		"{provider=\"tracelib\",probe=\"hit\",arg=\"0\",le=\"3\"} 6\n",
		"{provider=\"tracelib\",probe=\"hit\",arg=\"0\",le=\"7\"} 8\n",
		"{provider=\"tracelib\",probe=\"hit\",arg=\"0\",le=\"+Inf\"} 8\n",
		"_sum{provider=\"tracelib\",probe=\"hit\",arg=\"0\"} 21\n",
		"_count{provider=\"tracelib\",probe=\"hit\",arg=\"0\"} 8\n",
	};
	char *page;
	size_t i;

	(void)state;
	if (!have("promtool"))
		skip();	/* scripts/deps.sh prometheus; a failure under CI */
	page = two_copies_page("copies_count",
			       (const char *const[]){ "--count", NULL });
	expect_in(page, "\nusdt_probe_hits_total{provider=\"tracelib\",probe=\"hit\"} 8\n");
	assert_int_equal(count_str(page, "\nusdt_probe_hits_total{"), 1);
	expect_in(page, "\nusdt_attached_files 2\n");
	free(page);

	/* Per --by key: 1, 2 and 3 from both files, 4 and 5 from one. */
	page = two_copies_page("copies_by", (const char *const[]){
					"--count", "--by", "arg0", NULL });
	for (i = 1; i <= 5; i++) {
		char want[128];

		snprintf(want, sizeof(want), "\nusdt_probe_hits_total{provider=\"tracelib\",probe=\"hit\",arg0=\"%zu\"} %d\n",
			 i, i <= 3 ? 2 : 1);
		expect_in(page, want);
	}
	assert_int_equal(count_str(page, "\nusdt_probe_hits_total{"), 5);
	free(page);

	/* --sum: arg0's sum over both files' hits, 1+2+3 and 1+..+5. */
	page = two_copies_page("copies_sum", (const char *const[]){
					"--count", "--sum", "arg0", NULL });
	expect_in(page, "# TYPE usdt_probe_arg_summed gauge\n");
	expect_in(page, "\nusdt_probe_arg_summed{provider=\"tracelib\",probe=\"hit\"} 21\n");
	assert_int_equal(count_str(page, "\nusdt_probe_arg_summed{"), 1);
	free(page);

	page = two_copies_page("copies_hist",
			       (const char *const[]){ "--hist", "0", NULL });
	for (i = 0; i < ARRAY_SIZE(hist); i++)
		expect_in(page, hist[i]);
	/* An int: a bucket for negatives, 0, the 63 bounds, +Inf. */
	assert_int_equal(count_str(page, "usdt_probe_argument_bucket{"), 66);
	assert_int_equal(count_str(page, "usdt_probe_argument_count{"), 1);
	free(page);
}

/* A connection to 127.0.0.1:port that sends what it is given and then
 * nothing: its socket. */
static int idle_client(int port, const char *send_first)
{
	struct sockaddr_in a = { .sin_family = AF_INET,
				 .sin_port = htons((uint16_t)port),
				 .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

	assert_true(fd >= 0);
	assert_int_equal(connect(fd, (struct sockaddr *)&a, sizeof(a)), 0);
	if (*send_first)
		assert_true(write(fd, send_first, strlen(send_first)) > 0);
	return fd;
}

/* The answer to a request too large, if it comes: what the server did
 * not read may reset the connection before it arrives. */
static void expect_431(int fd)
{
	struct pollfd pfd = { .fd = fd, .events = POLLIN };
	char got[64] = "";

	assert_int_equal(poll(&pfd, 1, 5000), 1);
	if (read(fd, got, sizeof(got) - 1) > 0)
		assert_true(!strncmp(got, "HTTP/1.0 431 ", 13));
}

/*
 * Clients that never finish their request hold nothing up: with more of
 * them than the server takes at once, a -d trace still ends on time, a
 * signal still ends it at once, an oversized request gets 431, and once
 * their 5 s are up a scrape is answered again.
 */
static void test_listen_slow_clients(void **state)
{
	int port = free_port(), fds[24], status;
	char where[32], big[8192], *ans;
	const char *argv[] = { USDT_BIN, "trace", "-q", "--count", "--listen",
			       where, "-d", "60", PT, "pm:req", NULL };
	struct bg tool;
	double t0;
	size_t i;

	(void)state;
	snprintf(where, sizeof(where), "127.0.0.1:%d", port);
	bg_start(&tool, tmp_dir, "slow", argv);
	while (http_get(port, "/metrics", &ans) != 200) {
		free(ans);
		assert_int_equal(waitpid(tool.pid, &status, WNOHANG), 0);
		usleep(20000);
	}
	free(ans);
	memset(big, 'x', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	memcpy(big, "GET /", 5);
	fds[0] = idle_client(port, big);
	assert_int_equal(http_get(port, "/metrics", &ans), 200);
	free(ans);
	expect_431(fds[0]);
	for (i = 1; i < ARRAY_SIZE(fds); i++)
		fds[i] = idle_client(port, i % 2 ? "GET /metr" : "");
	t0 = now_s();
	/* 16 clients at a time: this one waits for their 5 s. */
	assert_int_equal(http_get(port, "/metrics", &ans), 200);
	assert_true(now_s() - t0 > 3 && now_s() - t0 < 9);
	free(ans);
	/* New idle clients hold up the end no more: its links take an RCU
	 * grace period or so each to go, seconds on a busy machine, not the
	 * clients' 5 s. */
	for (i = 1; i < ARRAY_SIZE(fds); i++) {
		close(fds[i]);
		fds[i] = idle_client(port, "GET /");
	}
	t0 = now_s();
	assert_int_equal(bg_stop(&tool), 0);
	assert_true(now_s() - t0 < 4);
	ans = slurp(tool.err);
	assert_string_equal(ans, "");
	free(ans);
	for (i = 0; i < ARRAY_SIZE(fds); i++)
		close(fds[i]);
}

/*
 * -p PID alone (every file it maps, and those it maps later): after the
 * process ends, the totals are still served, its maps no longer looked
 * at, until -d ends the trace normally.
 */
static void test_listen_pid_ends(void **state)
{
	int port = free_port(), pid = 0;
	char where[32], pid_s[16], *ans, *out;
	const char *target[] = { FIXTURE_DIR "/trace_target", "4", "300", "0",
				 NULL };
	const char *argv[] = { USDT_BIN, "trace", "-q", "--count", "--listen",
			       where, "-d", "6", "-p", pid_s, NULL };
	struct bg tt, tool;

	(void)state;
	snprintf(where, sizeof(where), "127.0.0.1:%d", port);
	bg_start(&tt, tmp_dir, "pid-target", target);
	wait_file(tt.out, "pid ", 10, &tt);
	out = slurp(tt.out);
	assert_int_equal(sscanf(out, "pid %d", &pid), 1);
	free(out);
	snprintf(pid_s, sizeof(pid_s), "%d", pid);
	bg_start(&tool, tmp_dir, "pid-tool", argv);
	wait_file(tool.err, "usdt: trace: the process ended; /metrics is served on until a signal or -d\n",
		  30, &tool);
	assert_int_equal(http_get(port, "/metrics", &ans), 200);
	expect_in(ans, "\nusdt_probe_hits_total{provider=\"tt\",probe=\"one\"} ");
	free(ans);
	/* The target is ours to reap; then -d ends the trace, status 0. */
	assert_int_equal(bg_stop(&tt), 0);
	assert_int_equal(bg_wait(&tool, 20), 0);
}

/* Prometheus's configuration: scrape 127.0.0.1:port every second. */
static void write_config(const char *path, int port)
{
	FILE *f = fopen(path, "w");

	assert_non_null(f);
	fprintf(f, "global:\n"
		   "  scrape_interval: 1s\n"
		   "  evaluation_interval: 1s\n"
		   "scrape_configs:\n"
		   "  - job_name: usdt\n"
		   "    static_configs:\n"
		   "      - targets: ['127.0.0.1:%d']\n", port);
	fclose(f);
}

/* Ask Prometheus at port for PromQL q until it has a sample, for up to
 * secs: the answer's JSON (free()). */
static char *query(int port, const char *q, double secs,
		   const struct bg *prom)
{
	double end = now_s() + secs;
	char path[1024], *ans;
	size_t n;

	n = (size_t)snprintf(path, sizeof(path), "/api/v1/query?query=");
	for (; *q && n + 4 < sizeof(path); q++) {
		if (isalnum((unsigned char)*q) || *q == '_')
			path[n++] = *q;
		else
			n += (size_t)snprintf(path + n, 4, "%%%02X",
					      (unsigned char)*q);
	}
	path[n] = '\0';
	for (;;) {
		if (http_get(port, path, &ans) == 200 &&
		    strstr(ans, "\"result\":[{"))
			return ans;
		if (now_s() > end)
			fail_msg("no sample for %s: %s\nprometheus said:\n%s", q,
				 ans, slurp(prom->err));
		free(ans);
		usleep(200000);
	}
}

/* The sample of a Prometheus query's answer is "value". */
static void expect_sample(char *ans, const char *value)
{
	char want[64];

	snprintf(want, sizeof(want), ",\"%s\"]}]", value);
	expect_in(ans, want);
	free(ans);
}

/* Start a Prometheus server on prom_port scraping 127.0.0.1:port. */
static void start_prometheus(struct bg *prom, int prom_port, int port)
{
	static char cfg[300], cfg_opt[320], tsdb_opt[320], web_opt[64];
	const char *argv[] = { "prometheus", cfg_opt, tsdb_opt, web_opt,
			       NULL };

	snprintf(cfg, sizeof(cfg), "%s/prometheus.yml", tmp_dir);
	write_config(cfg, port);
	snprintf(cfg_opt, sizeof(cfg_opt), "--config.file=%s", cfg);
	snprintf(tsdb_opt, sizeof(tsdb_opt), "--storage.tsdb.path=%s/tsdb",
		 tmp_dir);
	snprintf(web_opt, sizeof(web_opt), "--web.listen-address=127.0.0.1:%d",
		 prom_port);
	bg_start(prom, tmp_dir, "prometheus", argv);
}

/*
 * A real Prometheus server scrapes --listen (--count --by str(arg0): the
 * escaped label values, and the one that was not UTF-8, which would fail
 * the whole scrape) every second; its query API then has the exact
 * counts, the label values as the program passed them.
 */
static void test_listen_prometheus(void **state)
{
	int port = free_port(), prom_port = free_port();
	char where[32], cmd[300], rounds[16], *ans;
	const char *argv[] = { USDT_BIN, "trace", "-q", "--count", "--by",
			       "str(arg0)", "--listen", where, "-c", cmd, PT,
			       "pm:req", NULL };
	struct bg tool, prom;

	(void)state;
	if (!have("prometheus"))
		skip();	/* scripts/deps.sh prometheus; a failure under CI */
	snprintf(where, sizeof(where), "127.0.0.1:%d", port);
	snprintf(cmd, sizeof(cmd), PT " %d", ROUNDS);
	snprintf(rounds, sizeof(rounds), "%d", ROUNDS);
	bg_start(&tool, tmp_dir, "prom-tool", argv);
	wait_file(tool.out, "done\n", 60, &tool);
	start_prometheus(&prom, prom_port, port);

	ans = query(prom_port, "usdt_probe_hits_total{arg0=\"plain\"}", 90,
		    &prom);
	expect_in(ans, "\"provider\":\"pm\"");
	expect_in(ans, "\"job\":\"usdt\"");
	expect_sample(ans, rounds);
	expect_sample(query(prom_port, "usdt_probe_hits_total{arg0=\"two\\nlines\"}",
			   30, &prom), rounds);
	expect_sample(query(prom_port, "usdt_probe_hits_total{arg0=\"a\\\"b\\\\c\"}",
			   30, &prom), rounds);
	expect_sample(query(prom_port, "usdt_probe_hits_total{arg0=\"bad\\ufffd\"}",
			   30, &prom), rounds);
	expect_sample(query(prom_port, "count(usdt_probe_hits_total)", 30,
			   &prom), "4");
	expect_sample(query(prom_port, "usdt_attached_probes", 30, &prom), "1");

	bg_stop(&prom);
	assert_int_equal(bg_stop(&tool), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_listen_usage),
		cmocka_unit_test_teardown(test_listen_count, kill_started),
		cmocka_unit_test_teardown(test_listen_hist, kill_started),
		cmocka_unit_test_teardown(test_listen_latency, kill_started),
		cmocka_unit_test_teardown(test_listen_two_files, kill_started),
		cmocka_unit_test_teardown(test_listen_slow_clients,
					  kill_started),
		cmocka_unit_test_teardown(test_listen_pid_ends, kill_started),
		cmocka_unit_test_teardown(test_listen_prometheus,
					  kill_started),
	};

	usdt_test_require_kernel("test_trace_listen");
	return cmocka_run_group_tests(tests, setup, teardown);
}
