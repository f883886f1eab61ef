// SPDX-License-Identifier: BSD-2-Clause
/*
 * The spec-ID allocator against a fake map: libbpf's map calls are
 * wrapped (-Wl,--wrap) so that the "map" is an array here, and a write can
 * be made to fail. No kernel needed.
 */
#include "test_util.h"
#include "store/store.h"
#include "reader/args.h"

#include <unistd.h>

#include <sys/mman.h>
#include <bpf/bpf.h>

/* The outer array: FAKE_CHUNKS chunks of USDT_SPEC_CHUNK specs; each
 * chunk a memfd, which the manager writes and reads through
 * bpf_map_update_elem() and bpf_map_lookup_elem() of its descriptor, as it
 * would the kernel's array; any other descriptor is the outer map. */
#define FAKE_CHUNKS 3
#define FAKE_MAX (FAKE_CHUNKS * USDT_SPEC_CHUNK)

static int chunk_fd[FAKE_CHUNKS];	/* our copy of each chunk, or -1 */
static int fail_creates;		/* fail the next N map creations */
static int fail_inserts;		/* and outer-map updates */
static int creates;
static int made[16], made_cnt;		/* the chunks' memfds */

static bool is_chunk(int fd)
{
	int i;

	for (i = 0; i < made_cnt; i++)
		if (made[i] == fd)
			return true;
	return false;
}

int __wrap_bpf_map_create(enum bpf_map_type type, const char *name,
			  __u32 key_sz, __u32 value_sz, __u32 max,
			  const struct bpf_map_create_opts *opts)
{
	int fd;

	if (fail_creates) {
		fail_creates--;
		errno = EPERM;
		return -EPERM;
	}
	assert_int_equal(type, BPF_MAP_TYPE_ARRAY);
	assert_int_equal(value_sz, sizeof(struct usdt_spec));
	assert_int_equal(max, USDT_SPEC_CHUNK);
	assert_int_equal(opts->map_flags, BPF_F_MMAPABLE);
	fd = memfd_create("chunk", MFD_CLOEXEC);
	assert_true(fd >= 0);
	assert_int_equal(ftruncate(fd, 65536), 0);
	creates++;
	if (made_cnt < 16)
		made[made_cnt++] = fd;
	return fd;
}

int __wrap_bpf_map_lookup_elem(int fd, const void *key, void *value)
{
	uint32_t k = *(const uint32_t *)key;

	if (is_chunk(fd)) {
		assert_true(k < USDT_SPEC_CHUNK);
		assert_int_equal(pread(fd, value, sizeof(struct usdt_spec),
				       (off_t)k * sizeof(struct usdt_spec)),
				 sizeof(struct usdt_spec));
		return 0;
	}
	assert_true(k < FAKE_CHUNKS);
	if (chunk_fd[k] < 0) {
		errno = ENOENT;
		return -ENOENT;
	}
	*(uint32_t *)value = 100 + k;
	return 0;
}

int __wrap_bpf_map_update_elem(int fd, const void *key, const void *value,
			       __u64 flags)
{
	uint32_t k = *(const uint32_t *)key;

	if (is_chunk(fd)) {
		assert_true(k < USDT_SPEC_CHUNK);
		assert_int_equal(pwrite(fd, value, sizeof(struct usdt_spec),
					(off_t)k * sizeof(struct usdt_spec)),
				 sizeof(struct usdt_spec));
		return 0;
	}
	if (fail_inserts) {
		fail_inserts--;
		errno = EIO;
		return -EIO;
	}
	assert_true(fd > STDERR_FILENO);
	assert_true(k < FAKE_CHUNKS);
	/* An array of maps: the new entry replaces what was there. */
	if (chunk_fd[k] >= 0)
		close(chunk_fd[k]);
	chunk_fd[k] = dup(*(const int *)value);
	return 0;
}

/* No chunk is ever taken out: each delete would wait a grace period. */
int __wrap_bpf_map_delete_elem(int fd, const void *key)
{
	(void)fd;
	fail_msg("chunk %u taken out of the outer map", *(const uint32_t *)key);
	return 0;
}

/* Spec id as the BPF side would read it. */
static struct usdt_spec fake(uint32_t id)
{
	struct usdt_spec s;

	memset(&s, 0, sizeof(s));
	if (chunk_fd[id / USDT_SPEC_CHUNK] >= 0)
		assert_int_equal(pread(chunk_fd[id / USDT_SPEC_CHUNK], &s,
				       sizeof(s),
				       (off_t)(id % USDT_SPEC_CHUNK) * sizeof(s)),
				 sizeof(s));
	return s;
}

static int chunks(void)
{
	int k, n = 0;

	for (k = 0; k < FAKE_CHUNKS; k++)
		n += chunk_fd[k] >= 0;
	return n;
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
	struct usdt__store *man = usdt__store_new();
	int k;

	assert_non_null(man);
	/* The outer map: a real descriptor, which the store dup()s. */
	man->specs_outer = (struct usdt__outer){ .fd = STDERR_FILENO,
						 .max_entries = FAKE_CHUNKS,
						 .name = "usdt__specs" };
	for (k = 0; k < FAKE_CHUNKS; k++)
		chunk_fd[k] = -1;
	fail_creates = fail_inserts = 0;
	creates = made_cnt = 0;
	*state = man;
	return 0;
}

static int teardown(void **state)
{
	int k;

	/* The chunks stay in the outer map when the manager goes (no grace
	 * period), for the next manager to replace. */
	usdt__store_put(*state);	/* its only reference: released */
	for (k = 0; k < FAKE_CHUNKS; k++) {
		if (chunk_fd[k] >= 0)
			close(chunk_fd[k]);
		chunk_fd[k] = -1;
	}
	return 0;
}

static bool is_zero(const struct usdt_spec s)
{
	static const struct usdt_spec zero;

	return !memcmp(&s, &zero, sizeof(zero));
}

static void test_dedup_and_refcount(void **state)
{
	struct usdt__store *man = *state;
	struct usdt_spec a = spec_of(1), b = spec_of(2), f;

	assert_int_equal(chunks(), 0);		/* nothing before the first */
	assert_int_equal(usdt__spec_get(man, &a), 0);
	assert_int_equal(usdt__spec_get(man, &b), 1);
	assert_int_equal(usdt__spec_get(man, &a), 0);	/* shared */
	assert_int_equal(creates, 1);			/* one chunk */
	assert_int_equal(man->specs.live_cnt, 2);
	assert_int_equal(chunks(), 0);		/* in the map at the flush */
	assert_int_equal(usdt__chunks_flush(&man->specs), 0);
	assert_int_equal(chunks(), 1);
	f = fake(0);
	assert_memory_equal(&f, &a, sizeof(a));
	f = fake(1);
	assert_memory_equal(&f, &b, sizeof(b));

	/* The same content with another cookie is another spec. */
	a.usr_cookie = 9;
	assert_int_equal(usdt__spec_get(man, &a), 2);

	usdt__spec_put(man, 0);			/* a: one reference left */
	assert_int_equal(usdt__chunks_flush_writes(&man->specs), 0);
	assert_false(is_zero(fake(0)));
	usdt__spec_put(man, 0);			/* gone: freed, and zeroed */
	assert_int_equal(usdt__chunks_flush_writes(&man->specs), 0);
	assert_true(is_zero(fake(0)));	/* at the batch (a link's release) */
	assert_int_equal(man->specs.live_cnt, 2);
	/* Putting a dead or unknown ID changes nothing. */
	usdt__spec_put(man, 0);
	usdt__spec_put(man, 7);
	usdt__spec_put(man, 100000);
	usdt__spec_put(man, -1);
	assert_int_equal(man->specs.live_cnt, 2);
}

static void test_free_list_reused_first(void **state)
{
	struct usdt__store *man = *state;
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
	assert_int_equal(man->specs.next, 6);
}

/* Chunks come one at a time as IDs cross them, up to the outer map's
 * size, and go into the outer map together at the flush; every spec
 * still dedups when full. */
static void test_grows_then_e2big(void **state)
{
	struct usdt__store *man = *state;
	struct usdt_spec s;
	int i;

	for (i = 0; i < FAKE_MAX; i++) {
		s = spec_of(i);
		assert_int_equal(usdt__spec_get(man, &s), i);
		assert_int_equal(man->specs.cnt, i / USDT_SPEC_CHUNK + 1);
	}
	s = spec_of(1000);
	assert_int_equal(usdt__spec_get(man, &s), -E2BIG);
	assert_int_equal(chunks(), 0);
	assert_int_equal(usdt__chunks_flush(&man->specs), 0);
	assert_int_equal(chunks(), FAKE_CHUNKS);
	/* The hash grew with them: every spec is found again. */
	assert_true(man->bucket_cnt >= 2 * (uint32_t)FAKE_MAX - 1);
	for (i = 0; i < FAKE_MAX; i++) {
		s = spec_of(i);
		assert_int_equal(usdt__spec_get(man, &s), i);
		usdt__spec_put(man, i);
	}
	usdt__spec_put(man, 3);
	s = spec_of(1000);
	assert_int_equal(usdt__spec_get(man, &s), 3);
	assert_int_equal(man->specs.live_cnt, FAKE_MAX);
}

/* A cap the user set (max_specs) stops before the outer map is full. */
static void test_cap(void **state)
{
	struct usdt__store *man = *state;
	struct usdt_spec s;
	int i;

	man->max_specs = 70;
	for (i = 0; i < 70; i++) {
		s = spec_of(i);
		assert_int_equal(usdt__spec_get(man, &s), i);
	}
	s = spec_of(70);
	assert_int_equal(usdt__spec_get(man, &s), -E2BIG);
	assert_int_equal(usdt__chunks_flush(&man->specs), 0);
	assert_int_equal(chunks(), (70 + USDT_SPEC_CHUNK - 1) / USDT_SPEC_CHUNK);
	assert_int_equal(man->specs.live_cnt, 70);
}

/* A chunk that cannot be made takes nothing; the next try makes it. One
 * the outer map refuses at the flush stays out, and the next flush puts
 * it in. */
static void test_failed_chunk_takes_nothing(void **state)
{
	struct usdt__store *man = *state;
	struct usdt_spec a = spec_of(1), b = spec_of(2), f;

	fail_creates = 1;
	assert_int_equal(usdt__spec_get(man, &a), -EPERM);
	assert_int_equal(man->specs.live_cnt, 0);
	assert_int_equal(man->specs.next, 0);
	assert_int_equal(man->specs.cnt, 0);
	assert_int_equal(chunks(), 0);
	assert_int_equal(usdt__spec_get(man, &a), 0);
	assert_int_equal(usdt__spec_get(man, &b), 1);
	fail_inserts = 1;
	assert_int_equal(usdt__chunks_flush(&man->specs), -EIO);
	assert_int_equal(chunks(), 0);
	assert_int_equal(usdt__chunks_flush(&man->specs), 0);
	assert_int_equal(chunks(), 1);
	f = fake(1);
	assert_memory_equal(&f, &b, sizeof(b));
	/* Entry 1 left by a released manager: replaced at the flush. */
	chunk_fd[1] = dup(chunk_fd[0]);
	man->specs.next = USDT_SPEC_CHUNK;
	assert_int_equal(usdt__spec_get(man, &(struct usdt_spec){ .arg_cnt = 5 }),
			 USDT_SPEC_CHUNK);
	assert_int_equal(usdt__chunks_flush(&man->specs), 0);
	f = fake(USDT_SPEC_CHUNK);
	assert_int_equal(f.arg_cnt, 5);
	assert_int_equal(man->specs.live_cnt, 3);
}

/* A chunk 0 in the outer map is a live manager's: another one's first
 * chunk is refused, and takes nothing. */
static void test_chunk0_taken_busy(void **state)
{
	struct usdt__store *man = *state, *man2 = usdt__store_new();
	struct usdt_spec a = spec_of(1), b = spec_of(2);

	assert_non_null(man2);
	man2->specs_outer = man->specs_outer;
	assert_int_equal(usdt__spec_get(man, &a), 0);
	assert_int_equal(usdt__chunks_flush(&man->specs), 0);
	assert_int_equal(usdt__spec_get(man2, &b), -EBUSY);
	assert_int_equal(man2->specs.live_cnt, 0);
	assert_int_equal(man2->specs.cnt, 0);
	usdt__store_put(man2);
	assert_true(chunk_fd[0] >= 0);	/* man's stays */
}

static void test_many_cycles_stay_compact(void **state)
{
	struct usdt__store *man = *state;
	int round, i, id;

	for (round = 0; round < 100; round++) {
		for (i = 0; i < USDT_SPEC_CHUNK; i++) {
			struct usdt_spec s = spec_of(round * 100 + i);

			id = usdt__spec_get(man, &s);
			assert_true(id >= 0 && id < USDT_SPEC_CHUNK);
		}
		for (i = USDT_SPEC_CHUNK - 1; i >= 0; i--)
			usdt__spec_put(man, i);
		assert_int_equal(man->specs.live_cnt, 0);
		assert_int_equal(usdt__chunks_flush_writes(&man->specs), 0);
		for (i = 0; i < USDT_SPEC_CHUNK; i++)
			assert_true(is_zero(fake(i)));
	}
	assert_int_equal(man->specs.next, USDT_SPEC_CHUNK);
	assert_int_equal(creates, 1);
}

/*
 * What a link holds (usdt__store_hold(), usdt__store_drop()): each site's
 * spec ID, the cookie its uprobe carries (ID + 1), a spec shared by two
 * holders kept until both let go, and one drop giving a holder's all
 * back, zeroed in the map; a freed ID is the next one taken. A forked
 * copy of the store gives nothing back (the parent's links read it).
 */
static void test_hold_and_drop(void **state)
{
	struct usdt__store *man = *state;
	struct usdt__take t = { .provider = "p", .name = "n" };
	struct usdt_spec a = spec_of(1), b = spec_of(2), c = spec_of(3), f;
	int ids[4], other_ids[1];
	struct usdt__hold h = { .ids = ids }, o = { .ids = other_ids };
	uint64_t cookie;

	assert_int_equal(usdt__store_hold(man, &t, &h, &a, 0, &cookie), 0);
	assert_int_equal(cookie, 1);
	assert_int_equal(usdt__store_hold(man, &t, &h, &b, 0, &cookie), 0);
	assert_int_equal(cookie, 2);
	assert_int_equal(usdt__store_hold(man, &t, &h, &a, 0, &cookie), 0);
	assert_int_equal(cookie, 1);
	assert_int_equal(usdt__store_hold(man, &t, &o, &b, 0, &cookie), 0);
	assert_int_equal(cookie, 2);
	assert_int_equal(h.id_cnt, 3);
	assert_int_equal(ids[0], 0);
	assert_int_equal(ids[1], 1);
	assert_int_equal(ids[2], 0);
	assert_int_equal(usdt__store_flush(man), 0);
	f = fake(0);
	assert_memory_equal(&f, &a, sizeof(a));

	assert_int_equal(usdt__store_drop(man, &h), 0);
	assert_int_equal(h.id_cnt, 0);
	assert_int_equal(man->specs.live_cnt, 1); /* b: the other's */
	assert_true(is_zero(fake(0)));
	f = fake(1);
	assert_memory_equal(&f, &b, sizeof(b));
	assert_int_equal(usdt__store_hold(man, &t, &h, &c, 0, &cookie), 0);
	assert_int_equal(cookie, 1); /* ID 0 again */

	man->owner = getppid();
	assert_int_equal(usdt__store_drop(man, &h), 0);
	assert_int_equal(h.id_cnt, 0);
	assert_int_equal(man->specs.live_cnt, 2);
	man->owner = getpid();
	assert_int_equal(usdt__store_drop(man, &o), 0);
	assert_int_equal(man->specs.live_cnt, 1); /* c: not given back */
}

/* A site the store cannot take (out of spec IDs, -E2BIG) leaves what the
 * holder took before held, for the drop. */
static void test_hold_keeps_on_error(void **state)
{
	struct usdt__store *man = *state;
	struct usdt__take t = { .provider = "p", .name = "n" };
	struct usdt_spec a = spec_of(1), b = spec_of(2);
	int ids[2];
	struct usdt__hold h = { .ids = ids };
	uint64_t cookie = 7;

	man->max_specs = 1;
	assert_int_equal(usdt__store_hold(man, &t, &h, &a, 0, &cookie), 0);
	assert_int_equal(usdt__store_hold(man, &t, &h, &b, 0, &cookie),
			 -E2BIG);
	assert_int_equal(cookie, 0);
	assert_int_equal(h.id_cnt, 1);
	assert_int_equal(man->specs.live_cnt, 1);
	assert_int_equal(usdt__store_drop(man, &h), 0);
	assert_int_equal(man->specs.live_cnt, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_dedup_and_refcount, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_free_list_reused_first,
						setup, teardown),
		cmocka_unit_test_setup_teardown(test_grows_then_e2big, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_cap, setup, teardown),
		cmocka_unit_test_setup_teardown(test_chunk0_taken_busy, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_failed_chunk_takes_nothing,
						setup, teardown),
		cmocka_unit_test_setup_teardown(test_many_cycles_stay_compact,
						setup, teardown),
		cmocka_unit_test_setup_teardown(test_hold_and_drop, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_hold_keeps_on_error, setup,
						teardown),
	};

	usdt_set_print(NULL);
	return cmocka_run_group_tests_name("specids", tests, NULL, NULL);
}
