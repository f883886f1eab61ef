// SPDX-License-Identifier: BSD-2-Clause
/*
 * A complete libusdt application: trace the hello:greet probe of a program
 * and print its arguments.
 *
 *   hello [TARGET]
 *
 * TARGET defaults to the `target` program next to this one. hello attaches
 * first, then runs TARGET, prints each greeting it makes, and exits when
 * TARGET does. Needs root.
 *
 * The steps every libusdt user takes:
 *  1. open the BPF skeleton (bpftool gen skeleton);
 *  2. usdt_manager__new() on its object, BEFORE loading it;
 *  3. load;
 *  4. usdt_manager__attach() the program to the probe;
 *  5. read what the program sends; at the end destroy the link, free the
 *     manager, destroy the skeleton, in that order.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <bpf/libbpf.h>
#include <usdt/usdt.h>

#include "hello.h"
#include "hello.skel.h"

static int on_greeting(void *ctx, void *data, size_t len)
{
	const struct greeting *g = data;

	printf("hello: pid %d greeted #%d: \"%.*s\"\n", g->pid, g->count,
	       (int)sizeof(g->name), g->name);
	fflush(stdout);
	return 0;
}

/* The target next to our own executable. */
static int default_target(char *buf, size_t size)
{
	ssize_t n = readlink("/proc/self/exe", buf, size - 1);
	char *slash;

	if (n < 0)
		return -errno;
	buf[n] = '\0';
	slash = strrchr(buf, '/');
	if (!slash || (size_t)(slash - buf) + sizeof("/target") > size)
		return -ENAMETOOLONG;
	strcpy(slash, "/target");
	return 0;
}

int main(int argc, char **argv)
{
	struct usdt_manager *man = NULL;
	struct usdt_link *link = NULL;
	struct ring_buffer *rb = NULL;
	struct hello *skel = NULL;
	char target[PATH_MAX], err_buf[128];
	int err = 1, status;
	pid_t pid;

	if (argc > 1)
		snprintf(target, sizeof(target), "%s", argv[1]);
	else if (default_target(target, sizeof(target)))
		return fprintf(stderr, "hello: cannot find target\n"), 1;

	skel = hello__open();
	if (!skel) {
		fprintf(stderr, "hello: cannot open the BPF skeleton\n");
		goto out;
	}
	/* Before load: the manager may resize its maps and prepare the
	 * program for uprobe_multi links. */
	man = usdt_manager__new(skel->obj, NULL);
	if (!man) {
		fprintf(stderr, "hello: usdt_manager__new: %s\n",
			usdt_strerror(errno, err_buf, sizeof(err_buf)));
		goto out;
	}
	if (hello__load(skel)) {
		fprintf(stderr, "hello: cannot load the BPF program (root?)\n");
		goto out;
	}
	/* Every process that runs target (pid -1); the probe by name. */
	link = usdt_manager__attach(man, skel->progs.on_greet, -1, target,
				    "hello", "greet", NULL);
	if (!link) {
		fprintf(stderr, "hello: attach to hello:greet in %s: %s\n",
			target, usdt_strerror(errno, err_buf, sizeof(err_buf)));
		goto out;
	}
	rb = ring_buffer__new(bpf_map__fd(skel->maps.greetings), on_greeting,
			      NULL, NULL);
	if (!rb)
		goto out;

	/* Attached: now run the target. */
	fflush(stdout);
	pid = fork();
	if (pid < 0)
		goto out;
	if (!pid) {
		execl(target, target, (char *)NULL);
		perror("hello: exec");
		_exit(127);
	}
	while (waitpid(pid, &status, WNOHANG) == 0)
		ring_buffer__poll(rb, 50);
	ring_buffer__consume(rb);
	err = WIFEXITED(status) ? WEXITSTATUS(status) : 1;
out:
	ring_buffer__free(rb);
	usdt_link__destroy(link);
	usdt_manager__free(man);
	hello__destroy(skel);
	return err;
}
