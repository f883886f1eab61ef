// SPDX-License-Identifier: BSD-2-Clause
/*
 * hello, the skeleton way, as a libbpf-bootstrap app is written: the BPF
 * program names its probe in its section, SEC("usdt/./target:hello:greet"),
 * and the skeleton's own __attach() attaches it into skel->links. No
 * usdt_manager: libusdt is libbpf's handler of SEC("usdt") programs.
 *
 *   hello_skel [TARGET]
 *
 * Without TARGET, hello_skel works in its own directory, so that the
 * section's ./target is the `target` program next to it; it starts target
 * held at its first line (target -w), lets it go, and prints each greeting.
 * With TARGET, the program is attached to that process only, by hand:
 * usdt_program__attach(), bpf_program__attach_usdt()'s twin. Needs root.
 *
 * The steps: open and load the skeleton; __attach() (or
 * usdt_program__attach() into skel->links); at the end __destroy(), which
 * destroys the links as it does any other.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE	/* pipe2() */
#endif
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
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

/* Make dir the directory of path (a copy); false if it has none. */
static bool dir_of(const char *path, char *dir, size_t size)
{
	const char *slash = strrchr(path, '/');

	if (!slash || (size_t)(slash - path) >= size)
		return false;
	memcpy(dir, path, (size_t)(slash - path));
	dir[slash - path] = '\0';
	return true;
}

/* Auto-attach by the section's ./target, or attach to pid by hand. */
static int attach(struct hello_skel *skel, const char *target, pid_t pid)
{
	if (!target)
		return hello_skel__attach(skel) ? -errno : 0;
	skel->links.on_greet = usdt_program__attach(skel->progs.on_greet, pid,
						    target, "hello", "greet",
						    NULL);
	return skel->links.on_greet ? 0 : -errno;
}

int main(int argc, char **argv)
{
	char target[PATH_MAX], dir[PATH_MAX], err_buf[128];
	struct ring_buffer *rb = NULL;
	struct hello_skel *skel;
	int err = 1, status, gate = -1;
	bool by_hand = argc > 1;
	pid_t pid = -1;

	if (by_hand) {
		snprintf(target, sizeof(target), "%s", argv[1]);
	} else if (!realpath("/proc/self/exe", dir) ||
		   !dir_of(dir, dir, sizeof(dir)) || chdir(dir)) {
		return fprintf(stderr, "hello_skel: no directory\n"), 1;
	} else {
		snprintf(target, sizeof(target), "./target");
	}

	skel = hello_skel__open_and_load();
	if (!skel)
		return fprintf(stderr, "hello_skel: cannot load the BPF side: %s\n",
			       usdt_strerror(errno, err_buf, sizeof(err_buf))), 1;
	bpf_program__set_autoattach(skel->progs.on_greet, !by_hand);
	rb = ring_buffer__new(bpf_map__fd(skel->maps.greetings), on_greeting,
			      NULL, NULL);
	pid = start_held(target, &gate);
	if (!rb || pid < 0)
		goto out;
	err = attach(skel, by_hand ? target : NULL, pid);
	if (err) {
		fprintf(stderr, "hello_skel: attach: %s\n",
			usdt_strerror(err, err_buf, sizeof(err_buf)));
		err = 1;
		goto out;
	}
	err = 1;
	printf("hello_skel: attached to %s\n",
	       by_hand ? "that process" : "every process running ./target");
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
	hello_skel__destroy(skel);
	return err;
}
