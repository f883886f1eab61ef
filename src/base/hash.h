/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The one hash of libusdt's tables: SipHash-2-4 (Aumasson and Bernstein),
 * keyed once per process from getrandom().
 *
 * Every table it serves is filled from a file some other user may have
 * written: symbol names, probe names, argument specs. With a fixed, public
 * hash (FNV-1a before), such a file can hold names that all land in one
 * bucket, and the open-addressing tables then cost a probe of every entry
 * per insert: quadratic work, minutes for a 16 MiB symbol table. With a
 * secret key, which entries collide is not something a file can choose.
 *
 * Hashes differ from one process to the next: nothing may depend on their
 * values or on the order they give.
 */
#ifndef USDT_HASH_H
#define USDT_HASH_H

#include <stddef.h>
#include <stdint.h>

struct usdt__hash {
	uint64_t v[4];
	uint64_t tail; /* bytes not yet in a whole word */
	size_t len;    /* bytes added so far */
};

/* Start a hash with the process's key. */
void usdt__hash_init(struct usdt__hash *h);
/* Start a hash with a given key (tests: the reference vectors). */
void usdt__hash_init_key(struct usdt__hash *h, uint64_t k0, uint64_t k1);
void usdt__hash_add(struct usdt__hash *h, const void *p, size_t len);
uint64_t usdt__hash_end(struct usdt__hash *h);

/* The hash of one run of bytes, with the process's key. */
uint32_t usdt__hash_bytes(const void *p, size_t len);

#endif
