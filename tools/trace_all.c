// SPDX-License-Identifier: BSD-2-Clause
/*
 * `usdt trace -a PATTERN...`: the matching probes of every process, those
 * started later too, by name alone (bpftrace's usdt:*:PROVIDER:NAME).
 *
 * A look, every TRACE_ALL_MS (further apart when one costs more than 1/20
 * of the time between them), lists the processes in /proc and reads each
 * one's /proc/PID/stat, a line: kernel threads and zombies map nothing. A
 * process whose signature there (start time, total size of its mappings,
 * and where its code, heap, stack, arguments and environment begin, which
 * an exec changes) is the one of the last look keeps what it was found to
 * map; a new or changed one has its maps read, for the files it maps,
 * each by the device and inode that maps shows (a file's identity, not
 * its path: one file seen by several paths, chroots or mount namespaces
 * is one; on btrfs, with its subvolume's device, key_of()).
 *
 * Each identity is read once: its file opened through the mapping
 * (usdt__open_mapping(): map_files/, or the process's root by the
 * library's resolver), its probes matched against the patterns. One with
 * none is kept as such and never read again while any process maps it.
 * One with some joins r->files, is attached once for every process (pid
 * -1: a uprobe lives on the inode, whoever maps it), and stays open,
 * which keeps its inode, and so its number, its own: mapped again after
 * its detach, it is that file (a file deleted meanwhile, an upgraded
 * library's old copy, keeps its disk space until the tool ends; at most
 * as many files as TRACE_WATCH_SPARE probes). Hits in a process
 * before the look that finds its file (at most about TRACE_ALL_MS plus a
 * poll's 100 ms after the exec or dlopen(), while the file is not mapped
 * by another process already) are missed.
 *
 * Invariants:
 *   procs[] is sorted by pid; each lists the identities it maps, sorted
 *     and once each, all of them in ids[];
 *   ids[] is sorted by (dev, ino); refs is the number of procs listing it;
 *   an identity with no probes (file < 0) and refs 0 is not kept: a file
 *     no process maps is forgotten, and read again if mapped again;
 *   one with probes is attached exactly when refs > 0: detached (said)
 *     when the last process that maps it exits, execs or unmaps it,
 *     attached again with the same probes (counts go on) when mapped again.
 * Bounds: the first look reads every process, as -p reads every file at
 * the start; each later one TRACE_ALL_PARSES maps and TRACE_ALL_OPENS
 * files at most (the rest wait for the next); identities without probes past
 * TRACE_ALL_IDS are not kept (read again at each change of a process
 * that maps them); processes past TRACE_ALL_PROCS are not looked at (said
 * once); files with probes, as many as the BPF maps keep room for
 * (TRACE_WATCH_SPARE probes).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "usdt_tool.h"
#include "trace.h"

#define TRACE_ALL_PARSES 256
#define TRACE_ALL_OPENS 256
#define TRACE_ALL_IDS 65536
#define TRACE_ALL_PROCS 65536

/* statfs()'s f_type of btrfs. */
#define ALL_BTRFS_MAGIC 0x9123683eul

/* PF_KTHREAD in /proc/PID/stat's flags. */
#define ALL_PF_KTHREAD 0x00200000u

/* A file's identity: as maps shows it, and on btrfs its subvolume's
 * device (key_of()); 0 elsewhere. */
struct all_key {
	dev_t dev;
	ino_t ino;
	dev_t sub;
};

struct all_id {
	struct all_key key;
	uint32_t refs;
	int file; /* in r->files, or -1: no matching probe */
	bool attached;
};

struct all_proc {
	pid_t pid;
	uint64_t sig;	    /* 0: read its maps at the next look */
	unsigned long look; /* the last look that updated it */
	struct all_key *keys;
	size_t key_cnt;
};

struct all_state {
	struct all_proc *procs;
	size_t proc_cnt;
	struct all_id *ids;
	size_t id_cnt, id_cap;
	unsigned int parses, opens; /* this look's */
	unsigned long looks;	    /* before this one */
	/* What processes listed before this look's change of them: let go
	 * of at its end, so that a file going from one process to another
	 * (an exit and an exec in one look) stays attached. */
	struct all_proc *gone;
	size_t gone_cnt;
	bool said_procs, said_ids;
	pid_t self;
};

static int key_cmp(const void *a, const void *b)
{
	const struct all_key *x = a, *y = b;

	if (x->dev != y->dev)
		return x->dev < y->dev ? -1 : 1;
	if (x->ino != y->ino)
		return x->ino < y->ino ? -1 : 1;
	if (x->sub != y->sub)
		return x->sub < y->sub ? -1 : 1;
	return 0;
}

/* The identity k in ids[], or NULL with *at where it would go. */
static struct all_id *id_find(const struct all_state *s,
			      const struct all_key *k, size_t *at)
{
	size_t lo = 0, hi = s->id_cnt;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		int c = key_cmp(k, &s->ids[mid].key);

		if (!c)
			return &s->ids[mid];
		if (c < 0)
			hi = mid;
		else
			lo = mid + 1;
	}
	if (at)
		*at = lo;
	return NULL;
}

static struct all_id *id_insert(struct all_state *s, const struct all_key *k,
				int file)
{
	struct all_id *v;
	size_t at;

	if (id_find(s, k, &at))
		return NULL; /* cannot be: looked for first */
	if (s->id_cnt == s->id_cap) {
		size_t cap = s->id_cap ? s->id_cap * 2 : 256;

		v = realloc(s->ids, cap * sizeof(*v));
		if (!v)
			return NULL;
		s->ids = v;
		s->id_cap = cap;
	}
	memmove(s->ids + at + 1, s->ids + at,
		(s->id_cnt - at) * sizeof(*s->ids));
	s->id_cnt++;
	s->ids[at] = (struct all_id){ .key = *k, .file = file };
	return &s->ids[at];
}

/* Attach (or detach) the probes of file fi; how many changed. */
static size_t file_links(struct trace_run *r, int fi, bool attach)
{
	size_t i, n = 0;

	for (i = 0; i < r->ctx.probe_cnt; i++) {
		struct probe_ent *p = &r->ctx.probes[i];

		if (p->file != fi || !!p->link == attach)
			continue;
		if (!attach) {
			usdt_link__destroy(p->link);
			p->link = NULL;
			n++;
			continue;
		}
		p->link = trace_attach_one(r, i);
		if (p->link)
			n++;
		else
			probe_err(p, "warning: not attached again: %s",
				  trace_attach_why(r, p, errno));
	}
	return n;
}

/* One process more maps identity id: attached again if it was not. */
static void id_ref(struct trace_run *r, struct all_id *id, pid_t pid)
{
	size_t n;

	if (id->refs++ || id->file < 0 || id->attached)
		return;
	n = file_links(r, id->file, true);
	r->attached += n;
	id->attached = true;
	if (n && !r->o.quiet)
		fprintf(stderr,
			"%s: tracing %zu probe%s in %s again, mapped by pid %d\n",
			tool_name, n, n == 1 ? "" : "s",
			r->files[id->file].target.shown, (int)pid);
}

/* One process fewer maps identity k: at none, detached or forgotten. */
static void id_unref(struct trace_run *r, const struct all_key *k)
{
	struct all_state *s = r->as;
	struct all_id *id = id_find(s, k, NULL);
	size_t n;

	if (!id || !id->refs || --id->refs)
		return;
	if (id->file < 0) {
		size_t at = (size_t)(id - s->ids);

		memmove(id, id + 1, (s->id_cnt - at - 1) * sizeof(*id));
		s->id_cnt--;
		return;
	}
	if (!id->attached)
		return;
	n = file_links(r, id->file, false);
	r->attached -= n;
	id->attached = false;
	if (n && !r->o.quiet)
		fprintf(stderr,
			"%s: no process maps %s any more: detached its %zu probe%s\n",
			tool_name, r->files[id->file].target.shown, n,
			n == 1 ? "" : "s");
}

/*
 * The file of mapping m of pid, read for the first time: its identity
 * into ids[], with its probes traced if it has matching ones. 0, 1 when
 * it is not kept (past TRACE_ALL_IDS), or the exit status as -1 - status.
 */
static int id_read(struct trace_run *r, pid_t pid,
		   const struct usdt__mapping *m, const struct all_key *k)
{
	struct all_state *s = r->as;
	struct trace_file f = { 0 };
	char path[PATH_MAX + 64], how[48];
	int fd, fi = -1, err;

	s->opens++;
	fd = usdt__open_mapping(pid, m, path, sizeof(path));
	f.file = fd >= 0 ? usdt__file_adopt(fd, path) : NULL;
	if (f.file && usdt_file__probe_cnt(f.file)) {
		if (asprintf(&f.target.shown, "%s%s", m->path,
			     m->deleted ? " (deleted)" : "") < 0) {
			usdt_file__close(f.file);
			return -1 - tool_err("trace: out of memory");
		}
		f.dev = k->dev;
		f.ino = k->ino;
		snprintf(how, sizeof(how), "mapped by pid %d", (int)pid);
		err = trace_add_file(r, &f, how);
		if (err) {
			target_free(&f.target);
			usdt_file__close(f.file);
			return -1 - err;
		}
		if (!f.target.shown) /* moved into r->files */
			fi = r->file_cnt - 1;
		target_free(&f.target);
	}
	usdt_file__close(f.file);
	if (fi < 0 && s->id_cnt >= TRACE_ALL_IDS) {
		if (!s->said_ids)
			tool_err("trace: warning: more than %d files mapped without matching probes: the others are read again when a process that maps them changes",
				 TRACE_ALL_IDS);
		s->said_ids = true;
		return 1;
	}
	if (!id_insert(s, k, fi))
		return -1 - tool_err("trace: out of memory");
	if (fi >= 0)
		id_find(s, k, NULL)->attached = true;
	return 0;
}

/* Add k to keys[*cnt] (growing *cap); 0 or -ENOMEM. */
static int keys_add(struct all_key **keys, size_t *cnt, size_t *cap,
		    const struct all_key *k)
{
	struct all_key *v;

	if (*cnt && !key_cmp(&(*keys)[*cnt - 1], k))
		return 0; /* a file's mappings are most often together */
	if (*cnt == *cap) {
		*cap = *cap ? *cap * 2 : 32;
		v = realloc(*keys, *cap * sizeof(*v));
		if (!v)
			return -ENOMEM;
		*keys = v;
	}
	(*keys)[(*cnt)++] = *k;
	return 0;
}

/* Sort keys and keep each once; the count. */
static size_t keys_unique(struct all_key *keys, size_t cnt)
{
	size_t i, n = 0;

	if (!cnt)
		return 0; /* keys may be NULL, which qsort() may not get */
	qsort(keys, cnt, sizeof(*keys), key_cmp);
	for (i = 0; i < cnt; i++)
		if (!n || key_cmp(&keys[n - 1], &keys[i]))
			keys[n++] = keys[i];
	return n;
}

/*
 * The identity of mapping m of pid. On btrfs, maps shows the file
 * system's device, and each subvolume numbers its inodes from 256: two
 * files of one device and inode there are told apart by the device a
 * stat() of the mapping (its map_files/ link, no file opened) gives, the
 * subvolume's. Only where maps shows an anonymous device (major 0, as
 * btrfs's) is that asked; where map_files/ cannot be read (no
 * CAP_SYS_ADMIN), maps's pair is all there is.
 */
static void key_of(pid_t pid, const struct usdt__mapping *m, struct all_key *k)
{
	char path[64];
	struct statfs sfs;
	struct stat st;

	*k = (struct all_key){ .dev = m->dev, .ino = m->ino };
	if (major(m->dev))
		return;
	snprintf(path, sizeof(path), "/proc/%d/map_files/%llx-%llx", (int)pid,
		 (unsigned long long)m->start, (unsigned long long)m->end);
	if (!statfs(path, &sfs) &&
	    (unsigned long)sfs.f_type == ALL_BTRFS_MAGIC && !stat(path, &st))
		k->sub = st.st_dev;
}

/*
 * Read pid's maps: the identities it maps (those kept in ids[]) into
 * *out, each file not seen before read. 0; -EAGAIN when this look's
 * budget of files ran out (the list is partial); -ENOENT when the maps
 * cannot be read; or the exit status as -1000 - status.
 */
static int proc_keys(struct trace_run *r, pid_t pid, struct all_key **out,
		     size_t *cnt)
{
	size_t cap = 0, lcap = 0;
	struct usdt__mapping m;
	struct all_key k = { 0 };
	char *line = NULL, last[PATH_MAX] = "";
	int err = 0, got;
	FILE *f;

	*out = NULL;
	*cnt = 0;
	f = usdt__maps_open(pid);
	if (!f)
		return -ENOENT;
	while (!err && usdt__maps_next(f, &line, &lcap, &m) > 0) {
		/* A file's mappings come together: the next of the last
		 * one's is that file (key_of() asks nothing again). */
		if (m.path[0] != '/' ||
		    (m.dev == k.dev && m.ino == k.ino && !strcmp(m.path, last)))
			continue;
		key_of(pid, &m, &k);
		snprintf(last, sizeof(last), "%s", m.path);
		if (*cnt && !key_cmp(&(*out)[*cnt - 1], &k))
			continue;
		if (!id_find(r->as, &k, NULL)) {
			if (r->as->looks && r->as->opens >= TRACE_ALL_OPENS) {
				err = -EAGAIN;
				break;
			}
			got = id_read(r, pid, &m, &k);
			if (got < 0)
				err = -1000 - (-1 - got);
			if (got)
				continue;
		}
		if (keys_add(out, cnt, &cap, &k))
			err = -1000 - tool_err("trace: out of memory");
	}
	free(line);
	fclose(f);
	*cnt = keys_unique(*out, *cnt);
	return err;
}

/*
 * pid's signature from /proc/PID/stat: 1 for a process with maps to read
 * (*sig set, never 0), 0 for a kernel thread or a zombie, -1 when gone.
 */
static int proc_sig(pid_t pid, uint64_t *sig)
{
	/* Fields (from 1) whose change means new maps: starttime, vsize,
	 * startcode, endcode, startstack, start_brk, arg_start, env_end. */
	static const int fields[] = { 22, 23, 26, 27, 28, 47, 48, 51 };
	char path[32], buf[1024], *p, *end;
	unsigned long long v;
	uint64_t h = 0;
	size_t w = 0;
	ssize_t n;
	int fd, field;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return -1;
	buf[n] = '\0';
	p = strrchr(buf, ')'); /* the name may hold anything */
	if (!p || p[1] != ' ' || p[2] == 'Z' || p[2] == 'X')
		return p ? 0 : -1;
	p += 3;
	for (field = 4; *p && w < sizeof(fields) / sizeof(fields[0]); field++) {
		v = strtoull(p, &end, 10);
		if (end == p)
			break;
		p = end + (*end == ' ');
		if (field == 9 && (v & ALL_PF_KTHREAD))
			return 0;
		if (field == fields[w]) {
			h = tool_hash_step(h, (unsigned int)v);
			h = tool_hash_step(h, (unsigned int)(v >> 32));
			w++;
		}
	}
	*sig = h ? h : 1;
	return 1;
}

/* What p lists is let go of at the end of the look (retire()); the
 * room for it is made at the start (merge_procs()). */
static void proc_drop(struct trace_run *r, struct all_proc *p)
{
	if (p->keys)
		r->as->gone[r->as->gone_cnt++] = *p;
	p->keys = NULL;
	p->key_cnt = 0;
}

static void retire(struct trace_run *r)
{
	struct all_state *s = r->as;
	size_t i, k;

	for (i = 0; i < s->gone_cnt; i++) {
		for (k = 0; k < s->gone[i].key_cnt; k++)
			id_unref(r, &s->gone[i].keys[k]);
		free(s->gone[i].keys);
	}
	s->gone_cnt = 0;
}

/*
 * Bring p (pid p->pid; new: no keys, sig 0) up to date. 0 or the exit
 * status. A process over this look's budget keeps what it listed, to be
 * read at the next.
 */
static int proc_update(struct trace_run *r, struct all_proc *p)
{
	struct all_key *keys;
	uint64_t sig = 0;
	size_t cnt, i;
	int live, err;

	p->look = r->as->looks + 1;
	live = proc_sig(p->pid, &sig);
	if (live <= 0) {
		proc_drop(r, p);
		p->sig = 0;
		return 0;
	}
	if (sig == p->sig)
		return 0;
	if (r->as->looks && (r->as->parses >= TRACE_ALL_PARSES ||
			     r->as->opens >= TRACE_ALL_OPENS)) {
		p->sig = 0;
		return 0;
	}
	r->as->parses++;
	err = proc_keys(r, p->pid, &keys, &cnt);
	if (err <= -1000) {
		free(keys);
		return -1000 - err;
	}
	/* Maps we may not read (another user's process, without
	 * CAP_SYS_PTRACE) are tried again only when they change. */
	if (err == -ENOENT)
		err = 0;
	for (i = 0; i < cnt; i++)
		id_ref(r, id_find(r->as, &keys[i], NULL), p->pid);
	proc_drop(r, p); /* after: a file it still maps stays */
	p->keys = keys;
	p->key_cnt = cnt;
	p->sig = err ? 0 : sig;
	return 0;
}

static int pid_cmp(const void *a, const void *b)
{
	pid_t x = *(const pid_t *)a, y = *(const pid_t *)b;

	return (x > y) - (x < y);
}

/* The pids in /proc, sorted, at most TRACE_ALL_PROCS; count or -errno. */
static int list_pids(struct trace_run *r, pid_t **out)
{
	size_t n = 0, cap = 0;
	pid_t *v = NULL, *t;
	struct dirent *d;
	DIR *dir = opendir("/proc");

	*out = NULL;
	if (!dir)
		return -errno;
	while ((d = readdir(dir))) {
		pid_t pid = parse_pid(d->d_name);

		if (pid <= 0 || pid == r->as->self)
			continue;
		if (n == TRACE_ALL_PROCS) {
			if (!r->as->said_procs)
				tool_err("trace: warning: more than %d processes: the others are not traced",
					 TRACE_ALL_PROCS);
			r->as->said_procs = true;
			break;
		}
		if (n == cap) {
			cap = cap ? cap * 2 : 512;
			t = realloc(v, cap * sizeof(*v));
			if (!t) {
				free(v);
				closedir(dir);
				return -ENOMEM;
			}
			v = t;
		}
		v[n++] = pid;
	}
	closedir(dir);
	if (n)
		qsort(v, n, sizeof(*v), pid_cmp);
	*out = v;
	return (int)n;
}

/*
 * Walk the sorted old procs and the sorted pids of now together into
 * procs: a gone process's files let go of, a new one's read, an old one's
 * read again if it changed. 0 or the exit status.
 */
static int merge_procs(struct trace_run *r, const pid_t *pids, size_t n)
{
	struct all_state *s = r->as;
	struct all_proc *old = s->procs, *np;
	size_t i = 0, j = 0, k = 0;
	int err = 0;

	np = calloc(n + 1, sizeof(*np));
	/* Each process drops one list at most. */
	s->gone = calloc(s->proc_cnt + n + 1, sizeof(*s->gone));
	if (!np || !s->gone) {
		free(np);
		free(s->gone);
		s->gone = NULL;
		return tool_err("trace: out of memory");
	}
	while (i < s->proc_cnt || j < n) {
		if (j == n || (i < s->proc_cnt && old[i].pid < pids[j])) {
			proc_drop(r, &old[i++]); /* gone */
			continue;
		}
		if (i < s->proc_cnt && old[i].pid == pids[j])
			np[k] = old[i++];
		else
			np[k].pid = pids[j];
		j++;
		k++;
	}
	/* New processes (and those left for this look) first: busy ones,
	 * whose maps change at every look, do not starve them of the
	 * budget. */
	for (i = 0; i < k && !err; i++)
		if (!np[i].sig)
			err = proc_update(r, &np[i]);
	for (i = 0; i < k && !err; i++)
		if (np[i].look != s->looks + 1)
			err = proc_update(r, &np[i]);
	free(old);
	s->procs = np;
	s->proc_cnt = k;
	retire(r);
	free(s->gone);
	s->gone = NULL;
	return err;
}

int trace_all_scan(struct trace_run *r)
{
	pid_t *pids;
	int n, err;

	if (!r->as) {
		r->as = calloc(1, sizeof(*r->as));
		if (!r->as)
			return tool_err("trace: out of memory");
		r->as->self = getpid();
	}
	r->as->parses = r->as->opens = 0;
	n = list_pids(r, &pids);
	if (n < 0)
		return tool_err("trace: cannot list /proc: %s",
				tool_strerror(n));
	err = merge_procs(r, pids, (size_t)n);
	free(pids);
	r->as->looks++;
	return err;
}

void trace_all_free(struct trace_run *r)
{
	size_t i;

	if (!r->as)
		return;
	for (i = 0; i < r->as->proc_cnt; i++)
		free(r->as->procs[i].keys);
	free(r->as->procs);
	free(r->as->ids);
	free(r->as);
	r->as = NULL;
}
