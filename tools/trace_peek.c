// SPDX-License-Identifier: BSD-2-Clause
/*
 * `usdt trace`: reading a traced process's memory from user space with a
 * deadline (trace_fmt.c reads a string or typed load again so, where the
 * BPF side found its page not present).
 *
 * process_vm_readv() faults the page in as the process would, and that
 * fault takes as long as the process likes: one that registered the page
 * with userfaultfd, or maps a file of a FUSE server that does not answer,
 * holds it without end, and the reader sleeps in the kernel, deaf to
 * every signal but SIGKILL. So the tool never reads in its main thread:
 * a small pool of reader threads does, and the main thread waits for one
 * at most TRACE_PEEK_WAIT_MS (less once a signal asked it to stop). A read
 * that takes longer is abandoned: the value is unreadable (-ETIMEDOUT),
 * and its reader stays stuck until the process lets it go (or the tool
 * exits, which kills it: see trace_peek_stuck()). The invariants:
 *  - at most PEEK_READERS readers, made on demand, never ended;
 *  - the main thread alone looks at the pool; a reader touches only its
 *    own slot, and only between a request and its answer (two eventfds);
 *  - a reader is idle, or busy with one request (pid); a busy one the
 *    main thread no longer waits for is stuck, and no process with a
 *    stuck read is read again until that read ends: a held page costs
 *    the main loop one deadline, not one per hit.
 */
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include "trace.h"

#define PEEK_READERS 4
#define PEEK_IOV_MAX 4
/* After a stop signal: the tool is to exit within a second. */
#define PEEK_WAIT_STOPPING_MS 20

struct reader {
	pthread_t thread;
	int req_fd, done_fd; /* eventfds: a request, its answer */
	bool busy;	     /* a request is out (main thread's view) */
	/* The request, then the answer. */
	pid_t pid;
	struct iovec remote[PEEK_IOV_MAX];
	unsigned long cnt;
	size_t len;
	ssize_t got; /* bytes read, or -errno */
	char buf[TRACE_STR_MAX];
};

static struct reader *readers[PEEK_READERS];

static void *reader_main(void *arg)
{
	struct reader *rd = arg;
	struct iovec local;
	uint64_t n;
	ssize_t got;

	for (;;) {
		if (read(rd->req_fd, &n, sizeof(n)) != sizeof(n))
			continue; /* EINTR: signals are blocked, though */
		local = (struct iovec){ rd->buf, rd->len };
		got = process_vm_readv(rd->pid, &local, 1, rd->remote, rd->cnt,
				       0);
		rd->got = got < 0 ? -errno : got;
		n = 1;
		while (write(rd->done_fd, &n, sizeof(n)) != sizeof(n))
			;
	}
	return NULL;
}

/* A new idle reader, with every signal blocked (they are the main
 * thread's: SIGINT must cut its wait short); NULL on failure. */
static struct reader *reader_new(void)
{
	struct reader *rd = calloc(1, sizeof(*rd));
	sigset_t all, old;
	pthread_attr_t attr;
	int err = ENOMEM;

	if (!rd)
		return NULL;
	rd->req_fd = eventfd(0, EFD_CLOEXEC);
	rd->done_fd = eventfd(0, EFD_CLOEXEC);
	if (rd->req_fd >= 0 && rd->done_fd >= 0 && !pthread_attr_init(&attr)) {
		pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
		pthread_attr_setstacksize(&attr, 64 << 10);
		sigfillset(&all);
		pthread_sigmask(SIG_SETMASK, &all, &old);
		err = pthread_create(&rd->thread, &attr, reader_main, rd);
		pthread_sigmask(SIG_SETMASK, &old, NULL);
		pthread_attr_destroy(&attr);
	}
	if (!err)
		return rd;
	if (rd->req_fd >= 0)
		close(rd->req_fd);
	if (rd->done_fd >= 0)
		close(rd->done_fd);
	free(rd);
	return NULL;
}

/* Wait up to ms for rd's answer: true if it came (rd is idle again). */
static bool reader_wait(struct reader *rd, int ms)
{
	struct pollfd pfd = { .fd = rd->done_fd, .events = POLLIN };
	struct timespec t0, t;
	uint64_t n;
	int left = ms, ready;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (;;) {
		ready = poll(&pfd, 1, left);
		if (ready > 0)
			break;
		if (!ready || errno != EINTR || trace_stop_signal)
			return false;
		clock_gettime(CLOCK_MONOTONIC, &t);
		left = ms - (int)((t.tv_sec - t0.tv_sec) * 1000 +
				  (t.tv_nsec - t0.tv_nsec) / 1000000);
		if (left <= 0)
			return false;
	}
	if (read(rd->done_fd, &n, sizeof(n)) != sizeof(n))
		return false;
	rd->busy = false;
	return true;
}

/*
 * The reader to ask for process pid: an idle one, made if need be; NULL
 * where pid has a stuck read, or every reader is stuck (-ETIMEDOUT), or
 * none can be made (-EAGAIN). Stuck reads that ended make their readers
 * idle first.
 */
static struct reader *reader_for(pid_t pid, int *err)
{
	struct reader *idle = NULL;
	int i;

	for (i = 0; i < PEEK_READERS; i++)
		if (readers[i] && readers[i]->busy)
			reader_wait(readers[i], 0);
	for (i = 0; i < PEEK_READERS; i++) {
		if (readers[i] && readers[i]->busy && readers[i]->pid == pid) {
			*err = -ETIMEDOUT;
			return NULL;
		}
		if (readers[i] && !readers[i]->busy && !idle)
			idle = readers[i];
	}
	*err = -ETIMEDOUT; /* unless a reader is made below */
	for (i = 0; !idle && i < PEEK_READERS; i++) {
		if (readers[i])
			continue;
		idle = readers[i] = reader_new();
		if (!idle)
			*err = -EAGAIN;
		break;
	}
	return idle;
}

ssize_t trace_peek(pid_t pid, void *buf, size_t len, const struct iovec *remote,
		   unsigned long cnt)
{
	struct reader *rd;
	uint64_t one = 1;
	int err;

	if (cnt > PEEK_IOV_MAX || len > sizeof(rd->buf))
		return -EINVAL;
	rd = reader_for(pid, &err);
	if (!rd)
		return err;
	rd->pid = pid;
	memcpy(rd->remote, remote, cnt * sizeof(*remote));
	rd->cnt = cnt;
	rd->len = len;
	if (write(rd->req_fd, &one, sizeof(one)) != sizeof(one))
		return -errno;
	rd->busy = true;
	if (!reader_wait(rd, trace_stop_signal ? PEEK_WAIT_STOPPING_MS :
						 TRACE_PEEK_WAIT_MS))
		return -ETIMEDOUT;
	if (rd->got > 0)
		memcpy(buf, rd->buf, (size_t)rd->got);
	return rd->got;
}

bool trace_peek_stuck(void)
{
	int i;

	for (i = 0; i < PEEK_READERS; i++)
		if (readers[i] && readers[i]->busy &&
		    !reader_wait(readers[i], 0))
			return true;
	return false;
}
