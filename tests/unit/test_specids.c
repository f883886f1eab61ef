// SPDX-License-Identifier: BSD-2-Clause
/*
 * The spec-ID allocator against a fake map: libbpf's map calls are
 * wrapped (-Wl,--wrap) so that the "map" is an array here, and a write can
 * be made to fail. No kernel needed.
 */
#include "test_util.h"
#include "manager.h"

#include <unistd.h>

#define FAKE_MAX 8

static struct usdt_spec fake[FAKE_MAX];
static int fail_writes;		/* fail the next N writes */
static int writes;

/* The manager dup()s the maps' descriptors: hand it a real one. */
int __wrap_bpf_map__fd(const struct bpf_map *map)
{
	return STDERR_FILENO;
}

__u32 __wrap_bpf_map__max_entries(const struct bpf_map *map)
{
	return FAKE_MAX;
}

int __wrap_bpf_map_update_elem(int fd, const void *key, const void *value,
			       __u64 flags)
{
	uint32_t id = *(const uint32_t *)key;

	writes++;
	if (fail_writes) {
		fail_writes--;
		errno = EIO;
		return -1;
	}
	assert_true(fd > STDERR_FILENO);
	assert_true(id < FAKE_MAX);
	memcpy(&fake[id], value, sizeof(fake[id]));
	return 0;
}

static struct usdt_spec spec_of(long v)
{
	struct usdt_spec s;

	memset(&s, 0, sizeof(s));
	s.arg_cnt = 1;
	s.args[0].kind = USDT_SPEC_VALUE;
	s.args[0].size = 8;
	s.args[0].val_off = (__u64)v;
	s.args[0].base_off = USDT_REG_NONE;
	s.args[0].idx_off = USDT_REG_NONE;
	return s;
}

static int setup(void **state)
{
	struct usdt_manager *man = calloc(1, sizeof(*man));

	/* Never dereferenced: the wrapped calls ignore it. */
	man->specs_map = (struct bpf_map *)man;
	man->specs_fd = man->ip_fd = -1;
	memset(fake, 0, sizeof(fake));
	fail_writes = 0;
	writes = 0;
	*state = man;
	return 0;
}

static int teardown(void **state)
{
	usdt__manager_release(*state);
	return 0;
}

static bool is_zero(const struct usdt_spec *s)
{
	static const struct usdt_spec zero;

	return !memcmp(s, &zero, sizeof(zero));
}

static void test_dedup_and_refcount(void **state)
{
	struct usdt_manager *man = *state;
	struct usdt_spec a = spec_of(1), b = spec_of(2);

	assert_int_equal(usdt__spec_get(man, &a), 0);
	assert_int_equal(usdt__spec_get(man, &b), 1);
	assert_int_equal(usdt__spec_get(man, &a), 0);	/* shared */
	assert_int_equal(writes, 2);			/* no write for a hit */
	assert_int_equal(man->live_cnt, 2);
	assert_memory_equal(&fake[0], &a, sizeof(a));
	assert_memory_equal(&fake[1], &b, sizeof(b));

	/* The same content with another cookie is another spec. */
	a.usr_cookie = 9;
	assert_int_equal(usdt__spec_get(man, &a), 2);

	usdt__spec_put(man, 0);			/* a: one reference left */
	assert_false(is_zero(&fake[0]));
	usdt__spec_put(man, 0);			/* gone: zeroed, freed */
	assert_true(is_zero(&fake[0]));
	assert_int_equal(man->live_cnt, 2);
	/* Putting a dead or unknown ID changes nothing. */
	usdt__spec_put(man, 0);
	usdt__spec_put(man, 7);
	usdt__spec_put(man, -1);
	assert_int_equal(man->live_cnt, 2);
}

static void test_free_list_reused_first(void **state)
{
	struct usdt_manager *man = *state;
	struct usdt_spec s;
	int i;

	for (i = 0; i < 5; i++) {
		s = spec_of(100 + i);
		assert_int_equal(usdt__spec_get(man, &s), i);
	}
	usdt__spec_put(man, 3);
	usdt__spec_put(man, 1);
	/* Freed IDs first, most recently freed on top, before ID 5. */
	s = spec_of(200);
	assert_int_equal(usdt__spec_get(man, &s), 1);
	s = spec_of(201);
	assert_int_equal(usdt__spec_get(man, &s), 3);
	s = spec_of(202);
	assert_int_equal(usdt__spec_get(man, &s), 5);
	assert_int_equal(man->next_id, 6);
}

static void test_full_is_e2big(void **state)
{
	struct usdt_manager *man = *state;
	struct usdt_spec s;
	int i;

	for (i = 0; i < FAKE_MAX; i++) {
		s = spec_of(i);
		assert_int_equal(usdt__spec_get(man, &s), i);
	}
	s = spec_of(1000);
	assert_int_equal(usdt__spec_get(man, &s), -E2BIG);
	/* An existing spec still dedups when full. */
	s = spec_of(3);
	assert_int_equal(usdt__spec_get(man, &s), 3);
	usdt__spec_put(man, 3);
	usdt__spec_put(man, 3);
	s = spec_of(1000);
	assert_int_equal(usdt__spec_get(man, &s), 3);
	assert_int_equal(man->live_cnt, FAKE_MAX);
}

static void test_failed_write_takes_nothing(void **state)
{
	struct usdt_manager *man = *state;
	struct usdt_spec a = spec_of(1), b = spec_of(2);

	fail_writes = 1;
	assert_int_equal(usdt__spec_get(man, &a), -EIO);
	assert_int_equal(man->live_cnt, 0);
	assert_int_equal(man->next_id, 0);
	assert_int_equal(usdt__spec_get(man, &a), 0);
	assert_int_equal(usdt__spec_get(man, &b), 1);
	usdt__spec_put(man, 0);
	/* A failed write of a reused ID leaves it on the free list. */
	fail_writes = 1;
	assert_int_equal(usdt__spec_get(man, &b), 1);	/* dedup, no write */
	assert_int_equal(usdt__spec_get(man, &a), -EIO);
	assert_int_equal(man->free_cnt, 1);
	assert_int_equal(usdt__spec_get(man, &a), 0);
	assert_int_equal(man->free_cnt, 0);
	/* A failed zeroing still frees the ID. */
	fail_writes = 1;
	usdt__spec_put(man, 0);
	assert_int_equal(man->free_cnt, 1);
	assert_int_equal(man->live_cnt, 1);
}

static void test_many_cycles_stay_compact(void **state)
{
	struct usdt_manager *man = *state;
	int round, i, id;

	for (round = 0; round < 100; round++) {
		for (i = 0; i < FAKE_MAX; i++) {
			struct usdt_spec s = spec_of(round * 10 + i);

			id = usdt__spec_get(man, &s);
			assert_true(id >= 0 && id < FAKE_MAX);
		}
		for (i = FAKE_MAX - 1; i >= 0; i--)
			usdt__spec_put(man, i);
		assert_int_equal(man->live_cnt, 0);
		for (i = 0; i < FAKE_MAX; i++)
			assert_true(is_zero(&fake[i]));
	}
	assert_int_equal(man->next_id, FAKE_MAX);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_dedup_and_refcount, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_free_list_reused_first,
						setup, teardown),
		cmocka_unit_test_setup_teardown(test_full_is_e2big, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_failed_write_takes_nothing,
						setup, teardown),
		cmocka_unit_test_setup_teardown(test_many_cycles_stay_compact,
						setup, teardown),
	};

	usdt_set_print(NULL);
	return cmocka_run_group_tests_name("specids", tests, NULL, NULL);
}
