// SPDX-License-Identifier: BSD-2-Clause
/*
 * BPF_USDT() reads stack operands that share a base register with one
 * user-memory read (the spec's window, usdt_spec.h): every argument keeps
 * its exact value, narrow and signed ones included, and where the window's
 * read faults each argument that reads fine alone still does.
 *
 * The probes take every argument as a memory operand (sdt.h's constraint
 * "m"), so the compiler writes them as offsets from one register on every
 * arch: %rsp on x86-64, sp on arm64, and so on.
 */
#define STAP_SDT_ARG_CONSTRAINT m
#include <string.h>
#include <sys/mman.h>
#include <sys/sdt.h>

#include "test_util.h"
#include "chunk_util.h"
#include "usdt.h"
#include "usdt_paths.skel.h"

/* Six fields in 20 bytes of one stack frame: one window. */
struct frame {
	long a;
	int b;
	short c;
	signed char d;
	unsigned char e;
	unsigned int f;
};

__attribute__((noinline)) static void fire_stack(void)
{
	volatile struct frame f = { -5000000000L, -70000, -300, -7, 200,
				    4000000000U };

	STAP_PROBE6(win, stack, f.a, f.b, f.c, f.d, f.e, f.f);
}

/* p[-1], p[0] and the int after them: one window of 20 bytes from p - 1.
 * Not instrumented: with the sanitizers the compiler puts each operand's
 * address into a register of its own, and there is no window. */
__attribute__((noinline, no_sanitize("address", "undefined"))) static void
fire_edge(volatile long *p)
{
	STAP_PROBE3(win, edge, p[-1], p[0], *(volatile int *)(p + 1));
}

static const long want_stack[6] = { -5000000000L, -70000, -300, -7, 200,
				    4000000000L };

struct fix {
	struct usdt_paths *skel;
	struct usdt_manager *man;
};

static void fix_open(struct fix *f)
{
	f->skel = usdt_paths__open();
	assert_non_null(f->skel);
	f->man = usdt_manager__new(f->skel->obj, NULL);
	assert_non_null(f->man);
	assert_int_equal(usdt_paths__load(f->skel), 0);
}

static void fix_close(struct fix *f)
{
	usdt_manager__free(f->man);
	usdt_paths__destroy(f->skel);
}

/* Attach both programs to win:name; the first spec (ID 0, the manager's
 * first) must hold a window of n arguments. */
static void attach(struct fix *f, const char *name, int n,
		   struct usdt_link **macro, struct usdt_link **calls)
{
	struct usdt_spec spec;
	int i, in = 0;

	*macro = usdt_manager__attach(f->man, f->skel->progs.read_macro, -1,
				      "/proc/self/exe", "win", name, NULL);
	assert_non_null(*macro);
	*calls = usdt_manager__attach(f->man, f->skel->progs.read_calls, -1,
				      "/proc/self/exe", "win", name, NULL);
	assert_non_null(*calls);
	assert_int_equal(spec_read(bpf_map__fd(f->skel->maps.usdt__spec_head),
				   bpf_map__fd(f->skel->maps.usdt__specs), 0,
				   &spec), 0);
	assert_int_equal(spec.win_cnt, 1);
	for (i = 0; i < spec.arg_cnt; i++)
		in += spec.arg_win[i] != 0;
	assert_int_equal(in, n);
}

static void test_stack_window(void **state)
{
	struct usdt_link *macro, *calls;
	struct fix f;
	int i;

	fix_open(&f);
	attach(&f, "stack", 6, &macro, &calls);
	fire_stack();
	assert_int_equal(f.skel->bss->macro_hits, 1);
	for (i = 0; i < 6; i++) {
		print_message("arg %d: want %ld, BPF_USDT %ld, call %ld (%d)\n",
			      i, want_stack[i], f.skel->bss->by_macro[i],
			      f.skel->bss->by_call[i], f.skel->bss->rc[i]);
		assert_int_equal(f.skel->bss->rc[i], 0);
		assert_int_equal(f.skel->bss->by_call[i], want_stack[i]);
		assert_int_equal(f.skel->bss->by_macro[i], want_stack[i]);
	}
	usdt_link__destroy(macro);
	usdt_link__destroy(calls);
	fix_close(&f);
}

/*
 * p[0] is the last word of a page whose next page cannot be read: p[-1]
 * and p[0] read fine alone, the int after them faults, and so does the
 * window that holds all three. BPF_USDT() must still give p[-1] and p[0]
 * (and 0 for the int, which bpf_usdt_arg() says is -EFAULT). The page is
 * made PROT_NONE rather than unmapped, so that no mapping the test makes
 * meanwhile (the skeleton's maps) lands in the hole.
 */
static void test_window_faults(void **state)
{
	long page = sysconf(_SC_PAGESIZE);
	struct usdt_link *macro, *calls;
	volatile long *p;
	struct fix f;
	char *m;

	m = mmap(NULL, 2 * page, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	assert_true(m != MAP_FAILED);
	assert_int_equal(mprotect(m + page, page, PROT_NONE), 0);
	p = (volatile long *)(m + page - sizeof(long));
	p[-1] = -123456789012L;
	p[0] = 0x7eadbeefcafeL;

	fix_open(&f);
	attach(&f, "edge", 3, &macro, &calls);
	fire_edge(p);
	assert_int_equal(f.skel->bss->macro_hits, 1);
	assert_int_equal(f.skel->bss->rc[0], 0);
	assert_int_equal(f.skel->bss->rc[1], 0);
	assert_int_equal(f.skel->bss->rc[2], -EFAULT);
	assert_int_equal(f.skel->bss->by_call[0], -123456789012L);
	assert_int_equal(f.skel->bss->by_call[1], 0x7eadbeefcafeL);
	assert_int_equal(f.skel->bss->by_macro[0], -123456789012L);
	assert_int_equal(f.skel->bss->by_macro[1], 0x7eadbeefcafeL);
	assert_int_equal(f.skel->bss->by_macro[2], 0);

	/* The same site with the page back: the window reads them all. */
	assert_int_equal(mprotect(m + page, page, PROT_READ | PROT_WRITE), 0);
	*(volatile int *)(p + 1) = -42;
	fire_edge(p);
	assert_int_equal(f.skel->bss->macro_hits, 2);
	assert_int_equal(f.skel->bss->by_macro[0], -123456789012L);
	assert_int_equal(f.skel->bss->by_macro[1], 0x7eadbeefcafeL);
	assert_int_equal(f.skel->bss->by_macro[2], -42);
	usdt_link__destroy(macro);
	usdt_link__destroy(calls);
	fix_close(&f);
	munmap(m, 2 * page);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_stack_window),
		cmocka_unit_test(test_window_faults),
	};

	usdt_test_require_kernel("kernel/test_window");
	usdt_set_print(NULL);
	return cmocka_run_group_tests_name("window", tests, NULL, NULL);
}
