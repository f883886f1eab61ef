// SPDX-License-Identifier: BSD-2-Clause
/*
 * Per-attach storage: one BPF program attached to two probes of the
 * target, each with its own configuration, and hit counters read from
 * user space without a map lookup.
 *
 *   counters [TARGET]
 *
 * hello:greet gets one counter for the link, counting greetings #2 and
 * later; hello:farewell gets a counter per call site, counting arguments
 * of 1 and more.
 * usdt_link__storage() points into the kernel's array, mapped into this
 * process: reading a counter is a memory load. Needs root.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <bpf/libbpf.h>
#include <usdt/usdt.h>

#include "counters.h"
#include "counters.skel.h"

static struct usdt_link *attach(struct usdt_manager *man,
				struct counters *skel, const char *target,
				const char *name, long long min_arg,
				bool per_site)
{
	struct counter init = { .min_arg = min_arg };
	USDT_OPTS(usdt_attach_opts, opts, .storage = &init,
		  .storage_sz = sizeof(init), .storage_per_site = per_site);
	struct usdt_link *link;
	char buf[128];

	link = usdt_manager__attach(man, skel->progs.count, -1, target,
				    "hello", name, &opts);
	if (!link)
		fprintf(stderr, "counters: attach to hello:%s: %s\n", name,
			usdt_strerror(errno, buf, sizeof(buf)));
	return link;
}

static void print_counters(const char *name, const struct usdt_link *link)
{
	size_t i, n = usdt_link__site_cnt(link);

	for (i = 0; i < n; i++) {
		/* A plain load: BPF updates it in place. */
		const volatile struct counter *c = usdt_link__storage(link, i);

		printf("counters: hello:%s site %zu: %llu hits, %llu counted (first argument >= %lld)\n",
		       name, i, c->hits, c->counted, c->min_arg);
	}
}

static int run(const char *target)
{
	int status;
	pid_t pid = fork();

	if (pid < 0)
		return -1;
	if (!pid) {
		execl(target, target, (char *)NULL);
		_exit(127);
	}
	if (waitpid(pid, &status, 0) != pid)
		return -1;
	return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

int main(int argc, char **argv)
{
	struct usdt_link *greet = NULL, *bye = NULL;
	struct usdt_manager *man = NULL;
	struct counters *skel;
	char target[PATH_MAX];
	int err = 1;
	ssize_t n;

	if (argc > 1) {
		snprintf(target, sizeof(target), "%s", argv[1]);
	} else {
		/* The target next to this program. */
		n = readlink("/proc/self/exe", target, sizeof(target) - 8);
		if (n < 0)
			return 1;
		target[n] = '\0';
		strcpy(strrchr(target, '/') + 1, "target");
	}
	skel = counters__open();
	if (!skel)
		return 1;
	man = usdt_manager__new(skel->obj, NULL);
	if (!man || counters__load(skel))
		goto out;
	greet = attach(man, skel, target, "greet", 2, false);
	bye = attach(man, skel, target, "farewell", 1, true);
	if (!greet || !bye)
		goto out;
	fflush(stdout);
	if (run(target))
		goto out;
	print_counters("greet", greet);
	print_counters("farewell", bye);
	err = 0;
out:
	usdt_link__destroy(greet);
	usdt_link__destroy(bye);
	usdt_manager__free(man);
	counters__destroy(skel);
	return err;
}
