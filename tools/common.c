// SPDX-License-Identifier: BSD-2-Clause
/*
 * What both subcommands need: messages, probe patterns, finding the file a
 * user named, the files a process has mapped (by the library's maps
 * parser, src/proc/procmap.h), and JSON strings.
 */
#include <ctype.h>
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "usdt_tool.h"
#include "tool.h"

const char *tool_name = "usdt";

int tool_err(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "%s: ", tool_name);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	return 1;
}

const char *tool_strerror(int err)
{
	static char buf[128];

	return usdt_strerror(err, buf, sizeof(buf));
}

const char *tool_open_error(const struct target *t, int err)
{
	struct stat st;

	switch (err < 0 ? -err : err) {
	case ENOENT:
		return "no such file";
	case EACCES:
		return "permission denied";
	case ENOEXEC:
		/* A stat opens nothing: a FIFO does not block it. Inside
		 * the process's root, as the file was looked for. */
		if (t->open_path && !usdt__stat_path(t->open_path, &st) &&
		    !S_ISREG(st.st_mode))
			return "not a regular file";
		return "not a 64-bit ELF file";
	case ENOSYS:
		/* usdt__open_in_root(): no other way is safe. */
		return "cannot look inside the process's root: openat2() is missing (Linux 5.6 or later is needed) or refused (a seccomp filter); not opened another way, which could leave that root";
	default:
		return tool_strerror(err);
	}
}

int stdout_closed(const char *cmd)
{
	if (fcntl(STDOUT_FILENO, F_GETFD) >= 0)
		return 0;
	return tool_err("%s: writing the output: standard output is closed",
			cmd);
}

int stdout_flush(void)
{
	/* errno is the failed write's only when a call here set it. */
	errno = 0;
	if (fflush(stdout) || ferror(stdout))
		return errno ? errno : EIO;
	return 0;
}

pid_t parse_pid(const char *s)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(s, &end, 10);
	if (errno || end == s || *end || v <= 0 || v > INT_MAX)
		return -1;
	return (pid_t)v;
}

int pid_check(const char *cmd, pid_t pid)
{
	char path[64], buf[1024], *p;
	long tgid = -1, uid = -1;
	FILE *maps;
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return errno == ENOENT ?
			       tool_err("%s: pid %d: no such process", cmd,
					(int)pid) :
			       tool_err("%s: pid %d: %s: %s", cmd, (int)pid,
					path, tool_strerror(errno));
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	buf[n > 0 ? n : 0] = '\0';
	p = strstr(buf, "\nState:\t");
	if (p && p[8] == 'Z')
		return tool_err("%s: pid %d has exited (a zombie its parent has not reaped)",
				cmd, (int)pid);
	p = strstr(buf, "\nTgid:\t");
	if (p)
		tgid = strtol(p + 7, NULL, 10);
	if (tgid > 0 && tgid != pid)
		return tool_err("%s: %d is a thread of process %ld: give -p %ld",
				cmd, (int)pid, tgid, tgid);
	p = strstr(buf, "\nUid:\t");
	if (p)
		uid = strtol(p + 6, NULL, 10);
	maps = usdt__maps_open(pid);
	if (!maps && (errno == EACCES || errno == EPERM))
		return tool_err("%s: pid %d: cannot read /proc/%d/maps: %s (%s)",
				cmd, (int)pid, (int)pid, tool_strerror(errno),
				uid == (long)geteuid() ?
					"the user may, but the process is not dumpable, or a security module, sandbox or user namespace refuses" :
					"another user's process: needs root or CAP_SYS_PTRACE");
	if (maps)
		fclose(maps);
	return 0;
}

/* ---------------------------------------------------------------------- */
/* Patterns                                                               */

int patterns_parse(char **argv, int argc, struct pattern **out, int *cnt)
{
	struct pattern *pats;
	int i;

	*out = NULL;
	*cnt = 0;
	if (!argc)
		return 0;
	pats = calloc((size_t)argc, sizeof(*pats));
	if (!pats)
		return -ENOMEM;
	for (i = 0; i < argc; i++) {
		const char *colon = strchr(argv[i], ':');

		if (colon) {
			pats[i].provider =
				strndup(argv[i], (size_t)(colon - argv[i]));
			pats[i].name = strdup(colon + 1);
		} else {
			pats[i].provider = strdup(argv[i]);
			pats[i].name = strdup("*");
			pats[i].bare = true;
		}
		if (!pats[i].provider || !pats[i].name) {
			patterns_free(pats, i + 1);
			return -ENOMEM;
		}
		/* An empty half ("prov:" or ":name") means any. */
		if (!pats[i].provider[0]) {
			free(pats[i].provider);
			pats[i].provider = strdup("*");
		}
		if (!pats[i].name[0]) {
			free(pats[i].name);
			pats[i].name = strdup("*");
		}
		if (!pats[i].provider || !pats[i].name) {
			patterns_free(pats, i + 1);
			return -ENOMEM;
		}
	}
	*out = pats;
	*cnt = argc;
	return 0;
}

void patterns_free(struct pattern *pats, int cnt)
{
	int i;

	if (!pats)
		return;
	for (i = 0; i < cnt; i++) {
		free(pats[i].provider);
		free(pats[i].name);
	}
	free(pats);
}

struct pattern *patterns_match(struct pattern *pats, int cnt,
			       const char *provider, const char *name)
{
	static struct pattern any = { .provider = "*", .name = "*" };
	int i;

	if (!cnt)
		return &any;
	for (i = 0; i < cnt; i++) {
		struct usdt__pat pat;

		/* The library's matcher, the one attach uses. */
		usdt__pat_init(&pat, pats[i].provider, pats[i].name);
		if (usdt__pat_test(&pat, provider, name) > 0) {
			pats[i].used = true;
			return &pats[i];
		}
	}
	return NULL;
}

enum bare_kind pattern_bare_scan(const struct pattern *p,
				 struct usdt_file *file, const char **seen,
				 size_t *others)
{
	enum bare_kind kind = BARE_NONE;
	size_t i, n = file ? usdt_file__probe_cnt(file) : 0;
	struct usdt__pat as_provider, as_name;

	for (i = 0; i < n; i++) {
		const struct usdt_probe *q = usdt_file__probe(file, i);

		if (!q)
			continue;
		usdt__pat_init(&as_provider, p->provider, "*");
		usdt__pat_init(&as_name, "*", p->provider);
		if (usdt__pat_test(&as_provider, usdt_probe__provider(q),
				   usdt_probe__name(q)) > 0)
			return BARE_PROVIDER;
		if (usdt__pat_test(&as_name, usdt_probe__provider(q),
				   usdt_probe__name(q)) <= 0)
			continue;
		kind = BARE_NAME;
		if (!*seen)
			*seen = usdt_probe__provider(q);
		else if (strcmp(*seen, usdt_probe__provider(q)))
			++*others;
	}
	return kind;
}

/* ---------------------------------------------------------------------- */
/* Finding files                                                          */

void target_free(struct target *t)
{
	if (!t)
		return;
	free(t->shown);
	free(t->open_path);
	free(t->map);
	t->shown = t->open_path = NULL;
	t->map = NULL;
}

#define HASH_P ((1ull << 61) - 1)

static uint64_t hash_base(void)
{
	static uint64_t base;

	if (!base) {
		if (getrandom(&base, sizeof(base), GRND_NONBLOCK) !=
		    sizeof(base))
			base = (uint64_t)time(NULL) * 0x9e3779b97f4a7c15ull ^
			       (uint64_t)getpid() << 20;
		base = base % (HASH_P - 2) + 2;
	}
	return base;
}

/* h * base + c + 1, modulo 2^61 - 1 (h, base < 2^61). */
uint64_t tool_hash_step(uint64_t h, unsigned int c)
{
	unsigned __int128 x = (unsigned __int128)h * hash_base() + c + 1;
	uint64_t r = (uint64_t)(x & HASH_P) + (uint64_t)(x >> 61);

	r = (r & HASH_P) + (r >> 61);
	return r >= HASH_P ? r - HASH_P : r;
}

static size_t str_hash(const char *s)
{
	uint64_t h = 0;

	for (; *s; s++)
		h = tool_hash_step(h, (unsigned char)*s);
	return (size_t)(h ^ h >> 29);
}

/* The slot of name in s (s->slots not NULL): its own, or the empty one
 * it would take. */
static const char **name_slot(const struct name_set *s, const char *name)
{
	size_t i = str_hash(name) & s->mask;

	while (s->slots[i] && strcmp(s->slots[i], name))
		i = (i + 1) & s->mask;
	return &s->slots[i];
}

bool name_set_has(const struct name_set *s, const char *name)
{
	return s->slots && *name_slot(s, name);
}

/* Twice the slots (16 at first), the names placed again. */
static int name_set_grow(struct name_set *s)
{
	struct name_set n = { .mask = s->slots ? 2 * s->mask + 1 : 15 };
	size_t i;

	n.slots = calloc(n.mask + 1, sizeof(*n.slots));
	if (!n.slots)
		return -ENOMEM;
	for (i = 0; s->slots && i <= s->mask; i++)
		if (s->slots[i])
			*name_slot(&n, s->slots[i]) = s->slots[i];
	n.cnt = s->cnt;
	free(s->slots);
	*s = n;
	return 0;
}

int name_set_add(struct name_set *s, const char *name)
{
	const char **slot;

	/* At most half full: a look-up ends soon at an empty slot. */
	if ((!s->slots || 2 * (s->cnt + 1) > s->mask + 1) && name_set_grow(s))
		return -ENOMEM;
	slot = name_slot(s, name);
	if (*slot)
		return 0;
	*slot = name;
	s->cnt++;
	return 1;
}

void name_set_free(struct name_set *s)
{
	free(s->slots);
	memset(s, 0, sizeof(*s));
}

void targets_free(struct target *t, int cnt)
{
	int i;

	if (!t)
		return;
	for (i = 0; i < cnt; i++)
		target_free(&t[i]);
	free(t);
}

static int target_set(struct target *t, const char *shown, pid_t pid)
{
	t->shown = strdup(shown);
	if (pid > 0 && shown[0] == '/') {
		if (asprintf(&t->open_path, "/proc/%d/root%s", (int)pid,
			     shown) < 0)
			t->open_path = NULL;
	} else {
		t->open_path = strdup(shown);
	}
	if (!t->shown || !t->open_path) {
		target_free(t);
		return -ENOMEM;
	}
	return 0;
}

/* Does a mapped file's base name answer to name ("libc.so.6", or "libc"
 * for "libc.so.6")? */
static bool basename_matches(const char *path, const char *name)
{
	const char *base = strrchr(path, '/');
	size_t len = strlen(name);

	base = base ? base + 1 : path;
	return !strcmp(base, name) ||
	       (!strncmp(base, name, len) && base[len] == '.');
}

bool target_is_mapped(const char *name, pid_t pid)
{
	struct target *mapped = NULL;
	bool found = false;
	int cnt, i;

	cnt = targets_of_pid(pid, &mapped);
	for (i = 0; i < cnt && !found; i++)
		found = basename_matches(mapped[i].shown, name);
	targets_free(mapped, cnt > 0 ? cnt : 0);
	return found;
}

/*
 * How to show the file the library's resolver found at path for process
 * pid (into buf): as the process sees it, a path in its root without
 * /proc/PID/root; a mapping's file (/proc/PID/map_files/START-END) as
 * maps shows it, "PATH (deleted)" for one deleted since.
 */
static const char *shown_of(const char *path, pid_t pid, char *buf, size_t size)
{
	char prefix[32];
	const char *rest;
	ssize_t n;
	pid_t in;

	if (pid <= 0)
		return path;
	if (usdt__proc_root_split(path, &in, &rest))
		return in == pid && *rest ? rest : path;
	snprintf(prefix, sizeof(prefix), "/proc/%d/map_files/", (int)pid);
	if (strncmp(path, prefix, strlen(prefix)))
		return path;
	n = readlink(path, buf, size - 1);
	if (n <= 0)
		return path;
	buf[n] = '\0';
	return buf;
}

int target_resolve(const char *name, pid_t pid, struct target *out)
{
	char found[PATH_MAX], shown[PATH_MAX];
	int err;

	memset(out, 0, sizeof(*out));
	if (strchr(name, '/'))
		return target_set(out, name, pid);
	/* A file in the current directory, as the user typed it; a name
	 * there that cannot be looked up (a symlink loop) is said as such,
	 * not searched for elsewhere and reported missing. */
	if (pid <= 0 && !access(name, F_OK))
		return target_set(out, name, 0);
	if (pid <= 0 && errno != ENOENT && errno != ENOTDIR)
		return -errno;

	/* The library's resolver: pid's maps, then where the loader looks. */
	err = usdt_resolve_path(pid > 0 ? pid : -1, name, found, sizeof(found));
	if (err)
		return err;
	out->shown = strdup(shown_of(found, pid, shown, sizeof(shown)));
	out->open_path = strdup(found);
	if (!out->shown || !out->open_path) {
		target_free(out);
		return -ENOMEM;
	}
	return 0;
}

/*
 * The mapping a target of targets_of_pid() is the file of (m.path is
 * path): which file that is, and by what path, is only looked for when it
 * is opened (target_open()), so that reading a process's maps again (usdt
 * trace -p does, 5 times a second) opens nothing.
 */
struct target_map {
	pid_t pid;
	struct usdt__mapping m;
	char path[];
};

/* Is t the file of mapping m, named as maps names it? */
static bool target_shows(const struct target *t, const struct usdt__mapping *m)
{
	size_t len = strlen(m->path);

	return !strncmp(t->shown, m->path, len) &&
	       !strcmp(t->shown + len, m->deleted ? " (deleted)" : "");
}

/* t (new) for the file of mapping m of process pid, shown as maps shows
 * it ("PATH (deleted)" for a file deleted since). */
static int target_set_mapping(struct target *t, pid_t pid,
			      const struct usdt__mapping *m)
{
	size_t len = strlen(m->path);

	memset(t, 0, sizeof(*t));
	t->map = malloc(sizeof(*t->map) + len + 1);
	if (!t->map)
		return -ENOMEM;
	if (asprintf(&t->shown, "%s%s", m->path,
		     m->deleted ? " (deleted)" : "") < 0) {
		free(t->map);
		memset(t, 0, sizeof(*t));
		return -ENOMEM;
	}
	t->map->pid = pid;
	t->map->m = *m;
	memcpy(t->map->path, m->path, len + 1);
	t->map->m.path = t->map->path;
	return 0;
}

int targets_of_pid(pid_t pid, struct target **out)
{
	struct target *list = NULL, *tmp;
	size_t cap = 0, alloc = 0;
	struct name_set seen = { 0 };
	struct usdt__mapping m;
	int cnt = 0, err = 0;
	char *line = NULL;
	FILE *f;

	*out = NULL;
	f = usdt__maps_open(pid);
	if (!f)
		return -errno;
	while (!err && usdt__maps_next(f, &line, &cap, &m) > 0) {
		/* A file's mappings are most often next to each other: the
		 * last one is looked at before anything is made. */
		if (cnt && target_shows(&list[cnt - 1], &m))
			continue;
		if ((size_t)cnt == alloc) {
			alloc = alloc ? alloc * 2 : 16;
			tmp = realloc(list, alloc * sizeof(*list));
			if (!tmp) {
				err = -ENOMEM;
				break;
			}
			list = tmp;
		}
		err = target_set_mapping(&list[cnt], pid, &m);
		if (!err)
			err = name_set_add(&seen, list[cnt].shown);
		if (err == 1)
			cnt++;
		else
			target_free(&list[cnt]); /* seen, or no memory */
		err = err < 0 ? err : 0;
	}
	name_set_free(&seen);
	free(line);
	fclose(f);
	if (err) {
		targets_free(list, cnt);
		return err;
	}
	*out = list;
	return cnt;
}

/*
 * A target of targets_of_pid() is opened as the library opens a mapping's
 * file (usdt__open_mapping(), src/proc/procmap.c): /proc/PID/map_files/
 * START-END, the mapping itself, as root; else the first of
 * /proc/PID/root/PATH and /proc/PID/root/REST (a process chrooted in our
 * mount namespace shows our paths: ROOT/REST), looked up inside the
 * process's root, that is the mapped file, by device and inode. The file
 * read from the descriptor that was checked (usdt__file_adopt()), never
 * opened again by its path, which its owner may point elsewhere meanwhile;
 * the path that reached it names it. Any other target's /proc/PID/root/
 * path is opened inside that root too, by the library's one resolver
 * (src/base/openpath.c).
 */
struct usdt_file *target_open(const struct target *t)
{
	char path[PATH_MAX + 64];
	int fd;

	if (!t->map)
		return usdt_file__open(t->open_path, NULL);
	fd = usdt__open_mapping(t->map->pid, &t->map->m, path, sizeof(path));
	if (fd < 0) {
		errno = -fd;
		return NULL;
	}
	return usdt__file_adopt(fd, path);
}

/* ---------------------------------------------------------------------- */
/* Output helpers                                                         */

/* The text form of byte c in print_escaped()'s output: its length, and
 * in out (not terminated) its characters. */
static size_t escape_byte(unsigned char c, char out[4])
{
	static const char hex[] = "0123456789abcdef";

	out[0] = '\\';
	if (c == '\\' || c == '\n' || c == '\t') {
		out[1] = c == '\n' ? 'n' : c == '\t' ? 't' : '\\';
		return 2;
	}
	if (c < 0x20 || c >= 0x7f) {
		out[1] = 'x';
		out[2] = hex[c >> 4];
		out[3] = hex[c & 0xf];
		return 4;
	}
	out[0] = (char)c;
	return 1;
}

size_t print_escaped(FILE *f, const char *s, size_t len)
{
	size_t i, n = 0, k;
	char buf[4];

	for (i = 0; i < len; i++) {
		k = escape_byte((unsigned char)s[i], buf);
		fwrite(buf, 1, k, f);
		n += k;
	}
	return n;
}

size_t escaped_len(const char *s, size_t len)
{
	size_t i, n = 0;
	char buf[4];

	for (i = 0; i < len; i++)
		n += escape_byte((unsigned char)s[i], buf);
	return n;
}

void json_str(FILE *f, const char *s)
{
	const unsigned char *p = (const unsigned char *)s;

	if (!s) {
		fputs("null", f);
		return;
	}
	fputc('"', f);
	for (; *p; p++) {
		switch (*p) {
		case '"':
			fputs("\\\"", f);
			break;
		case '\\':
			fputs("\\\\", f);
			break;
		case '\n':
			fputs("\\n", f);
			break;
		case '\r':
			fputs("\\r", f);
			break;
		case '\t':
			fputs("\\t", f);
			break;
		default:
			/* Notes are untrusted bytes, maybe not UTF-8: every
			 * byte outside printable ASCII becomes a code point of
			 * its own (a Latin-1 reading), so the output is always
			 * valid JSON. */
			if (*p < 0x20 || *p >= 0x7f)
				fprintf(f, "\\u%04x", *p);
			else
				fputc(*p, f);
		}
	}
	fputc('"', f);
}

const char *arg_type_name(const struct usdt_arg_info *a)
{
	if (a->is_float) {
		switch (a->size) {
		case 4:
			return "float";
		case 8:
			return "double";
		case 16:
			return "float128";
		default:
			return "float?";
		}
	}
	switch (a->size) {
	case 1:
		return a->is_signed ? "int8" : "uint8";
	case 2:
		return a->is_signed ? "int16" : "uint16";
	case 4:
		return a->is_signed ? "int32" : "uint32";
	case 8:
		return a->is_signed ? "int64" : "uint64";
	case 16:
		return a->is_signed ? "int128" : "uint128";
	default: {
		static char buf[32];

		snprintf(buf, sizeof(buf), "%d bytes", a->size);
		return buf;
	}
	}
}
