// SPDX-License-Identifier: BSD-2-Clause
/*
 * The tables' hash (src/base/hash.c): SipHash-2-4 against the reference
 * vectors, and names chosen to collide under the FNV-1a hash it replaced
 * spread out under it.
 */
#include <stdio.h>
#include <string.h>

#include "test_util.h"
#include "base/hash.h"

static uint64_t ref_hash(size_t len)
{
	unsigned char msg[64];
	struct usdt__hash h;
	size_t i;

	for (i = 0; i < len; i++)
		msg[i] = (unsigned char)i;
	/* The reference key: bytes 00 01 .. 0f. */
	usdt__hash_init_key(&h, 0x0706050403020100ull, 0x0f0e0d0c0b0a0908ull);
	usdt__hash_add(&h, msg, len);
	return usdt__hash_end(&h);
}

static void test_reference_vectors(void **state)
{
	(void)state;
	/* The paper's worked example: 15 bytes 00 .. 0e. */
	assert_true(ref_hash(15) == 0xa129ca6149be45e5ull);
	/* The first entry of the reference implementation's vectors. */
	assert_true(ref_hash(0) == 0x726fdb47dd0e0e31ull);
}

/* Added in pieces or at once, the same bytes hash the same. */
static void test_pieces(void **state)
{
	const char *s = "provider\0a_probe_name_longer_than_a_word";
	struct usdt__hash a, b;
	size_t len = 40, cut;
	uint64_t whole;

	(void)state;
	usdt__hash_init(&a);
	usdt__hash_add(&a, s, len);
	whole = usdt__hash_end(&a);
	for (cut = 0; cut <= len; cut++) {
		usdt__hash_init(&b);
		usdt__hash_add(&b, s, cut);
		usdt__hash_add(&b, s + cut, len - cut);
		assert_true(usdt__hash_end(&b) == whole);
	}
	assert_int_equal(usdt__hash_bytes(s, len), (uint32_t)(whole ^ whole >> 32));
}

static uint32_t fnv1a(const char *s, size_t len)
{
	uint32_t h = 2166136261u;
	size_t i;

	for (i = 0; i < len; i++)
		h = (h ^ (unsigned char)s[i]) * 16777619u;
	return h;
}

/*
 * 2,000 names that FNV-1a puts into one bucket of a 4,096-bucket table
 * (what a file could hold to make every insert probe every entry): under
 * the keyed hash they take about 1,580 distinct buckets, as random ones do.
 */
#define NAMES 2000
#define BITS 12

static void test_fnv_collisions_spread(void **state)
{
	static unsigned char seen[1u << BITS];
	uint32_t mask = (1u << BITS) - 1, want = 0, b;
	unsigned long n = 0;
	int found = 0, distinct = 0;
	char name[32];
	size_t len;

	(void)state;
	memset(seen, 0, sizeof(seen));
	while (found < NAMES) {
		len = (size_t)snprintf(name, sizeof(name), "sym_%lu", n++);
		if ((fnv1a(name, len) & mask) != want)
			continue;
		found++;
		b = usdt__hash_bytes(name, len) & mask;

		distinct += !seen[b];
		seen[b] = 1;
	}
	printf("# %d names in one FNV-1a bucket: %d buckets under the keyed hash\n",
	       NAMES, distinct);
	assert_true(distinct > 1200);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_reference_vectors),
		cmocka_unit_test(test_pieces),
		cmocka_unit_test(test_fnv_collisions_spread),
	};

	return cmocka_run_group_tests_name("hash", tests, NULL, NULL);
}
