// SPDX-License-Identifier: BSD-2-Clause
/*
 * Chunked arrays: the spec map and the storage map of bpf/usdt.bpf.h are
 * arrays of maps whose entries, mmapable arrays of `per` values each, are
 * created here when the first index in them is handed out. Without a
 * head, value i lives at entry i % per of chunk i / per; the BPF side
 * does two array lookups, both inlined by the kernel.
 *
 * Invariants: chunks 0 to cnt - 1 exist, sit in the outer map (after
 * usdt__chunks_flush()) and are either mapped at mem[k] (mapped chunks)
 * or held by fds[k]; an index below next is either taken or zero and on
 * the free stack, which has room for every index of the head and of every
 * chunk. (A head taken over from a released store may hold its old values
 * at indexes not handed out yet: no link reads them.) A mapped chunk is written in place (no
 * syscall) and its descriptor closed at once: the outer map and the
 * mapping hold it. The storage map is mapped (its values are the user's to
 * read in place); the spec map is not: a mapping counts its pages in this
 * process's memory (224 bytes a spec), where a write through the chunk's
 * descriptor costs a syscall per chunk (a batch) and a descriptor per
 * 256 specs.
 *
 * The spec map has a head (usdt_spec.h): a plain array in the object,
 * there from load, whose entries are indexes 0 to head_cnt - 1; chunk k
 * then holds indexes head_cnt + k * per on. Writing the head waits for
 * nothing, so a store that needs no more than the head never touches
 * the outer map. Whose the head is says its last entry, the token: 0
 * (never claimed), a token this process released (usdt__claim_is_free()),
 * or another store's (EBUSY); the store that opens it writes its own.
 *
 * Chunks are never taken out: each update or delete of an outer map waits
 * for an RCU grace period (tens of milliseconds), and hits of links being
 * destroyed may still read them. New chunks, mapped or not, go into the
 * outer map together at usdt__chunks_flush(): one batch, one wait (on
 * Linux 6.7 and later; before, the kernel waits once per entry of a
 * batch, which is why chunks are few and big). A store that reserves
 * room for a whole file at its first attach there (usdt__chunks_reserve())
 * waits no more for that file. A released store leaves its chunks where
 * they are (closing waits for nothing); what tells the next store of the
 * object that they are free is the owner's record (src/store/store.c), and
 * the next store's chunks replace them as it grows. What is left is kernel
 * memory until it is replaced or the object is closed.
 */
#include <fcntl.h>
#include <pthread.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <linux/bpf.h>

#include "store/chunks.h"
#include "base/base.h"

/* The type id leads to through typedefs and qualifiers. */
static const struct btf_type *skip_mods(const struct btf *btf, __u32 *id)
{
	const struct btf_type *t = btf__type_by_id(btf, *id);

	while (t && (btf_is_typedef(t) || btf_is_mod(t))) {
		*id = t->type;
		t = btf__type_by_id(btf, *id);
	}
	return t;
}

/* The type of member name of struct s, or 0. */
static __u32 member_type(const struct btf *btf, const struct btf_type *s,
			 const char *name)
{
	const struct btf_member *m = btf_members(s);
	unsigned int i, n = btf_vlen(s);

	for (i = 0; i < n; i++, m++)
		if (!strcmp(btf__name_by_offset(btf, m->name_off), name))
			return m->type;
	return 0;
}

/* Field name of map definition s: the type it points to, or 0. */
static __u32 def_field(const struct btf *btf, const struct btf_type *s,
		       const char *name)
{
	__u32 id = member_type(btf, s, name);
	const struct btf_type *t = id ? skip_mods(btf, &id) : NULL;

	return t && btf_is_ptr(t) ? t->type : 0;
}

int usdt__inner_def(const struct btf *btf, const char *map, uint32_t *per,
		    uint32_t *value_sz)
{
	const struct btf_type *t, *inner;
	__s64 sz;
	__u32 id;
	int var;

	if (!btf)
		return -ENOENT;
	var = btf__find_by_name_kind(btf, map, BTF_KIND_VAR);
	if (var <= 0)
		return -ENOENT;
	id = btf__type_by_id(btf, var)->type;
	t = skip_mods(btf, &id);
	if (!t || !btf_is_struct(t))
		return -ENOENT;
	/* values: an array of pointers to the inner definition. */
	id = member_type(btf, t, "values");
	t = id ? skip_mods(btf, &id) : NULL;
	if (!t || !btf_is_array(t))
		return -ENOENT;
	id = btf_array(t)->type;
	t = skip_mods(btf, &id);
	if (!t || !btf_is_ptr(t))
		return -ENOENT;
	id = t->type;
	inner = skip_mods(btf, &id);
	if (!inner || !btf_is_struct(inner))
		return -ENOENT;
	id = def_field(btf, inner, "max_entries");
	t = id ? skip_mods(btf, &id) : NULL;
	if (!t || !btf_is_array(t))
		return -ENOENT;
	*per = btf_array(t)->nelems;
	id = def_field(btf, inner, "value");
	sz = id ? btf__resolve_size(btf, id) : -1;
	if (sz <= 0 || sz > UINT32_MAX || !*per)
		return -ENOENT;
	*value_sz = (uint32_t)sz;
	return 0;
}

/*
 * Say why a descriptor for c could not be had (what: "open" or "create a
 * chunk of"), with the soft RLIMIT_NOFILE and what to do at EMFILE. The
 * limit is the host program's, never raised here: a descriptor past
 * FD_SETSIZE breaks a program that uses select().
 */
static void fd_failed(const struct usdt__chunks *c, const char *what, int err)
{
	struct rlimit rl;

	if (err != -EMFILE || getrlimit(RLIMIT_NOFILE, &rl)) {
		pr_warn("cannot %s %s: %s\n", what, c->name, usdt__errstr(err));
		return;
	}
	pr_warn("cannot %s %s: %s: the soft RLIMIT_NOFILE is %llu (hard %llu), and %s: raise the soft limit (setrlimit(), ulimit -n)\n",
		what, c->name, usdt__errstr(err),
		(unsigned long long)rl.rlim_cur,
		(unsigned long long)rl.rlim_max,
		c->mapped ? "each chunk takes a descriptor while it is made" :
			    "each chunk of this map holds a descriptor");
}

uint32_t usdt__obj_id(int fd)
{
	struct bpf_map_info info;
	__u32 len = sizeof(info);

	memset(&info, 0, sizeof(info));
	return bpf_obj_get_info_by_fd(fd, &info, &len) ? 0 : info.id;
}

#define CLAIMS_KEPT 64

static pthread_mutex_t claims_lock = PTHREAD_MUTEX_INITIALIZER;
static struct claim {
	uint32_t map_id;
	uint64_t token;
} claims_free[CLAIMS_KEPT];
static unsigned int claims_next;

void usdt__claim_free(uint32_t map_id, uint64_t token)
{
	if (!map_id || !token)
		return; /* not known: the place stays taken */
	pthread_mutex_lock(&claims_lock);
	claims_free[claims_next++ % CLAIMS_KEPT] =
		(struct claim){ map_id, token };
	pthread_mutex_unlock(&claims_lock);
}

bool usdt__claim_is_free(uint32_t map_id, uint64_t token)
{
	bool found = false;
	unsigned int i;

	pthread_mutex_lock(&claims_lock);
	for (i = 0; i < CLAIMS_KEPT && !found; i++)
		found = map_id && claims_free[i].map_id == map_id &&
			claims_free[i].token == token;
	pthread_mutex_unlock(&claims_lock);
	return found;
}

/*
 * Claim the head: its token entry holds 0 (never claimed) or a token
 * released in this process, else another store's (-EBUSY). A new token,
 * unique in this process and unlikely in another, goes in its place.
 */
static int head_claim(struct usdt__chunks *c)
{
	static uint32_t seq;
	char val[USDT__CHUNK_VALUE_MAX];
	uint32_t k = c->head_cnt;
	uint64_t tok;
	int err;

	if (c->value_sz > sizeof(val) || c->value_sz < sizeof(tok))
		return -EINVAL;
	if (bpf_map_lookup_elem(c->head_fd, &k, val)) {
		err = -errno;
		pr_warn("cannot read the token of %s's head: %s\n", c->name,
			usdt__errstr(err));
		return err;
	}
	memcpy(&tok, val, sizeof(tok));
	if (tok && !usdt__claim_is_free(c->head_id, tok)) {
		pr_warn("%s's head holds another store's specs: is the map shared with another manager (reused or pinned)?\n",
			c->name);
		return -EBUSY;
	}
	tok = (uint64_t)getpid() << 32 |
	      __atomic_add_fetch(&seq, 1, __ATOMIC_RELAXED);
	memset(val, 0, sizeof(val));
	memcpy(val, &tok, sizeof(tok));
	if (bpf_map_update_elem(c->head_fd, &k, val, BPF_ANY)) {
		err = -errno;
		pr_warn("cannot write the token of %s's head: %s\n", c->name,
			usdt__errstr(err));
		return err;
	}
	c->token = tok;
	return 0;
}

/* The head of outer, dup()ed and claimed, with room on the free stack for
 * its indexes. */
static int head_open(struct usdt__chunks *c, const struct usdt__outer *outer)
{
	int err;

	c->head_fd = -1;
	if (!outer->head_cnt || c->mapped)
		return 0;
	c->free = calloc(outer->head_cnt, sizeof(*c->free));
	if (!c->free)
		return -ENOMEM;
	c->head_fd = fcntl(outer->head_fd, F_DUPFD_CLOEXEC, 3);
	if (c->head_fd < 0) {
		err = -errno;
		fd_failed(c, "open", err);
		return err;
	}
	c->head_cnt = outer->head_cnt;
	c->head_id = usdt__obj_id(c->head_fd);
	return head_claim(c);
}

int usdt__chunks_open(struct usdt__chunks *c, const struct usdt__outer *outer,
		      uint32_t value_sz, uint32_t per, uint32_t cap,
		      bool mapped)
{
	long page = sysconf(_SC_PAGESIZE);
	uint32_t max = outer->max_entries;
	uint64_t all = (uint64_t)max * per + (mapped ? 0 : outer->head_cnt);
	int err;

	memset(c, 0, sizeof(*c));
	c->head_fd = -1;
	snprintf(c->name, sizeof(c->name), "%s", outer->name);
	c->value_sz = value_sz;
	c->stride = (value_sz + 7) & ~7U;
	c->per = per;
	c->max_chunks = max;
	/* Every index fits in 32 bits, less one for "none". */
	c->cap = all >= UINT32_MAX ? UINT32_MAX - 1 : (uint32_t)all;
	if (cap && cap < c->cap)
		c->cap = cap;
	c->chunk_sz =
		((size_t)c->stride * per + page - 1) & ~(size_t)(page - 1);
	c->mapped = mapped;
	c->fd = fcntl(outer->fd, F_DUPFD_CLOEXEC, 3);
	if (c->fd < 0) {
		err = -errno;
		fd_failed(c, "open", err);
		return err;
	}
	c->outer_id = usdt__obj_id(c->fd);
	/* Room for a few chunks: chunks_room() grows it as chunks come, so
	 * that a big outer array costs nothing until it fills. */
	c->room = max < 4 ? (max ? max : 1) : 4;
	c->mem = calloc(c->room, sizeof(*c->mem));
	c->fds = calloc(c->room, sizeof(*c->fds));
	err = c->mem && c->fds ? head_open(c, outer) : -ENOMEM;
	if (err) {
		if (c->head_fd >= 0)
			close(c->head_fd);
		close(c->fd);
		free(c->mem);
		free(c->fds);
		free(c->free);
		memset(c, 0, sizeof(*c));
		return err;
	}
	return 0;
}

/* A new mmapable array of per values, mapped at *mem if c's chunks are;
 * its descriptor. */
static int chunk_create(const struct usdt__chunks *c, void **mem)
{
	LIBBPF_OPTS(bpf_map_create_opts, o, .map_flags = BPF_F_MMAPABLE);
	int fd, err;

	fd = bpf_map_create(BPF_MAP_TYPE_ARRAY, "usdt__chunk", sizeof(__u32),
			    c->value_sz, c->per, &o);
	if (fd < 0)
		return -errno;
	*mem = NULL;
	if (!c->mapped)
		return fd;
	*mem = mmap(NULL, c->chunk_sz, PROT_READ | PROT_WRITE, MAP_SHARED, fd,
		    0);
	if (*mem == MAP_FAILED) {
		err = -errno;
		close(fd);
		return err;
	}
	return fd;
}

/* Room in mem[] and fds[] for chunk k (< max_chunks), doubling. */
static int chunks_room(struct usdt__chunks *c, uint32_t k)
{
	uint32_t n = c->room;
	void **mem;
	int *fds;

	if (k < n)
		return 0;
	while (n <= k)
		n = n > c->max_chunks / 2 ? c->max_chunks : n * 2;
	mem = usdt__reallocarray(c->mem, n, sizeof(*mem));
	if (!mem)
		return -ENOMEM;
	c->mem = mem;
	fds = usdt__reallocarray(c->fds, n, sizeof(*fds));
	if (!fds)
		return -ENOMEM;
	c->fds = fds;
	c->room = n;
	return 0;
}

/*
 * Add chunk cnt: room on the free stack first
 * (kept if a later step fails: harmless), then the map, held by its fd
 * until usdt__chunks_flush() puts it into the outer map with the others
 * of the attach. Nothing of it is left on failure.
 */
static int chunk_add(struct usdt__chunks *c, bool say)
{
	uint32_t k = c->cnt, inner_id, *nfree;
	void *mem;
	int fd, err;

	if (k >= c->max_chunks)
		return -E2BIG;
	if (chunks_room(c, k))
		return -ENOMEM;
	nfree = realloc(c->free, ((size_t)(k + 1) * c->per + c->head_cnt) *
					 sizeof(*nfree));
	if (!nfree)
		return -ENOMEM;
	c->free = nfree;
	/* Chunk 0 in place, where there is no head (whose token says whose
	 * it is): another store's, unless its owner released it
	 * (usdt__claim_is_free()). Only ENOENT says the slot is free: on any
	 * other error a live chunk may be there. */
	err = k || c->head_cnt ? -ENOENT :
				 bpf_map_lookup_elem(c->fd, &k, &inner_id);
	if (!err && usdt__claim_is_free(c->outer_id, inner_id))
		err = -ENOENT;
	if (err != -ENOENT) {
		if (!err && say)
			pr_warn("%s already holds chunk %u: is the map shared with another manager (reused or pinned)?\n",
				c->name, k);
		else if (say)
			pr_warn("cannot read slot %u of %s: %s\n", k, c->name,
				usdt__errstr(err));
		return err ? err : -EBUSY;
	}
	fd = chunk_create(c, &mem);
	if (fd < 0) {
		if (say)
			fd_failed(c, "create a chunk of", fd);
		return fd;
	}
	c->fds[k] = fd;
	c->mem[k] = mem;
	c->cnt++;
	if (!k)
		c->slot0_id = usdt__obj_id(fd);
	return 0;
}

/* A mapped chunk in the outer map needs no descriptor: the outer map and
 * the mapping hold it. */
static void mapped_fds_close(struct usdt__chunks *c, uint32_t from)
{
	uint32_t k;

	for (k = from; c->mapped && k < c->outer_cnt; k++) {
		close(c->fds[k]);
		c->fds[k] = -1;
	}
}

/*
 * Chunks [outer_cnt, cnt) into the outer map: one batch, or one update
 * each where the kernel has no batch for arrays of maps. 0 or -errno;
 * those that went in count.
 */
static int chunks_insert(struct usdt__chunks *c)
{
	uint32_t n = c->cnt - c->outer_cnt, from = c->outer_cnt, k, *keys;
	int err;

	if (!n)
		return 0;
	keys = n > 1 ? calloc(n, sizeof(*keys)) : NULL;
	if (keys) {
		for (k = 0; k < n; k++)
			keys[k] = c->outer_cnt + k;
		err = bpf_map_update_batch(c->fd, keys, &c->fds[c->outer_cnt],
					   &n, NULL) ?
			      -errno :
			      0;
		free(keys);
		if (!err) {
			c->outer_cnt = c->cnt;
			mapped_fds_close(c, from);
			return 0;
		}
	}
	for (err = 0; c->outer_cnt < c->cnt && !err; c->outer_cnt++) {
		k = c->outer_cnt;
		if (bpf_map_update_elem(c->fd, &k, &c->fds[k], BPF_ANY)) {
			err = -errno;
			pr_warn("cannot add a chunk to %s: %s\n", c->name,
				usdt__errstr(err));
			break;
		}
	}
	mapped_fds_close(c, from);
	return err;
}

/* Indexes the head and the chunks made hold. */
static uint64_t made(const struct usdt__chunks *c)
{
	return (uint64_t)c->cnt * c->per + c->head_cnt;
}

uint64_t usdt__chunks_room_left(const struct usdt__chunks *c)
{
	uint64_t made_cnt = made(c);

	return c->free_cnt + (made_cnt > c->next ? made_cnt - c->next : 0);
}

void usdt__chunks_reserve(struct usdt__chunks *c, uint64_t n, uint32_t max_new)
{
	uint64_t want = c->live_cnt + n, have = made(c);
	uint32_t added = 0;

	if (usdt__chunks_room_left(c) >= n)
		return;
	/* At least twice what there is, so that a store fed many small
	 * files grows a logarithmic number of times. */
	if (want < 2 * have)
		want = 2 * have;
	if (want > c->cap)
		want = c->cap;
	while (made(c) < want && added < max_new && !chunk_add(c, false))
		added++;
}

int usdt__chunks_take(struct usdt__chunks *c, uint32_t *i)
{
	int err;

	if (c->free_cnt) {
		*i = c->free[--c->free_cnt];
	} else {
		if (c->next >= c->cap)
			return -E2BIG;
		if (c->next >= made(c) && (err = chunk_add(c, true)))
			return err;
		*i = c->next++;
	}
	c->live_cnt++;
	return 0;
}

/* Which map index i is in: 0 the head, k + 1 chunk k. */
static uint32_t map_of(const struct usdt__chunks *c, uint32_t i)
{
	return i < c->head_cnt ? 0 : (i - c->head_cnt) / c->per + 1;
}

/* The descriptor of the map index i is in, and its key there. */
static int fd_of(const struct usdt__chunks *c, uint32_t i, uint32_t *key)
{
	if (i < c->head_cnt) {
		*key = i;
		return c->head_fd;
	}
	*key = (i - c->head_cnt) % c->per;
	return c->fds[(i - c->head_cnt) / c->per];
}

/* Index i's value through its map's descriptor, now. */
static int write_now(const struct usdt__chunks *c, uint32_t i, const void *val)
{
	uint32_t j;
	int fd = fd_of(c, i, &j);

	return bpf_map_update_elem(fd, &j, val, BPF_ANY) ? -errno : 0;
}

#define PEND_MAX 4096

static int flush_writes(struct usdt__chunks *c);

int usdt__chunks_write(struct usdt__chunks *c, uint32_t i, const void *val)
{
	void *v;

	if (c->mapped) {
		memcpy(usdt__chunks_at(c, i), val, c->value_sz);
		return 0;
	}
	/* Kept for usdt__chunks_flush(): one syscall per chunk. At most
	 * PEND_MAX at once (224 bytes each), so what they cost the
	 * process stays bounded. */
	if (c->pend_cnt >= PEND_MAX && flush_writes(c))
		return write_now(c, i, val);
	if (c->pend_cnt == c->pend_cap) {
		uint32_t cap = c->pend_cap ? c->pend_cap * 2 : 64;
		uint32_t *idx =
			usdt__reallocarray(c->pend_idx, cap, sizeof(*idx));

		if (idx)
			c->pend_idx = idx;
		v = idx ? usdt__reallocarray(c->pend_val, cap, c->stride) :
			  NULL;
		if (!v)
			return write_now(c, i, val);
		c->pend_val = v;
		c->pend_cap = cap;
	}
	c->pend_idx[c->pend_cnt] = i;
	memcpy((char *)c->pend_val + (size_t)c->pend_cnt * c->stride, val,
	       c->value_sz);
	c->pend_cnt++;
	return 0;
}

/* Pending writes [from, to) all of one map (the head or a chunk): one
 * batch, or one by one where the kernel has no batch for it. */
static int flush_run(struct usdt__chunks *c, uint32_t from, uint32_t to)
{
	LIBBPF_OPTS(bpf_map_batch_opts, o);
	uint32_t n = to - from, x, *keys;
	char *vals = (char *)c->pend_val + (size_t)from * c->stride;
	int err = 0, fd = -1;

	keys = c->stride == c->value_sz && n > 1 ? calloc(n, sizeof(*keys)) :
						   NULL;
	for (x = from; keys && x < to; x++)
		fd = fd_of(c, c->pend_idx[x], &keys[x - from]);
	if (keys && !bpf_map_update_batch(fd, keys, vals, &n, &o)) {
		free(keys);
		return 0;
	}
	free(keys);
	for (x = from; x < to && !err; x++)
		err = write_now(c, c->pend_idx[x],
				vals + (size_t)(x - from) * c->stride);
	return err;
}

/* The writes kept, one batch per chunk. A read through the chunk's fd
 * needs them, not the chunk's place in the outer map. */
static int flush_writes(struct usdt__chunks *c)
{
	uint32_t from = 0, to;
	int err = 0, e;

	while (from < c->pend_cnt) {
		uint32_t k = map_of(c, c->pend_idx[from]);

		for (to = from + 1;
		     to < c->pend_cnt && map_of(c, c->pend_idx[to]) == k; to++)
			;
		e = flush_run(c, from, to);
		err = err ? err : e;
		from = to;
	}
	c->pend_cnt = 0;
	return err;
}

int usdt__chunks_flush_writes(struct usdt__chunks *c)
{
	return c->mapped || !c->mem ? 0 : flush_writes(c);
}

int usdt__chunks_flush(struct usdt__chunks *c)
{
	int err = chunks_insert(c), e = flush_writes(c);

	return err ? err : e;
}

int usdt__chunks_read(struct usdt__chunks *c, uint32_t i, void *val)
{
	uint32_t j;
	int err;

	if (c->mapped) {
		memcpy(val, usdt__chunks_at(c, i), c->value_sz);
		return 0;
	}
	err = flush_writes(c);
	if (err)
		return err;
	return bpf_map_lookup_elem(fd_of(c, i, &j), &j, val) ? -errno : 0;
}

void usdt__chunks_give(struct usdt__chunks *c, uint32_t i)
{
	static const char zero[USDT__CHUNK_VALUE_MAX];

	if (i >= c->next)
		return;
	/* Zeroed, so that a stale reference reads nothing: in place, or
	 * through a descriptor with the writes kept for one batch per chunk
	 * (usdt__chunks_flush_writes(): a link's release gives back every
	 * spec of its sites, 100,003 updates one by one), after any write
	 * to i kept before. Through a descriptor this can fail (out of
	 * memory): the value stays, and the next taker overwrites it. */
	if (c->mapped)
		memset(usdt__chunks_at(c, i), 0, c->value_sz);
	else
		(void)usdt__chunks_write(c, i, zero);
	c->free[c->free_cnt++] = i;
	c->live_cnt--;
}

void *usdt__chunks_at(const struct usdt__chunks *c, uint32_t i)
{
	return (char *)c->mem[i / c->per] + (size_t)(i % c->per) * c->stride;
}

void usdt__chunks_close(struct usdt__chunks *c, bool reusable)
{
	uint32_t k;

	if (!c->mem)
		return;
	if (reusable && c->head_fd >= 0)
		usdt__claim_free(c->head_id, c->token);
	else if (reusable && c->outer_cnt)
		usdt__claim_free(c->outer_id, c->slot0_id);
	if (c->head_fd >= 0)
		close(c->head_fd);
	for (k = 0; k < c->cnt; k++) {
		if (c->mapped)
			munmap(c->mem[k], c->chunk_sz);
		if (c->fds[k] >= 0)
			close(c->fds[k]);
	}
	close(c->fd);
	free(c->mem);
	free(c->fds);
	free(c->pend_idx);
	free(c->pend_val);
	free(c->free);
	memset(c, 0, sizeof(*c));
}
