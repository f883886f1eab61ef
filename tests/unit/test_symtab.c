// SPDX-License-Identifier: BSD-2-Clause
/* The symbol table resolution uses (src/reader/symtab.c). */
#include "test_util.h"
#include "base/internal.h"
#include "reader/symtab.h"

static void test_basic(void **state)
{
	struct usdt__symtab *st = usdt__symtab_new();
	uint64_t addr = 0, slot = 0;

	assert_non_null(st);
	assert_int_equal(usdt__symtab_add(st, "counter", 0x4010, 0), 0);
	assert_int_equal(usdt__symtab_add(st, "ext", 0, 0x3ff8), 0);
	assert_int_equal(usdt__sym_lookup(st, "counter", 7, &addr, &slot), 0);
	assert_int_equal(addr, 0x4010);
	assert_int_equal(usdt__sym_lookup(st, "ext", 3, &addr, &slot), 1);
	assert_int_equal(slot, 0x3ff8);
	/* Lookups take a span, not a C string. */
	assert_int_equal(usdt__sym_lookup(st, "counter(%rip)", 7, &addr,
					  &slot), 0);
	assert_int_equal(usdt__sym_lookup(st, "count", 5, &addr, &slot),
			 -ENOENT);
	assert_int_equal(usdt__sym_lookup(st, "counterx", 8, &addr, &slot),
			 -ENOENT);
	assert_int_equal(usdt__sym_lookup(st, "", 0, &addr, &slot), -ENOENT);
	assert_int_equal(usdt__sym_lookup(NULL, "counter", 7, &addr, &slot),
			 -ENOENT);
	usdt__symtab_free(st);
	usdt__symtab_free(NULL);
}

static void test_duplicates(void **state)
{
	struct usdt__symtab *st = usdt__symtab_new();
	uint64_t addr = 0, slot = 0;

	assert_non_null(st);
	/* .symtab and .dynsym both list it: one symbol. */
	assert_int_equal(usdt__symtab_add(st, "same", 0x10, 0), 0);
	assert_int_equal(usdt__symtab_add(st, "same", 0x10, 0), 0);
	assert_int_equal(usdt__sym_lookup(st, "same", 4, &addr, &slot), 0);
	assert_int_equal(addr, 0x10);
	/* A definition wins over a GOT slot, in either order. */
	assert_int_equal(usdt__symtab_add(st, "g1", 0, 0x3000), 0);
	assert_int_equal(usdt__symtab_add(st, "g1", 0x20, 0), 0);
	assert_int_equal(usdt__symtab_add(st, "g2", 0x28, 0), 0);
	assert_int_equal(usdt__symtab_add(st, "g2", 0, 0x3008), 0);
	assert_int_equal(usdt__sym_lookup(st, "g1", 2, &addr, &slot), 0);
	assert_int_equal(addr, 0x20);
	assert_int_equal(usdt__sym_lookup(st, "g2", 2, &addr, &slot), 0);
	assert_int_equal(addr, 0x28);
	/* Two statics of one name: no guessing. */
	assert_int_equal(usdt__symtab_add(st, "dup", 0x30, 0), 0);
	assert_int_equal(usdt__symtab_add(st, "dup", 0x38, 0), 0);
	assert_int_equal(usdt__sym_lookup(st, "dup", 3, &addr, &slot),
			 -ENOTUNIQ);
	assert_int_equal(usdt__symtab_add(st, "dup", 0x30, 0), 0);
	assert_int_equal(usdt__sym_lookup(st, "dup", 3, &addr, &slot),
			 -ENOTUNIQ);
	usdt__symtab_free(st);
}

/* Enough symbols to grow the table several times; all still found. */
static void test_many(void **state)
{
	struct usdt__symtab *st = usdt__symtab_new();
	uint64_t addr, slot;
	char name[32];
	int i;

	assert_non_null(st);
	for (i = 0; i < 20000; i++) {
		snprintf(name, sizeof(name), "sym.%d", i);
		assert_int_equal(usdt__symtab_add(st, name, 0x1000 + i * 8,
						  i % 7 ? 0 : 0x9000 + i), 0);
	}
	for (i = 0; i < 20000; i++) {
		snprintf(name, sizeof(name), "sym.%d", i);
		addr = slot = 0;
		if (i % 7) {
			assert_int_equal(usdt__sym_lookup(st, name, strlen(name),
							  &addr, &slot), 0);
			assert_int_equal(addr, 0x1000 + i * 8);
		} else {
			assert_int_equal(usdt__sym_lookup(st, name, strlen(name),
							  &addr, &slot), 1);
			assert_int_equal(slot, 0x9000 + i);
		}
	}
	assert_int_equal(usdt__sym_lookup(st, "sym.20000", 9, &addr, &slot),
			 -ENOENT);
	usdt__symtab_free(st);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_basic),
		cmocka_unit_test(test_duplicates),
		cmocka_unit_test(test_many),
	};

	return cmocka_run_group_tests_name("symtab", tests, NULL, NULL);
}
