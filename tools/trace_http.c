// SPDX-License-Identifier: BSD-2-Clause
/*
 * The HTTP server of `usdt trace --listen`: GET /metrics, and 404 for any
 * other path. It runs in the trace's own poll loop, so a scrape must
 * never hold up the reading of hits. What is always true:
 *  - every socket is non-blocking, and is read or written only when
 *    poll() said it is ready;
 *  - a client has at most HTTP_REQ_MAX bytes of request, HTTP_CLIENT_SECS
 *    seconds from its accept to its last byte, and one answer, after
 *    which it is closed; at most HTTP_CLIENTS are open, further ones wait
 *    in the kernel's backlog;
 *  - the page is built whole when the request is complete, and then only
 *    written out.
 */
#include <errno.h>
#include <netdb.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "trace.h"

#define HTTP_REQ_MAX 4096
#define HTTP_CLIENTS 16
#define HTTP_CLIENT_SECS 5.0

struct http_client {
	int fd;
	double deadline;
	size_t req_len;
	char req[HTTP_REQ_MAX + 1];
	struct prom_buf out; /* the answer, once the request is read */
	size_t sent;
};

struct http_server {
	int fd;
	http_page_fn page;
	void *arg;
	int cl_cnt;
	struct http_client *cl[HTTP_CLIENTS];
};

static double mono_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* "[ADDR:]PORT" or "[V6]:PORT" into host and port; 0 or -EINVAL. */
static int split_where(const char *where, char *host, size_t hlen, char *port,
		       size_t plen)
{
	const char *colon = strrchr(where, ':'), *p = colon ? colon + 1 : where;
	size_t n = colon ? (size_t)(colon - where) : 0;
	char *end;
	long v;

	if (colon && where[0] == '[' && n >= 2 && where[n - 1] == ']') {
		where++;
		n -= 2;
	}
	if (!colon)
		snprintf(host, hlen, "127.0.0.1");
	else if (!n || n >= hlen)
		return -EINVAL;
	else
		snprintf(host, hlen, "%.*s", (int)n, where);
	errno = 0;
	v = strtol(p, &end, 10);
	if (errno || end == p || *end || v < 1 || v > 65535)
		return -EINVAL;
	snprintf(port, plen, "%ld", v);
	return 0;
}

static int bind_one(const struct addrinfo *ai)
{
	int one = 1, fd, err;

	fd = socket(ai->ai_family,
		    ai->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC,
		    ai->ai_protocol);
	if (fd < 0)
		return -errno;
	/* A port left in TIME_WAIT by an earlier run is free to take; one a
	 * live socket listens on is still EADDRINUSE. */
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(fd, ai->ai_addr, ai->ai_addrlen) || listen(fd, 64)) {
		err = -errno;
		close(fd);
		return err;
	}
	return fd;
}

struct http_server *http_listen(const char *where, http_page_fn page, void *arg,
				char *why, size_t len)
{
	struct addrinfo hints = { .ai_socktype = SOCK_STREAM,
				  .ai_flags = AI_PASSIVE | AI_NUMERICSERV };
	struct addrinfo *res = NULL;
	struct http_server *s;
	char host[256], port[8];
	int fd, rc;

	if (split_where(where, host, sizeof(host), port, sizeof(port))) {
		snprintf(why, len,
			 "bad address '%s' (PORT, ADDR:PORT or [ADDR]:PORT, port 1 to 65535)",
			 where);
		return NULL;
	}
	rc = getaddrinfo(host, port, &hints, &res);
	if (rc) {
		snprintf(why, len, "cannot listen on %s: %s", where,
			 rc == EAI_SYSTEM ? tool_strerror(errno) :
					    gai_strerror(rc));
		return NULL;
	}
	fd = bind_one(res);
	freeaddrinfo(res);
	if (fd < 0) {
		snprintf(why, len, "cannot listen on %s:%s: %s%s", host, port,
			 tool_strerror(-fd),
			 fd == -EADDRINUSE ?
				 " (another program serves that port)" :
				 "");
		return NULL;
	}
	s = calloc(1, sizeof(*s));
	if (!s) {
		close(fd);
		snprintf(why, len, "out of memory");
		return NULL;
	}
	s->fd = fd;
	s->page = page;
	s->arg = arg;
	return s;
}

static void client_close(struct http_server *s, int i)
{
	struct http_client *c = s->cl[i];

	close(c->fd);
	free(c->out.p);
	free(c);
	s->cl[i] = s->cl[--s->cl_cnt];
}

static void http_accept(struct http_server *s)
{
	struct http_client *c;
	int fd;

	while (s->cl_cnt < HTTP_CLIENTS) {
		fd = accept4(s->fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
		if (fd < 0)
			return; /* EAGAIN, or a client that left already */
		c = calloc(1, sizeof(*c));
		if (!c) {
			close(fd);
			return;
		}
		c->fd = fd;
		c->deadline = mono_s() + HTTP_CLIENT_SECS;
		s->cl[s->cl_cnt++] = c;
	}
}

static void answer(struct http_client *c, const char *status, const char *type,
		   const char *extra, const char *body, size_t body_len,
		   bool head)
{
	prom_printf(&c->out,
		    "HTTP/1.0 %s\r\nContent-Type: %s\r\nContent-Length: %zu\r\n%sConnection: close\r\n\r\n",
		    status, type, body_len, extra);
	if (!head)
		prom_put(&c->out, body, body_len);
}

/* The request of c is complete: make its answer. */
static void respond(struct http_server *s, struct http_client *c)
{
	static const char text[] = "text/plain; charset=utf-8";
	char method[8], path[HTTP_REQ_MAX];
	struct prom_buf page = { 0 };
	bool head;

	if (sscanf(c->req, "%7s %4095s HTTP/", method, path) != 2) {
		answer(c, "400 Bad Request", text, "", "bad request\n", 12,
		       false);
		return;
	}
	head = !strcmp(method, "HEAD");
	if (!head && strcmp(method, "GET")) {
		answer(c, "405 Method Not Allowed", text,
		       "Allow: GET, HEAD\r\n", "GET or HEAD only\n", 17, false);
		return;
	}
	path[strcspn(path, "?")] = '\0';
	if (strcmp(path, "/metrics")) {
		answer(c, "404 Not Found", text, "",
		       "not found: try /metrics\n", 24, head);
		return;
	}
	if (s->page(s->arg, &page) || page.oom) {
		answer(c, "500 Internal Server Error", text, "",
		       "out of memory\n", 14, head);
	} else {
		answer(c, "200 OK", "text/plain; version=0.0.4; charset=utf-8",
		       "", page.p ? page.p : "", page.len, head);
	}
	free(page.p);
}

/* Read what c sent; a full request gets its answer. false: close c. */
static bool client_read(struct http_server *s, struct http_client *c)
{
	ssize_t n =
		recv(c->fd, c->req + c->req_len, HTTP_REQ_MAX - c->req_len, 0);

	if (n < 0)
		return errno == EAGAIN || errno == EINTR;
	if (!n)
		return false;
	c->req_len += (size_t)n;
	c->req[c->req_len] = '\0';
	if (strstr(c->req, "\r\n\r\n") || strstr(c->req, "\n\n"))
		respond(s, c);
	else if (c->req_len == HTTP_REQ_MAX)
		answer(c, "431 Request Header Fields Too Large",
		       "text/plain; charset=utf-8", "", "request too large\n",
		       18, false);
	return !c->out.oom;
}

/* Write what is left of c's answer. false: done, or failed; close c. */
static bool client_write(struct http_client *c)
{
	ssize_t n = send(c->fd, c->out.p + c->sent, c->out.len - c->sent,
			 MSG_NOSIGNAL);

	if (n < 0)
		return errno == EAGAIN || errno == EINTR;
	c->sent += (size_t)n;
	return c->sent < c->out.len;
}

static int poll_wait(struct http_server *s, int timeout_ms, double now)
{
	int i, ms;

	for (i = 0; i < s->cl_cnt; i++) {
		ms = (int)((s->cl[i]->deadline - now) * 1000) + 1;
		if (ms < timeout_ms)
			timeout_ms = ms < 0 ? 0 : ms;
	}
	return timeout_ms;
}

int http_poll(struct http_server *s, int fd, int timeout_ms)
{
	struct pollfd pfd[HTTP_CLIENTS + 2];
	struct http_client *c;
	int i, n = s->cl_cnt, ready;
	bool ok;

	pfd[0] = (struct pollfd){ .fd = fd, .events = POLLIN };
	pfd[1] = (struct pollfd){ .fd = s->cl_cnt < HTTP_CLIENTS ? s->fd : -1,
				  .events = POLLIN };
	for (i = 0; i < n; i++)
		pfd[i + 2] =
			(struct pollfd){ .fd = s->cl[i]->fd,
					 .events = s->cl[i]->out.len ? POLLOUT :
								       POLLIN };
	ready = poll(pfd, (nfds_t)n + 2, poll_wait(s, timeout_ms, mono_s()));
	if (ready <= 0)
		ready = 0;
	/* Backwards: closing moves the last client into the place of the
	 * one closed, which was looked at already. */
	for (i = n - 1; i >= 0; i--) {
		c = s->cl[i];
		ok = mono_s() < c->deadline;
		if (ok && pfd[i + 2].revents & (POLLIN | POLLERR | POLLHUP))
			ok = c->out.len ? client_write(c) : client_read(s, c);
		else if (ok && pfd[i + 2].revents & POLLOUT)
			ok = client_write(c);
		if (!ok)
			client_close(s, i);
	}
	if (pfd[1].revents & POLLIN)
		http_accept(s);
	return fd >= 0 && (pfd[0].revents & POLLIN) ? 1 : 0;
}

void http_free(struct http_server *s)
{
	if (!s)
		return;
	while (s->cl_cnt)
		client_close(s, s->cl_cnt - 1);
	close(s->fd);
	free(s);
}
