// SPDX-License-Identifier: BSD-2-Clause
/* SipHash-2-4 with a per-process key: see hash.h for why. */
#include <pthread.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

#include "base/hash.h"

static uint64_t key[2];
static pthread_once_t key_once = PTHREAD_ONCE_INIT;

/*
 * Without getrandom() (a kernel before 3.17, or a seccomp filter), the key
 * comes from what differs between runs: weaker, but no worse than the
 * fixed hash it replaces.
 */
static void key_make(void)
{
	struct timespec ts;

	if (getrandom(key, sizeof(key), GRND_NONBLOCK) == sizeof(key))
		return;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	key[0] = (uint64_t)ts.tv_nsec * 0x9e3779b97f4a7c15ull ^
		 (uint64_t)ts.tv_sec ^ (uint64_t)(uintptr_t)&ts;
	key[1] = (uint64_t)getpid() * 0xc2b2ae3d27d4eb4full ^
		 (uint64_t)(uintptr_t)key_make;
}

static inline uint64_t rotl(uint64_t x, int b)
{
	return (x << b) | (x >> (64 - b));
}

static void sip_round(uint64_t *v)
{
	v[0] += v[1];
	v[1] = rotl(v[1], 13) ^ v[0];
	v[0] = rotl(v[0], 32);
	v[2] += v[3];
	v[3] = rotl(v[3], 16) ^ v[2];
	v[0] += v[3];
	v[3] = rotl(v[3], 21) ^ v[0];
	v[2] += v[1];
	v[1] = rotl(v[1], 17) ^ v[2];
	v[2] = rotl(v[2], 32);
}

static void sip_word(struct usdt__hash *h, uint64_t m)
{
	h->v[3] ^= m;
	sip_round(h->v);
	sip_round(h->v);
	h->v[0] ^= m;
}

void usdt__hash_init_key(struct usdt__hash *h, uint64_t k0, uint64_t k1)
{
	h->v[0] = k0 ^ 0x736f6d6570736575ull;
	h->v[1] = k1 ^ 0x646f72616e646f6dull;
	h->v[2] = k0 ^ 0x6c7967656e657261ull;
	h->v[3] = k1 ^ 0x7465646279746573ull;
	h->tail = 0;
	h->len = 0;
}

void usdt__hash_init(struct usdt__hash *h)
{
	pthread_once(&key_once, key_make);
	usdt__hash_init_key(h, key[0], key[1]);
}

static void add_byte(struct usdt__hash *h, unsigned char c)
{
	h->tail |= (uint64_t)c << (8 * (h->len & 7));
	if ((++h->len & 7) == 0) {
		sip_word(h, h->tail);
		h->tail = 0;
	}
}

/* Eight bytes as one little-endian word (compilers make it one load). */
static uint64_t le64(const unsigned char *s)
{
	return (uint64_t)s[0] | (uint64_t)s[1] << 8 | (uint64_t)s[2] << 16 |
	       (uint64_t)s[3] << 24 | (uint64_t)s[4] << 32 |
	       (uint64_t)s[5] << 40 | (uint64_t)s[6] << 48 |
	       (uint64_t)s[7] << 56;
}

/* Bytes are taken little-endian on every host, as the reference does:
 * a byte at a time up to a word boundary, then whole words. */
void usdt__hash_add(struct usdt__hash *h, const void *p, size_t len)
{
	const unsigned char *s = p;

	for (; len && (h->len & 7); len--)
		add_byte(h, *s++);
	for (; len >= 8; len -= 8, s += 8) {
		sip_word(h, le64(s));
		h->len += 8;
	}
	for (; len; len--)
		add_byte(h, *s++);
}

uint64_t usdt__hash_end(struct usdt__hash *h)
{
	sip_word(h, h->tail | (uint64_t)(h->len & 0xff) << 56);
	h->v[2] ^= 0xff;
	sip_round(h->v);
	sip_round(h->v);
	sip_round(h->v);
	sip_round(h->v);
	return h->v[0] ^ h->v[1] ^ h->v[2] ^ h->v[3];
}

uint32_t usdt__hash_bytes(const void *p, size_t len)
{
	struct usdt__hash h;
	uint64_t r;

	usdt__hash_init(&h);
	usdt__hash_add(&h, p, len);
	r = usdt__hash_end(&h);
	return (uint32_t)(r ^ r >> 32);
}
