/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Running the `usdt` tool from its tests: run_tool() forks and execs a
 * command line, collects its stdout and stderr separately and returns its
 * exit status. Paths come from the Makefile (tests/fixtures/tool-fixtures.mk):
 * USDT_BIN is the tool, FIXTURE_DIR the fixtures, both relative to the top
 * of the tree, where the tests run.
 */
#ifndef __USDT_TOOL_RUN_H
#define __USDT_TOOL_RUN_H

#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/wait.h>
#include <unistd.h>

#ifndef USDT_BIN
#define USDT_BIN "build/usdt"
#endif
#ifndef FIXTURE_DIR
#define FIXTURE_DIR "build/tests/fixtures"
#endif
/* A run that takes longer is a hang: its process group is killed, so that
 * one test fails with what the tool printed instead of the whole suite
 * (or a guest) waiting for its time limit. Generous for TCG guests. */
#ifndef RUN_TIMEOUT_MS
#define RUN_TIMEOUT_MS (300 * 1000)
#endif

struct run_result {
	int status;		/* exit status, or 128 + signal */
	char *out;		/* stdout, NUL-terminated */
	char *err;		/* stderr, NUL-terminated */
	size_t out_len, err_len;
};

static inline void run_result_free(struct run_result *r)
{
	free(r->out);
	free(r->err);
	memset(r, 0, sizeof(*r));
}

static inline void run_append(char **buf, size_t *len, const char *p,
			      size_t n)
{
	char *b = realloc(*buf, *len + n + 1);

	if (!b)
		abort();
	memcpy(b + *len, p, n);
	*len += n;
	b[*len] = '\0';
	*buf = b;
}

/* Run argv (NULL-terminated); fills r and returns r->status. When setup
 * is not NULL, the child calls setup(arg) just before exec (to change its
 * credentials, say): it may _exit() on failure. */
static inline int run_argv_setup(const char *const argv[],
				 struct run_result *r,
				 void (*setup)(void *arg), void *arg)
{
	int out[2], err[2], status, open_cnt = 2;
	bool killed = false;
	struct pollfd pfd[2];
	char buf[4096];
	pid_t pid;

	memset(r, 0, sizeof(*r));
	run_append(&r->out, &r->out_len, "", 0);
	run_append(&r->err, &r->err_len, "", 0);
	if (pipe(out) || pipe(err))
		abort();
	fflush(NULL);
	pid = fork();
	if (pid < 0)
		abort();
	if (!pid) {
		setpgid(0, 0);
		dup2(out[1], 1);
		dup2(err[1], 2);
		close(out[0]);
		close(err[0]);
		close(out[1]);
		close(err[1]);
		if (setup)
			setup(arg);
		execvp(argv[0], (char *const *)argv);
		fprintf(stderr, "exec %s: %s\n", argv[0], strerror(errno));
		_exit(127);
	}
	close(out[1]);
	close(err[1]);
	pfd[0] = (struct pollfd){ .fd = out[0], .events = POLLIN };
	pfd[1] = (struct pollfd){ .fd = err[0], .events = POLLIN };
	while (open_cnt) {
		int i, ready = poll(pfd, 2, RUN_TIMEOUT_MS);

		if (ready < 0) {
			if (errno == EINTR)
				continue;
			abort();
		}
		if (!ready && killed)
			break;	/* something outside its group holds a pipe */
		if (!ready) {
			int n = snprintf(buf, sizeof(buf),
					 "\n[run: silent for %d ms, killed]\n",
					 RUN_TIMEOUT_MS);

			kill(-pid, SIGKILL);
			kill(pid, SIGKILL);
			run_append(&r->err, &r->err_len, buf, (size_t)n);
			killed = true;
			continue;
		}
		for (i = 0; i < 2; i++) {
			ssize_t n;

			if (pfd[i].fd < 0 || !pfd[i].revents)
				continue;
			n = read(pfd[i].fd, buf, sizeof(buf));
			if (n > 0) {
				if (i == 0)
					run_append(&r->out, &r->out_len, buf, n);
				else
					run_append(&r->err, &r->err_len, buf, n);
			} else if (n == 0 || errno != EINTR) {
				close(pfd[i].fd);
				pfd[i].fd = -1;
				open_cnt--;
			}
		}
	}
	for (int i = 0; i < 2; i++)
		if (pfd[i].fd >= 0)
			close(pfd[i].fd);
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	r->status = WIFEXITED(status) ? WEXITSTATUS(status) :
					128 + WTERMSIG(status);
	return r->status;
}

static inline int run_argv(const char *const argv[], struct run_result *r)
{
	return run_argv_setup(argv, r, NULL, NULL);
}

/* Start argv (NULL-terminated) with its stdout into a pipe and stderr
 * left as ours, setup(arg) called in the child just before exec when not
 * NULL (as in run_argv_setup()). Returns its pid, *fd the pipe's reading
 * end; aborts where it cannot fork. */
static inline pid_t spawn_out_setup(const char *const argv[], int *fd,
				    void (*setup)(void *arg), void *arg)
{
	int fds[2];
	pid_t pid;

	if (pipe(fds))
		abort();
	fflush(NULL);
	pid = fork();
	if (pid < 0)
		abort();
	if (!pid) {
		dup2(fds[1], 1);
		close(fds[0]);
		close(fds[1]);
		if (setup)
			setup(arg);
		execv(argv[0], (char *const *)argv);
		_exit(127);
	}
	close(fds[1]);
	*fd = fds[0];
	return pid;
}

static inline pid_t spawn_out(const char *const argv[], int *fd)
{
	return spawn_out_setup(argv, fd, NULL, NULL);
}

/* Run the tool with these arguments (NULL-terminated). */
#define run_tool(r, ...)                                                    \
	run_argv((const char *const[]){ USDT_BIN, __VA_ARGS__, NULL }, (r))

/* Count lines of s. */
static inline int count_lines(const char *s)
{
	int n = 0;

	for (; *s; s++)
		n += *s == '\n';
	return n;
}

/* The line of s that contains needle, copied into a malloc'ed string, or
 * NULL. */
static inline char *line_with(const char *s, const char *needle)
{
	const char *hit = strstr(s, needle), *start, *end;

	if (!hit)
		return NULL;
	start = hit;
	while (start > s && start[-1] != '\n')
		start--;
	end = strchr(hit, '\n');
	if (!end)
		end = hit + strlen(hit);
	return strndup(start, (size_t)(end - start));
}

/*
 * Watch the file at path for opens by anyone (opens_seen()): the inotify
 * fd, non-blocking, or -1. Closes are watched too: two opens in a row
 * would make one event.
 */
static inline int opens_watch(const char *path)
{
	int in = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);

	if (in >= 0 && inotify_add_watch(in, path, IN_OPEN | IN_CLOSE) < 0) {
		close(in);
		in = -1;
	}
	return in;
}

/* How many times the file opens_watch() gave in for was opened since the
 * last call. */
static inline int opens_seen(int in)
{
	char buf[4096] __attribute__((aligned(8)));
	ssize_t n, k;
	int cnt = 0;

	while ((n = read(in, buf, sizeof(buf))) > 0)
		for (k = 0; k < n;) {
			const struct inotify_event *ev = (void *)(buf + k);

			cnt += !!(ev->mask & IN_OPEN);
			k += (ssize_t)sizeof(*ev) + ev->len;
		}
	return cnt;
}

#endif /* __USDT_TOOL_RUN_H */
