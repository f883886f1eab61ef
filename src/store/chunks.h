/* SPDX-License-Identifier: BSD-2-Clause */
/* Chunked arrays of maps (src/store/chunks.c): the spec table's and the
 * storage's. */
#ifndef __LIBUSDT_CHUNKS_H
#define __LIBUSDT_CHUNKS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <bpf/libbpf.h>

/*
 * A chunked array (src/store/chunks.c): the BPF side's array of maps, its chunks
 * created, mapped into this process and handed out index by index.
 * Invariant: chunks below cnt exist (mapped at mem[k], or open at fds[k])
 * and those below outer_cnt sit in the outer map (all of them after
 * usdt__chunks_flush()); an index below next is either
 * taken or zero and on the free stack, which has room for every index of
 * every chunk.
 */
struct usdt__chunks {
	char name[16]; /* the outer map's, for messages */
	int fd;	       /* the outer map, dup()ed */
	uint32_t value_sz, stride, per;
	uint32_t max_chunks; /* the outer map's entries */
	uint32_t cap;	     /* most indexes handed out at once */
	uint32_t cnt;	     /* chunks created */
	uint32_t outer_cnt;  /* chunks in the outer map */
	size_t chunk_sz;     /* bytes mapped per chunk */
	void **mem;	     /* [room]; NULL: not opened */
	int *fds;	     /* [room]: held until the chunk is in the outer
				 * map, and after it for chunks not mapped;
				 * else -1 */
	uint32_t room;	     /* entries of mem[] and fds[] */
	bool mapped;
	uint32_t outer_id; /* kernel IDs: the outer map's, */
	uint32_t slot0_id; /* chunk 0's (see usdt__claim_free()) */
	/* The head (chunks not mapped only): indexes below head_cnt are
	 * its entries, held by head_fd (-1: none); entry head_cnt holds
	 * token, this store's claim on it (see chunks.c). */
	int head_fd;
	uint32_t head_cnt, head_id;
	uint64_t token;
	/* Writes to chunks not mapped, until usdt__chunks_flush(). */
	uint32_t *pend_idx;
	void *pend_val; /* stride bytes each */
	uint32_t pend_cnt, pend_cap;
	uint32_t next;	/* indexes below were handed out once */
	uint32_t *free; /* stack; reused first */
	uint32_t free_cnt;
	uint32_t live_cnt;
};

/* An outer map (an array of maps): the object's, or one found by its fd;
 * with the spec map, the head before it (usdt_spec.h). */
struct usdt__outer {
	int fd; /* borrowed */
	uint32_t max_entries;
	const char *name;
	int head_fd;	   /* borrowed; head_cnt 0: no head */
	uint32_t head_cnt; /* the head's entries less the token's */
};

static inline struct usdt__outer usdt__outer_of(const struct bpf_map *map)
{
	return (struct usdt__outer){ .fd = bpf_map__fd(map),
				     .max_entries = bpf_map__max_entries(map),
				     .name = bpf_map__name(map) };
}

/* The size of each chunk (per) and of its values in the BTF definition of
 * the array of maps named map; -ENOENT if it is not one. */
int usdt__inner_def(const struct btf *btf, const char *map, uint32_t *per,
		    uint32_t *value_sz);
/* Open outer's chunks (none created yet) and claim its head, if it has
 * one: -EBUSY if another store holds it; cap 0: as many as the head and
 * the outer map hold. */
int usdt__chunks_open(struct usdt__chunks *c, const struct usdt__outer *outer,
		      uint32_t value_sz, uint32_t per, uint32_t cap,
		      bool mapped);
/* The largest value of chunks not mapped. */
#define USDT__CHUNK_VALUE_MAX 256
/* Write or read index i's value: in place, or through the chunk's fd (0
 * or -errno). Such writes wait for usdt__chunks_flush() (a read writes
 * them first, and leaves the chunks' outer entries to the flush): no
 * uprobe may read the value before. */
int usdt__chunks_write(struct usdt__chunks *c, uint32_t i, const void *val);
int usdt__chunks_read(struct usdt__chunks *c, uint32_t i, void *val);
/* The chunks not in the outer map yet (one batch), then the writes kept
 * (one batch per chunk). 0, or the first error. */
int usdt__chunks_flush(struct usdt__chunks *c);
/* Only the writes kept (their chunks' outer entries wait for
 * usdt__chunks_flush()). */
int usdt__chunks_flush_writes(struct usdt__chunks *c);
/* Take an index, creating a chunk for it if needed; its value is zero.
 * -E2BIG past the cap, -EBUSY if the outer map already holds the chunk
 * (another manager's), or the error of creating it. */
int usdt__chunks_take(struct usdt__chunks *c, uint32_t *i);
/* Zero index i's value and free it. */
void usdt__chunks_give(struct usdt__chunks *c, uint32_t i);
/* Index i's value in a mapped chunk. */
void *usdt__chunks_at(const struct usdt__chunks *c, uint32_t i);
/*
 * Room for n more indexes without a new chunk, where there is not already:
 * at least twice the chunks there are, up to the cap and at most max_new
 * new chunks. Best effort: a chunk that cannot be made ends it, and
 * usdt__chunks_take() says so if it needs one. The new chunks go into
 * the outer map at the next usdt__chunks_flush().
 */
void usdt__chunks_reserve(struct usdt__chunks *c, uint64_t n, uint32_t max_new);
/* How many more indexes can be taken without a new chunk. */
uint64_t usdt__chunks_room_left(const struct usdt__chunks *c);
/* Unmap and free. The chunks stay in the outer map (see chunks.c); if
 * reusable (no link reads them any more), the next store may replace
 * them (usdt__claim_free()). */
void usdt__chunks_close(struct usdt__chunks *c, bool reusable);

/*
 * Released claims, this process's record. A store marks what it writes
 * as its own with a token: the inner map it puts in entry 0 of an outer
 * map (an IP map, a spec map without a head, storage), or a number it
 * writes in the token entry of a head. A store that closes without taking
 * its maps out (each delete from an outer map would wait for an RCU grace
 * period) says here that token of the map of kernel ID map_id is no one's
 * any more; usdt__claim_is_free() answers the next store of the object,
 * which finds that token there and takes the place. The last 64 are kept
 * (kernel IDs are not reused soon); a store of another process finds the
 * place taken (EBUSY), as it would a live store's.
 */
void usdt__claim_free(uint32_t map_id, uint64_t token);
bool usdt__claim_is_free(uint32_t map_id, uint64_t token);
/* The kernel ID of the BPF object fd is, or 0. */
uint32_t usdt__obj_id(int fd);

#endif
