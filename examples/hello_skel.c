// SPDX-License-Identifier: BSD-2-Clause
/*
 * hello, the skeleton way: the BPF program names its probe in its section,
 * SEC("usdt/target:hello:greet"), as a libbpf program would, and one call
 * attaches every such program.
 *
 *   hello_skel [TARGET]
 *
 * TARGET defaults to the `target` program next to this one. hello_skel
 * starts TARGET held at its first line (target -w), attaches to that
 * process (the bare name "target" is found in its maps), lets it go, and
 * prints each greeting. Needs root.
 *
 * The steps:
 *  1. open the skeleton; usdt_manager__new() on its object; load;
 *  2. the skeleton's __attach() as usual (it attaches the object's other
 *     programs and leaves SEC("usdt/...") ones to the manager);
 *  3. usdt_manager__attach_all(): the manager attaches and owns the links;
 *  4. at the end free the manager (it detaches them), then destroy the
 *     skeleton.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE	/* pipe2() */
#endif
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <bpf/libbpf.h>
#include <usdt/usdt.h>

#include "hello.h"
#include "hello_skel.skel.h"

static int on_greeting(void *ctx, void *data, size_t len)
{
	const struct greeting *g = data;

	printf("hello_skel: pid %d greeted #%d: \"%.*s\"\n", g->pid, g->count,
	       (int)sizeof(g->name), g->name);
	fflush(stdout);
	return 0;
}

/*
 * Start target -w, its stdin a pipe (*gate), and return its pid once it
 * runs, or -1. The target says so itself, with a byte on fd 3: the parent
 * cannot tell from outside (/proc/PID/exe changes before exec maps the
 * new file, and a close-on-exec pipe closes before that too).
 */
static pid_t start_held(const char *target, int *gate)
{
	int in[2], ready[2];
	char c = 0;
	pid_t pid;

	if (pipe2(in, O_CLOEXEC) || pipe2(ready, O_CLOEXEC))
		return -1;
	fflush(stdout);
	pid = fork();
	if (pid < 0)
		return -1;
	if (!pid) {
		dup2(in[0], 0);
		/* dup2() clears close-on-exec, but not onto itself. */
		if (ready[1] == 3)
			fcntl(3, F_SETFD, 0);
		else
			dup2(ready[1], 3);
		execl(target, target, "-w", (char *)NULL);
		perror("hello_skel: exec");
		_exit(127);
	}
	close(in[0]);
	close(ready[1]);
	while (read(ready[0], &c, 1) < 0 && errno == EINTR)
		;
	close(ready[0]);
	if (c != 'r') {
		close(in[1]);
		waitpid(pid, NULL, 0);
		return -1;
	}
	*gate = in[1];
	return pid;
}

int main(int argc, char **argv)
{
	char target[PATH_MAX], err_buf[128];
	struct usdt_manager *man = NULL;
	struct ring_buffer *rb = NULL;
	struct hello_skel *skel;
	int err = 1, n, status, gate = -1;
	pid_t pid = -1;

	if (argc > 1) {
		snprintf(target, sizeof(target), "%s", argv[1]);
	} else {
		/* The target next to our own executable. */
		char *slash;

		if (!realpath("/proc/self/exe", target) ||
		    !(slash = strrchr(target, '/')) ||
		    (size_t)(slash - target) + sizeof("/target") > sizeof(target))
			return fprintf(stderr, "hello_skel: no target\n"), 1;
		strcpy(slash, "/target");
	}

	skel = hello_skel__open();
	if (!skel)
		return fprintf(stderr, "hello_skel: cannot open the skeleton\n"), 1;
	man = usdt_manager__new(skel->obj, NULL);
	if (!man || hello_skel__load(skel) || hello_skel__attach(skel)) {
		fprintf(stderr, "hello_skel: cannot set up the BPF side: %s\n",
			usdt_strerror(errno, err_buf, sizeof(err_buf)));
		goto out;
	}
	rb = ring_buffer__new(bpf_map__fd(skel->maps.greetings), on_greeting,
			      NULL, NULL);
	pid = start_held(target, &gate);
	if (!rb || pid < 0)
		goto out;
	n = usdt_manager__attach_all(man, pid, NULL);
	if (n < 0) {
		fprintf(stderr, "hello_skel: attach: %s\n",
			usdt_strerror(n, err_buf, sizeof(err_buf)));
		goto out;
	}
	printf("hello_skel: %d program(s) attached to process %d\n", n, pid);
	fflush(stdout);
	/* Attached: let the target go. */
	if (write(gate, "\n", 1) != 1)
		goto out;
	while (waitpid(pid, &status, WNOHANG) == 0)
		ring_buffer__poll(rb, 50);
	pid = -1;
	ring_buffer__consume(rb);
	err = WIFEXITED(status) ? WEXITSTATUS(status) : 1;
out:
	if (gate >= 0)
		close(gate);
	if (pid > 0)
		waitpid(pid, &status, 0);
	ring_buffer__free(rb);
	usdt_manager__free(man);
	hello_skel__destroy(skel);
	return err;
}
