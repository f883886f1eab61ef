// SPDX-License-Identifier: BSD-2-Clause
/*
 * The attach engine against the real kernel: probes live in this program
 * (and in libusdttest.so), BPF records what bpf_usdt_arg() reads, and the
 * test compares it with what the program passed.
 */
#include <dirent.h>
#include <elf.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/sdt.h>
#include <sys/wait.h>

#include <bpf/bpf.h>

#include "test_util.h"
#include "chunk_util.h"
#include "attach/attach.h"
#include "reader/arch_ops.h"
#include "reader/file.h"
#include "reader/arch/arch.h"
#include "skel_fixture.h"
#include "usdt_test_noarch.skel.h"

unsigned short sema_value(void);
int fire_sema(long v);
unsigned short bss_sema_value(void);
unsigned short data_sema_value(void);
int fire_bss_sema(long v);
int fire_data_sema(long v);
int fire_far_sema(long v);
void dup_fire(void);
void lib_fire(int x);
extern volatile long lib_visible;

/* ---------------------------------------------------------------------- */
/* Probe sites                                                            */

struct rec {
	long pad;
	int field;
};

volatile int g_int = -123456;
volatile long g_arr[8] = { 10, 11, 12, 13, 14, 15, 16, 17 };

__attribute__((noinline)) void fire_mix(signed char a, unsigned char b,
					short c, unsigned short d, int e,
					unsigned int f, long g,
					unsigned long h, struct rec *r, int idx)
{
	STAP_PROBE12(test, mix, a, b, c, d, e, f, g, h, g_int, r->field,
		     g_arr[idx], 77);
}

static const long mix_want[12] = {
	-5, 200, -300, 60000, -70000, 3000000000L, -5000000000000L,
	(long)0xfedcba9876543210UL, -123456, 4242, 13, 77,
};
static const int mix_size[12] = { 1, 1, 2, 2, 4, 4, 8, 8, 4, 4, 8, 4 };

static void call_mix(void)
{
	struct rec r = { .field = 4242 };

	fire_mix(-5, 200, -300, 60000, -70000, 3000000000U, -5000000000000L,
		 0xfedcba9876543210UL, &r, 3);
}

#ifdef __x86_64__
/* A "nop; nop5" site, as some <sys/sdt.h> emit: the uprobe goes on the
 * nop5 only when asked, and a %rip-relative argument must read right
 * either way. Written in asm so that no compiler puts anything between
 * the two. */
void fire_nop5(long v);
__asm__(".pushsection .text\n"
	".globl fire_nop5\n"
	".type fire_nop5, @function\n"
	"fire_nop5:\n"
	STAP_PROBE_ASM(test, nop5, -8@%rdi -4@g_int(%rip))
	".byte 0x0f, 0x1f, 0x44, 0x00, 0x00\n"
	"ret\n"
	".size fire_nop5, .-fire_nop5\n"
	".popsection\n");

/*
 * A site whose index registers carry garbage above bit 31, as an arm64
 * "[x3, w0, sxtw]" index may: x86 has no such operand, so the test sets
 * the spec's extension flags by hand and checks what the BPF side reads.
 */
void idx32_site(long *arr);
__asm__(".pushsection .text\n"
	".globl idx32_site\n"
	".type idx32_site, @function\n"
	"idx32_site:\n"
	"movabs $0xdeadbeef00000002, %rcx\n"
	"movabs $0x12345678ffffffff, %rdx\n"
	STAP_PROBE_ASM(test, idx32, 8@(%rdi,%rcx,8) 8@(%rdi,%rdx,8) -4@%edx)
	"ret\n"
	".size idx32_site, .-idx32_site\n"
	".popsection\n");

/*
 * Size-less operands, as assembler probes write them (systemtap's sdt_asm
 * test): each register holds a known value under garbage in its upper
 * bits, and must be read at its name's width, unsigned. %rbp is the
 * caller's: saved around the site.
 */
void bare_site(void);
__asm__(".pushsection .text\n"
	".globl bare_site\n"
	".type bare_site, @function\n"
	"bare_site:\n"
	"push %rbp\n"
	"movabs $0x1122334455667788, %rax\n"
	"movabs $0xdeadbeefcafe00f1, %rsi\n"
	"movabs $0xfedcba9887654321, %r8\n"
	"movabs $0x5555aaaa5555a1b2, %rbp\n"
	STAP_PROBE_ASM(test, bare, %ah %eax %ax %al %sil %r8w %r8d %bp)
	"pop %rbp\n"
	"ret\n"
	".size bare_site, .-bare_site\n"
	".popsection\n");

/*
 * Arguments wider than a long at p: a 24-byte aggregate, a 16-byte
 * integer, then 8 bytes after them.
 */
void wide_site(const long *p);
__asm__(".pushsection .text\n"
	".globl wide_site\n"
	".type wide_site, @function\n"
	"wide_site:\n"
	STAP_PROBE_ASM(test, wide, 24@(%rdi) -16@(%rdi) 8@16(%rdi))
	"ret\n"
	".size wide_site, .-wide_site\n"
	".popsection\n");
#elif defined(__aarch64__)
/* The same site as arm64 writes it: 32-bit indexes, extended. The
 * operands have commas, so the note's text is given to STAP_PROBE_ASM as
 * assembler (its two-argument form). */
void idx32_site(long *arr);
__asm__(".pushsection .text\n"
	".globl idx32_site\n"
	".type idx32_site, %function\n"
	"idx32_site:\n"
	"movz x1, #2\n"
	"movk x1, #0xdead, lsl #48\n"
	"mov x2, #-1\n"
	"movk x2, #0x1234, lsl #48\n"
	STAP_PROBE_ASM(test, idx32, ".ascii \"8@[x0, w1, uxtw 3] "
		       "8@[x0, w2, sxtw 3] -4@w2\"\n", 0)
	"ret\n"
	".size idx32_site, .-idx32_site\n"
	".popsection\n");
#endif

__attribute__((noinline)) void fire_zero(void)
{
	STAP_PROBE(test, zero);
}

#define R10(x, b) x(b##0) x(b##1) x(b##2) x(b##3) x(b##4) x(b##5) x(b##6) \
	x(b##7) x(b##8) x(b##9)
#define MANY_SITE(n) STAP_PROBE1(test, many, n);
#define MANY300_SITE(n) STAP_PROBE1(test, many300, n);

/* 100 sites, each with its own constant: 100 distinct specs. */
__attribute__((noinline)) void fire_many(void)
{
	R10(MANY_SITE, ) R10(MANY_SITE, 1) R10(MANY_SITE, 2) R10(MANY_SITE, 3)
	R10(MANY_SITE, 4) R10(MANY_SITE, 5) R10(MANY_SITE, 6) R10(MANY_SITE, 7)
	R10(MANY_SITE, 8) R10(MANY_SITE, 9)
}

/* 300 distinct specs: more than the default 256 spec IDs. */
__attribute__((noinline)) void fire_many300(void)
{
	R10(MANY300_SITE, ) R10(MANY300_SITE, 1) R10(MANY300_SITE, 2)
	R10(MANY300_SITE, 3) R10(MANY300_SITE, 4) R10(MANY300_SITE, 5)
	R10(MANY300_SITE, 6) R10(MANY300_SITE, 7) R10(MANY300_SITE, 8)
	R10(MANY300_SITE, 9) R10(MANY300_SITE, 10) R10(MANY300_SITE, 11)
	R10(MANY300_SITE, 12) R10(MANY300_SITE, 13) R10(MANY300_SITE, 14)
	R10(MANY300_SITE, 15) R10(MANY300_SITE, 16) R10(MANY300_SITE, 17)
	R10(MANY300_SITE, 18) R10(MANY300_SITE, 19) R10(MANY300_SITE, 20)
	R10(MANY300_SITE, 21) R10(MANY300_SITE, 22) R10(MANY300_SITE, 23)
	R10(MANY300_SITE, 24) R10(MANY300_SITE, 25) R10(MANY300_SITE, 26)
	R10(MANY300_SITE, 27) R10(MANY300_SITE, 28) R10(MANY300_SITE, 29)
}

/* 400 sites of one inlined probe with the same operands: one spec. */
static __attribute__((always_inline)) inline void shared_site(void)
{
	STAP_PROBE1(test, shared, 7);
}
#define S10 shared_site(); shared_site(); shared_site(); shared_site(); \
	shared_site(); shared_site(); shared_site(); shared_site(); \
	shared_site(); shared_site();
#define S100 S10 S10 S10 S10 S10 S10 S10 S10 S10 S10
__attribute__((noinline)) void fire_shared(void)
{
	S100 S100 S100 S100
}

/*
 * What a test holds beyond the group's fixture: links, managers, skeletons,
 * files, children. A failed assertion ends a test at once; its teardown,
 * release_all(), then gives back whatever the test still held, so that no
 * uprobe, spec ID or fd outlives it and one failure stays one.
 */
enum held_kind {
	HELD_LINK, HELD_BPF_LINK, HELD_MAN, HELD_SKEL, HELD_NOARCH_SKEL,
	HELD_FILE, HELD_CHILD,
};

static struct {
	enum held_kind kind;
	void *p;
} held[16];
static int held_cnt;

static void *hold(enum held_kind kind, void *p)
{
	if (p) {
		assert_true(held_cnt < (int)(sizeof(held) / sizeof(held[0])));
		held[held_cnt].kind = kind;
		held[held_cnt++].p = p;
	}
	return p;
}

static int give_back(enum held_kind kind, void *p)
{
	switch (kind) {
	case HELD_LINK:
		return usdt_link__destroy(p);
	case HELD_BPF_LINK:
		return bpf_link__destroy(p);
	case HELD_MAN:
		usdt_manager__free(p);
		break;
	case HELD_SKEL:
		usdt_test__destroy(p);
		break;
	case HELD_NOARCH_SKEL:
		usdt_test_noarch__destroy(p);
		break;
	case HELD_FILE:
		usdt_file__close(p);
		break;
	case HELD_CHILD:
		kill((pid_t)(intptr_t)p, SIGKILL);
		waitpid((pid_t)(intptr_t)p, NULL, 0);
		break;
	}
	return 0;
}

static int held_index(void *p)
{
	int i;

	for (i = held_cnt - 1; i >= 0; i--)
		if (held[i].p == p)
			return i;
	fail_msg("%p is not held", p);
	return -1;
}

/* p is no longer the teardown's to give back. */
static void forget(void *p)
{
	int i = held_index(p);

	memmove(&held[i], &held[i + 1], (size_t)(held_cnt - i - 1) *
		sizeof(held[0]));
	held_cnt--;
}

/* Give p back now (a link: usdt_link__destroy()'s result). */
static int release(void *p)
{
	enum held_kind kind = held[held_index(p)].kind;

	forget(p);
	return give_back(kind, p);
}

/* Each test's teardown: the newest first. */
static int release_all(void **state)
{
	while (held_cnt)
		release(held[held_cnt - 1].p);
	return 0;
}

/* A skeleton with its manager, both held by the test; NULL opts keep
 * the IP-map path, for the tests of force_ip_map. */
static struct usdt_test *open_held(struct usdt_manager **man,
				   const struct usdt_manager_opts *opts)
{
	USDT_OPTS(usdt_manager_opts, keep, .keep_ip_map = true);
	struct usdt_test *skel = usdt_test__open();

	if (!opts)
		opts = &keep;

	hold(HELD_SKEL, skel);
	assert_non_null(skel);
	*man = hold(HELD_MAN, usdt_manager__new(skel->obj, opts));
	assert_non_null(*man);
	assert_int_equal(usdt_test__load(skel), 0);
	return skel;
}

/* Every spec entry of the map is zero, and the manager holds no ID. */
static void assert_specs_empty(struct usdt_test *skel, struct usdt_manager *man)
{
	uint32_t zero;

	assert_int_equal(man->store->specs.live_cnt, 0);
	assert_int_equal(specs_used(bpf_map__fd(skel->maps.usdt__spec_head),
				    bpf_map__fd(skel->maps.usdt__specs), &zero),
			 0);
	assert_int_equal(ip_cnt(bpf_map__fd(skel->maps.usdt__ip2spec)), 0);
}

static void check_mix_hit(const struct usdt_test_hit *h, long cookie)
{
	int i;

	assert_int_equal(h->tag, 1);
	assert_int_equal(h->arg_cnt, 12);
	assert_int_equal(h->cookie, cookie);
	for (i = 0; i < 12; i++) {
		if (h->rc[i] || h->args[i] != mix_want[i])
			fail_msg("arg %d: rc %d value %ld, want %ld", i,
				 h->rc[i], h->args[i], mix_want[i]);
		assert_int_equal(h->size[i], mix_size[i]);
	}
	assert_int_equal(h->rc[12], -ENOENT);
	assert_int_equal(h->size[12], -ENOENT);
	assert_int_equal(h->args[12], 0);
}

static struct usdt_link *attach(struct usdt_manager *man,
				struct bpf_program *prog, pid_t pid,
				const char *path, const char *prov,
				const char *name,
				const struct usdt_attach_opts *opts)
{
	struct usdt_link *l = usdt_manager__attach(man, prog, pid, path, prov,
						   name, opts);

	if (!l)
		fail_msg("attach %s:%s in %s: %s", prov, name, path,
			 strerror(errno));
	return hold(HELD_LINK, l);
}

/* ---------------------------------------------------------------------- */

static void test_mix_modes(void **state)
{
	struct fix *f = *state;
	struct {
		const char *what;
		bool perf;
		bool ip;
	} modes[] = {
		{ "uprobe_multi + cookie", false, false },
		{ "uprobe_multi + IP map", false, true },
		{ "perf uprobe + cookie", true, false },
		{ "perf uprobe + IP map", true, true },
	};
	size_t m;

	for (m = 0; m < sizeof(modes) / sizeof(modes[0]); m++) {
		USDT_OPTS(usdt_attach_opts, o, .usdt_cookie = 0xabc0 + m,
			  .force_ip_map = modes[m].ip);
		struct usdt_test *skel = modes[m].perf ? f->perf_skel : f->skel;
		struct usdt_manager *man = modes[m].perf ? f->perf_man : f->man;
		struct usdt_link *l;

		print_message("mode: %s\n", modes[m].what);
		reset(skel);
		l = attach(man, skel->progs.on_usdt, modes[m].ip ? 0 : -1,
			   "/proc/self/exe", "test", "mix", &o);
		assert_int_equal(usdt_link__site_cnt(l), 1);
		/* Without uprobe_multi (before 6.6), per-site uprobes. */
		assert_int_equal(usdt_link__is_multi(l),
				 !modes[m].perf && usdt__features()->uprobe_multi);
		call_mix();
		call_mix();
		assert_int_equal(hits(skel), 2);
		check_mix_hit(&skel->bss->hits[0], 0xabc0 + m);
		check_mix_hit(&skel->bss->hits[1], 0xabc0 + m);
		assert_int_equal(release(l), 0);
		call_mix();
		assert_int_equal(hits(skel), 2);
		assert_specs_empty(skel, man);
	}
}

static void test_bpf_usdt_macro(void **state)
{
	struct fix *f = *state;
	struct usdt_link *l;

	reset(f->skel);
	l = attach(f->man, f->skel->progs.on_usdt3, -1, "/proc/self/exe",
		   "test", "mix", NULL);
	call_mix();
	assert_int_equal(hits(f->skel), 1);
	assert_int_equal(f->skel->bss->hits[0].tag, 3);
	assert_int_equal(f->skel->bss->hits[0].arg_cnt, 12);
	assert_int_equal(f->skel->bss->hits[0].args[0], -5);
	assert_int_equal(f->skel->bss->hits[0].args[1], 200);
	assert_int_equal(f->skel->bss->hits[0].args[2], -300);
	release(l);
}

static void test_zero_args(void **state)
{
	struct fix *f = *state;
	struct usdt_link *l;
	int i;

	reset(f->skel);
	l = attach(f->man, f->skel->progs.on_usdt, 0, "/proc/self/exe", "test",
		   "zero", NULL);
	fire_zero();
	assert_int_equal(hits(f->skel), 1);
	assert_int_equal(f->skel->bss->hits[0].arg_cnt, 0);
	for (i = 0; i < USDT_TEST_MAX_ARGS; i++) {
		assert_int_equal(f->skel->bss->hits[0].rc[i], -ENOENT);
		assert_int_equal(f->skel->bss->hits[0].args[i], 0);
	}
	release(l);
}

#ifdef __x86_64__
static void test_nop5_combo(void **state)
{
	struct fix *f = *state;
	struct usdt_file *file = hold(HELD_FILE,
				      usdt_file__open("/proc/self/exe", NULL));
	const struct usdt_probe *p = NULL;
	size_t i, modes;

	assert_non_null(file);
	for (i = 0; i < usdt_file__probe_cnt(file); i++)
		if (!strcmp(usdt_probe__name(usdt_file__probe(file, i)), "nop5"))
			p = usdt_file__probe(file, i);
	assert_non_null(p);
	/* Modes: bpf_cookie or IP map, each with the uprobe on the site's
	 * first byte (the default) or, where the caller allows writes below
	 * the stack pointer, on the nop5, one byte in: the arguments, the
	 * %rip-relative one too, read the same either way. */
	for (modes = 0; modes < 4; modes++) {
		USDT_OPTS(usdt_attach_opts, o, .force_ip_map = modes & 1,
			  .allow_red_zone_writes = modes >= 2);
		struct usdt_link *l;

		reset(f->skel);
		l = attach(f->man, f->skel->progs.on_usdt, 0, "/proc/self/exe",
			   "test", "nop5", &o);
		assert_int_equal(usdt__link_offset(l, 0),
				 usdt_probe__file_offset(p) + (modes >= 2));
		fire_nop5(99);
		fire_nop5(100);
		assert_int_equal(hits(f->skel), 2);
		assert_int_equal(f->skel->bss->hits[1].args[0], 100);
		assert_int_equal(f->skel->bss->hits[1].rc[1], 0);
		assert_int_equal(f->skel->bss->hits[1].args[1], g_int);
		release(l);
	}
	release(file);
}

/*
 * Size-less registers, through bpf_usdt_arg() (each checked) and BPF_USDT()
 * (the first three: %ah by the general reader, %eax by the whole-register
 * fast path, %ax): each at its name's width, zero-extended.
 */
static void test_sizeless_regs(void **state)
{
	static const long want[8] = { 0x77, 0x55667788, 0x7788, 0x88,
				      0xf1, 0x4321, 0x87654321, 0xa1b2 };
	static const int sizes[8] = { 1, 4, 2, 1, 1, 2, 4, 2 };
	struct fix *f = *state;
	const struct usdt_test_hit *h = &f->skel->bss->hits[0];
	struct usdt_link *l;
	int i;

	reset(f->skel);
	l = attach(f->man, f->skel->progs.on_usdt, 0, "/proc/self/exe",
		   "test", "bare", NULL);
	bare_site();
	assert_int_equal(hits(f->skel), 1);
	assert_int_equal(h->arg_cnt, 8);
	for (i = 0; i < 8; i++) {
		if (h->rc[i] || h->args[i] != want[i] ||
		    h->size[i] != sizes[i])
			fail_msg("arg %d: rc %d value %#lx size %d, want %#lx size %d",
				 i, h->rc[i], h->args[i], h->size[i], want[i],
				 sizes[i]);
	}
	release(l);

	reset(f->skel);
	l = attach(f->man, f->skel->progs.on_usdt3, 0, "/proc/self/exe",
		   "test", "bare", NULL);
	bare_site();
	assert_int_equal(hits(f->skel), 1);
	for (i = 0; i < 3; i++)
		assert_int_equal(h->args[i], want[i]);
	release(l);
}

/*
 * One size everywhere: usdt_probe__arg() and bpf_usdt_arg_size() both say
 * 24 and 16. The reads say what they could not give: the 24-byte argument
 * -EOPNOTSUPP and 0, the 16-byte one -E2BIG with its low 8 bytes (which
 * BPF_USDT() passes on).
 */
static void test_wide_args(void **state)
{
	static const long buf[3] = { -2, -1, 42 };
	struct fix *f = *state;
	const struct usdt_test_hit *h = &f->skel->bss->hits[0];
	struct usdt_file *file = hold(HELD_FILE,
				      usdt_file__open("/proc/self/exe", NULL));
	struct usdt_arg_info info = { .sz = sizeof(info) };
	const struct usdt_probe *p = NULL;
	struct usdt_link *l;
	size_t i;

	assert_non_null(file);
	for (i = 0; i < usdt_file__probe_cnt(file); i++)
		if (!strcmp(usdt_probe__name(usdt_file__probe(file, i)), "wide"))
			p = usdt_file__probe(file, i);
	assert_non_null(p);
	assert_int_equal(usdt_probe__arg(p, 0, &info), 0);
	assert_int_equal(info.size, 24);
	assert_int_equal(usdt_probe__arg(p, 1, &info), 0);
	assert_int_equal(info.size, 16);
	release(file);

	reset(f->skel);
	l = attach(f->man, f->skel->progs.on_usdt, 0, "/proc/self/exe",
		   "test", "wide", NULL);
	wide_site(buf);
	assert_int_equal(hits(f->skel), 1);
	assert_int_equal(h->size[0], 24);
	assert_int_equal(h->rc[0], -EOPNOTSUPP);
	assert_int_equal(h->args[0], 0);
	assert_int_equal(h->size[1], 16);
	assert_int_equal(h->rc[1], -E2BIG);
	assert_int_equal(h->args[1], -2);
	assert_int_equal(h->size[2], 8);
	assert_int_equal(h->rc[2], 0);
	assert_int_equal(h->args[2], 42);
	release(l);

	reset(f->skel);
	l = attach(f->man, f->skel->progs.on_usdt3, 0, "/proc/self/exe",
		   "test", "wide", NULL);
	wide_site(buf);
	assert_int_equal(hits(f->skel), 1);
	assert_int_equal(h->args[0], 0);
	assert_int_equal(h->args[1], -2);
	assert_int_equal(h->args[2], 42);
	release(l);
}
#endif /* __x86_64__ */

#if defined(__x86_64__) || defined(__aarch64__)
static void test_index_extension(void **state)
{
	struct fix *f = *state;
	long arr[4] = { 100, 101, 102, 103 };
	int fd = bpf_map__fd(f->skel->maps.usdt__specs);
	int head = bpf_map__fd(f->skel->maps.usdt__spec_head);
	const struct usdt_test_hit *h = &f->skel->bss->hits[1];
	struct usdt_spec spec;
	struct usdt_link *l;
	uint32_t id;

	reset(f->skel);
	l = attach(f->man, f->skel->progs.on_usdt, -1, "/proc/self/exe",
		   "test", "idx32", NULL);
#ifdef __aarch64__
	/* The parser sets the extensions: the reads are right at once. */
	(void)fd, (void)head, (void)spec, (void)id;
	h = &f->skel->bss->hits[0];
#else
	/* As written, the indexes are huge: the reads fault. */
	idx32_site(&arr[1]);
	assert_int_equal(hits(f->skel), 1);
	assert_int_not_equal(f->skel->bss->hits[0].rc[0], 0);
	assert_int_not_equal(f->skel->bss->hits[0].rc[1], 0);
	assert_int_equal(f->skel->bss->hits[0].args[2], -1);

	/* Its only spec, with the index extensions an arm64 parse sets. */
	assert_int_equal(f->man->store->specs.live_cnt, 1);
	for (id = 0; id < USDT_SPEC_CHUNK; id++) {
		assert_int_equal(spec_read(head, fd, id, &spec), 0);
		if (spec.arg_cnt == 3)
			break;
	}
	assert_true(id < USDT_SPEC_CHUNK);
	spec.args[0].flags |= USDT_SPEC_F_IDX_U32;	/* 2 */
	spec.args[1].flags |= USDT_SPEC_F_IDX_S32;	/* -1 */
	assert_int_equal(spec_write(head, fd, id, &spec), 0);
#endif
	idx32_site(&arr[1]);
	assert_int_equal(hits(f->skel), h - f->skel->bss->hits + 1);
	assert_int_equal(h->rc[0], 0);
	assert_int_equal(h->args[0], 103);
	assert_int_equal(h->rc[1], 0);
	assert_int_equal(h->args[1], 100);
	assert_int_equal(h->args[2], -1);
	release(l);
	assert_specs_empty(f->skel, f->man);
}
#endif

static void test_semaphore(void **state)
{
	struct fix *f = *state;
	struct usdt_test *skels[2] = { f->skel, f->perf_skel };
	struct usdt_manager *mans[2] = { f->man, f->perf_man };
	int m;

	for (m = 0; m < 2; m++) {
		struct usdt_link *l;

		reset(skels[m]);
		assert_int_equal(sema_value(), 0);
		assert_int_equal(fire_sema(5), 0);
		l = attach(mans[m], skels[m]->progs.on_usdt, -1,
			   "/proc/self/exe", "test", "sema", NULL);
		assert_true(sema_value() > 0);
		assert_int_equal(fire_sema(6), 1);
		assert_int_equal(hits(skels[m]), 1);
		assert_int_equal(skels[m]->bss->hits[0].args[0], 6);
		release(l);
		assert_int_equal(sema_value(), 0);
		assert_int_equal(fire_sema(7), 0);
		assert_int_equal(hits(skels[m]), 1);
	}
}

/* The path of the mapped library called name. */
static char *mapped_path(const char *name)
{
	static char path[4096];
	char line[4096 + 128];
	FILE *maps = fopen("/proc/self/maps", "r");

	assert_non_null(maps);
	path[0] = '\0';
	while (fgets(line, sizeof(line), maps)) {
		char *p = strchr(line, '/');

		if (p && strstr(p, name)) {
			p[strcspn(p, "\n")] = '\0';
			snprintf(path, sizeof(path), "%s", p);
			break;
		}
	}
	fclose(maps);
	assert_true(path[0]);
	return path;
}

static char *lib_path(void)
{
	return mapped_path("libusdttest.so");
}

/*
 * Semaphores outside .probes (libsemabss.so), in .data and in .bss past
 * the data segment's file image: the kernel counts them at the file
 * offset the reader gives, in both modes, and the probe reads its
 * argument. One in the anonymous pages past the file is refused, since
 * the kernel would never count it.
 */
static void test_semaphore_bss(void **state)
{
	static const struct {
		const char *name;
		unsigned short (*value)(void);
		int (*fire)(long v);
	} sites[] = {
		{ "bss_sema", bss_sema_value, fire_bss_sema },
		{ "data_sema", data_sema_value, fire_data_sema },
	};
	struct fix *f = *state;
	struct usdt_test *skels[2] = { f->skel, f->perf_skel };
	struct usdt_manager *mans[2] = { f->man, f->perf_man };
	char *path = mapped_path("libsemabss.so");
	int m, i;

	for (m = 0; m < 2; m++) {
		for (i = 0; i < 2; i++) {
			struct usdt_link *l;

			reset(skels[m]);
			assert_int_equal(sites[i].value(), 0);
			assert_int_equal(sites[i].fire(5), 0);
			l = attach(mans[m], skels[m]->progs.on_usdt, -1, path,
				   "test", sites[i].name, NULL);
			assert_true(sites[i].value() > 0);
			assert_int_equal(sites[i].fire(1234), 1);
			assert_int_equal(hits(skels[m]), 1);
			assert_int_equal(skels[m]->bss->hits[0].args[0], 1234);
			release(l);
			assert_int_equal(sites[i].value(), 0);
			assert_int_equal(sites[i].fire(7), 0);
			assert_int_equal(hits(skels[m]), 1);
		}
		errno = 0;
		assert_null(usdt_manager__attach(mans[m],
						 skels[m]->progs.on_usdt, -1,
						 path, "test", "far_sema",
						 NULL));
		assert_int_equal(errno, EINVAL);
		assert_int_equal(fire_far_sema(8), 0);
		assert_int_equal(hits(skels[m]), 1);
	}
}

/* lib_fire() calls so far: this file is the library's only caller. */
static int lib_fire_cnt;

static void check_lib_hits(struct usdt_test *skel, int x)
{
	const struct usdt_test_hit *h = &skel->bss->hits[0];

	assert_int_equal(hits(skel), 1);
	assert_int_equal(h->arg_cnt, 3);
	assert_int_equal(h->rc[0], 0);
	assert_int_equal(h->args[0], x);
	/* lib_hidden, 1000 plus one per call: on arm64 gcc -O2 writes it as
	 * [x1, #:lo12:.LANCHOR0], a section anchor whose low 12 bits come
	 * from the instructions before the site (src/reader/arch/arm64_code.c). */
	assert_int_equal(h->rc[1], 0);
	assert_int_equal(h->args[1], 1000 + lib_fire_cnt);
	assert_int_equal(h->rc[2], 0);
	assert_int_equal(h->args[2], lib_visible);
}

static void test_shared_library(void **state)
{
	struct fix *f = *state;
	struct {
		pid_t pid;
		const char *path;
		bool ip;
	} cases[] = {
		{ -1, NULL, false },		/* every process, full path */
		{ 0, "libusdttest.so", false },	/* bare name, from our maps */
		{ -1, "libusdttest.so", false },/* bare name, loader's way */
		{ 0, NULL, true },		/* IP map: needs the pid */
	};
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		USDT_OPTS(usdt_attach_opts, o, .force_ip_map = cases[i].ip);
		const char *path = cases[i].path ? cases[i].path : lib_path();
		struct usdt_link *l;
		char *old = getenv("LD_LIBRARY_PATH") ?
			strdup(getenv("LD_LIBRARY_PATH")) : NULL;

		/* The loader finds our test library through the rpath; a
		 * bare-name search sees LD_LIBRARY_PATH. */
		if (cases[i].pid == -1 && cases[i].path) {
			char dir[4096];

			snprintf(dir, sizeof(dir), "%s", lib_path());
			*strrchr(dir, '/') = '\0';
			setenv("LD_LIBRARY_PATH", dir, 1);
		}
		reset(f->skel);
		l = attach(f->man, f->skel->progs.on_usdt, cases[i].pid, path,
			   "testlib", "fire", &o);
		if (old) {
			setenv("LD_LIBRARY_PATH", old, 1);
			free(old);
		} else {
			unsetenv("LD_LIBRARY_PATH");
		}
		lib_fire(31 + (int)i);
		lib_fire_cnt++;
		check_lib_hits(f->skel, 31 + (int)i);
		release(l);
	}
	/* IP-map mode with every process cannot know where the library is:
	 * force_ip_map asks for what cannot be (EINVAL); a kernel without
	 * bpf_cookie cannot do without a pid (EOPNOTSUPP). */
	{
		USDT_OPTS(usdt_attach_opts, o, .force_ip_map = true);

		errno = 0;
		assert_null(usdt_manager__attach(f->man, f->skel->progs.on_usdt,
						 -1, lib_path(), "testlib",
						 "fire", &o));
		assert_int_equal(errno, usdt__features()->bpf_cookie ?
						EINVAL : EOPNOTSUPP);
		assert_specs_empty(f->skel, f->man);
	}
}

/* A child that fires test:mix each time it reads a byte on *go_fd, and
 * then writes one on *done_fd, until EOF. */
static pid_t spawn_firer(int *go_fd, int *done_fd)
{
	int go[2], done[2];
	pid_t pid;
	char c;

	assert_int_equal(pipe(go), 0);
	assert_int_equal(pipe(done), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		close(go[1]);
		close(done[0]);
		while (read(go[0], &c, 1) == 1) {
			call_mix();
			if (write(done[1], "d", 1) != 1)
				_exit(1);
		}
		_exit(0);
	}
	close(go[0]);
	close(done[1]);
	*go_fd = go[1];
	*done_fd = done[0];
	hold(HELD_CHILD, (void *)(intptr_t)pid);
	return pid;
}

/* The firer's one test:mix, done: a hit of it is recorded by then (the
 * program runs in the firer, in that call), and none comes later. */
static void child_fires(int go_fd, int done_fd)
{
	char c;

	assert_int_equal(write(go_fd, "x", 1), 1);
	assert_int_equal(read(done_fd, &c, 1), 1);
}

static void reap(pid_t pid, int go_fd, int done_fd)
{
	int status;

	close(go_fd);
	close(done_fd);
	assert_int_equal(waitpid(pid, &status, 0), pid);
	forget((void *)(intptr_t)pid);
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
}

static void test_pid_filter(void **state)
{
	struct fix *f = *state;
	struct usdt_link *l;
	int go, done;
	pid_t child = spawn_firer(&go, &done);

	/* Attached to the child only: our own hit is not seen. The child
	 * says when it has fired (sleeping instead let a loaded machine
	 * check before the hit came, or before a stray one would). */
	reset(f->skel);
	l = attach(f->man, f->skel->progs.on_usdt, child, "/proc/self/exe",
		   "test", "mix", NULL);
	call_mix();
	child_fires(go, done);
	assert_int_equal(hits(f->skel), 1);
	assert_int_equal(f->skel->bss->hits[0].pid, child);
	check_mix_hit(&f->skel->bss->hits[0], 0);
	release(l);

	/* Attached to ourselves: the child's hit is not seen. */
	reset(f->skel);
	l = attach(f->man, f->skel->progs.on_usdt, 0, "/proc/self/exe", "test",
		   "mix", NULL);
	child_fires(go, done);
	assert_int_equal(hits(f->skel), 0);
	call_mix();
	assert_int_equal(hits(f->skel), 1);
	assert_int_equal(f->skel->bss->hits[0].pid, getpid());
	release(l);
	reap(child, go, done);
}

/* Spec entries 0..n-1 are in use and the rest are zero. */
static void assert_ids_packed(struct usdt_test *skel, uint32_t n)
{
	uint32_t first_zero;

	assert_int_equal(specs_used(bpf_map__fd(skel->maps.usdt__spec_head),
				    bpf_map__fd(skel->maps.usdt__specs),
				    &first_zero), n);
	assert_true(first_zero >= n);
}

static void test_many_specs_reattach(void **state)
{
	struct fix *f = *state;
	int round, i;

	for (round = 0; round < 3; round++) {
		struct usdt_link *l;
		bool seen[100] = { false };

		reset(f->skel);
		l = attach(f->man, f->skel->progs.on_usdt, -1, "/proc/self/exe",
			   "test", "many", NULL);
		assert_int_equal(usdt_link__site_cnt(l), 100);
		assert_int_equal(usdt_link__spec_cnt(l), 100);
		assert_int_equal(f->man->store->specs.live_cnt, 100);
		assert_ids_packed(f->skel, 100);
		fire_many();
		assert_int_equal(hits(f->skel), 100);
		for (i = 0; i < 100; i++) {
			long v = f->skel->bss->hits[i].args[0];

			assert_int_equal(f->skel->bss->hits[i].rc[0], 0);
			assert_true(v >= 0 && v < 100);
			assert_false(seen[v]);
			seen[v] = true;
		}
		release(l);
		assert_specs_empty(f->skel, f->man);
	}
}

/*
 * Sites whose note is there twice (tests/kernel/dup_sites.S): the file
 * lists each once, and attached in either mode each fires once a call,
 * test:dupargs with its first note's argument (the warning is
 * tests/unit/test_note.c's to check: the manager may have read this
 * file before).
 */
static void test_repeated_notes(void **state)
{
	static const struct { const char *name; long want; } sites[] = {
		{ "dup", 42 },
		{ "dupargs", 7 },
	};
	struct fix *f = *state;
	struct usdt_test *skels[2] = { f->skel, f->perf_skel };
	struct usdt_manager *mans[2] = { f->man, f->perf_man };
	struct usdt_file *file;
	size_t i, cnt[2] = { 0 };
	int m, s;

	file = usdt_file__open("/proc/self/exe", NULL);
	assert_non_null(file);
	for (i = 0; i < usdt_file__probe_cnt(file); i++) {
		const struct usdt_probe *p = usdt_file__probe(file, i);

		for (s = 0; s < 2; s++)
			if (!strcmp(usdt_probe__provider(p), "test") &&
			    !strcmp(usdt_probe__name(p), sites[s].name))
				cnt[s]++;
	}
	usdt_file__close(file);
	assert_int_equal(cnt[0], 1);
	assert_int_equal(cnt[1], 1);

	for (m = 0; m < 2; m++) {
		for (s = 0; s < 2; s++) {
			struct usdt_link *l;

			reset(skels[m]);
			l = attach(mans[m], skels[m]->progs.on_usdt, -1,
				   "/proc/self/exe", "test", sites[s].name,
				   NULL);
			assert_int_equal(usdt_link__site_cnt(l), 1);
			dup_fire();
			assert_int_equal(hits(skels[m]), 1);
			assert_int_equal(skels[m]->bss->hits[0].rc[0], 0);
			assert_int_equal(skels[m]->bss->hits[0].args[0],
					 sites[s].want);
			dup_fire();
			assert_int_equal(hits(skels[m]), 2);
			release(l);
		}
	}
}

/* The descriptors this process has open. */
static long fd_count(void)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *e;
	long n = -1;	/* d's own */

	assert_non_null(d);
	while ((e = readdir(d)))
		if (e->d_name[0] != '.')
			n++;
	closedir(d);
	return n;
}

/* The last warning the library gave. */
static char last_warn[1024];

static int keep_last_warn(enum usdt_print_level level, const char *fmt,
			  va_list ap)
{
	if (level == USDT_WARN)
		vsnprintf(last_warn, sizeof(last_warn), fmt, ap);
	return 0;
}

static void expect_warned(const char *needle)
{
	if (!strstr(last_warn, needle))
		fail_msg("missing '%s' in the last warning: %s", needle,
			 last_warn);
}

/* Attach prog to probe name of this program at a soft RLIMIT_NOFILE of
 * low, the last warning kept; the limits as they were after the call into
 * *after; errno kept. */
static struct usdt_link *attach_at_nofile(struct usdt_manager *man,
					  const struct bpf_program *prog,
					  struct usdt_file *file,
					  const char *name, rlim_t low,
					  struct rlimit *after)
{
	struct rlimit saved, rl;
	usdt_print_fn_t old;
	struct usdt_link *l;
	int err;

	assert_int_equal(getrlimit(RLIMIT_NOFILE, &saved), 0);
	rl = (struct rlimit){ .rlim_cur = low, .rlim_max = saved.rlim_max };
	assert_int_equal(setrlimit(RLIMIT_NOFILE, &rl), 0);
	last_warn[0] = '\0';
	old = usdt_set_print(keep_last_warn);
	errno = 0;
	l = file ? usdt_manager__attach_file(man, prog, -1, file, "test",
					     name, NULL) :
		   usdt_manager__attach(man, prog, -1, "/proc/self/exe",
					"test", name, NULL);
	err = errno;
	usdt_set_print(old);
	assert_int_equal(getrlimit(RLIMIT_NOFILE, after), 0);
	assert_int_equal(setrlimit(RLIMIT_NOFILE, &saved), 0);
	if (l)
		hold(HELD_LINK, l);
	errno = err;
	return l;
}

/* A child that has exec'd sleep (and so maps none of our libraries). */
static pid_t spawn_sleeper(void)
{
	int p[2];
	pid_t pid;
	char c;

	assert_int_equal(pipe2(p, O_CLOEXEC), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		execl("/bin/sleep", "sleep", "60", (char *)NULL);
		_exit(127);
	}
	hold(HELD_CHILD, (void *)(intptr_t)pid);
	close(p[1]);
	assert_int_equal(read(p[0], &c, 1), 0);	/* EOF: exec'd */
	close(p[0]);
	return pid;
}

/* Attach prog to test:name of file for pid, the last warning kept; held. */
static struct usdt_link *attach_warned(struct usdt_manager *man,
				       const struct bpf_program *prog,
				       pid_t pid, struct usdt_file *file,
				       const char *name)
{
	usdt_print_fn_t old;
	struct usdt_link *l;

	last_warn[0] = '\0';
	old = usdt_set_print(keep_last_warn);
	l = usdt_manager__attach_file(man, prog, pid, file, "test", name,
				      NULL);
	usdt_set_print(old);
	if (!l)
		fail_msg("attach test:%s for pid %d: %s", name, (int)pid,
			 strerror(errno));
	return hold(HELD_LINK, l);
}

/*
 * libsemabss.so's test:bss_sema has its semaphore in .bss in the page of
 * the data segment's last file byte, which the loader clears after the
 * kernel counted it at mmap: an attach that reaches processes mapping the
 * file later says so, naming the probe and the reason (pid -1; a process
 * that does not map it yet). One to this process, which maps it, does
 * not, nor does one of test:data_sema (in .data).
 */
static void test_semaphore_cleared_warned(void **state)
{
	static const char why[] = "is in .bss, in the page that holds its segment's last file byte, which the loader clears after the kernel has counted the semaphore there: ";
	struct fix *f = *state;
	struct bpf_program *prog = f->skel->progs.on_usdt;
	char *path = mapped_path("libsemabss.so");
	struct usdt_file *file = hold(HELD_FILE, usdt_file__open(path, NULL));
	char want[128];
	size_t i;
	pid_t child;

	assert_non_null(file);
	for (i = 0; i < usdt_file__probe_cnt(file); i++) {
		const struct usdt_probe *p = usdt_file__probe(file, i);

		assert_int_equal(usdt_probe__semaphore_cleared_at_load(p),
				 !strcmp(usdt_probe__name(p), "bss_sema"));
	}

	release(attach_warned(f->man, prog, -1, file, "bss_sema"));
	expect_warned("test:bss_sema: the semaphore at 0x");
	expect_warned(why);
	expect_warned("a process that maps the file after this attach (started, or loading it, later) will never see the probe enabled\n");

	child = spawn_sleeper();
	release(attach_warned(f->man, prog, child, file, "bss_sema"));
	snprintf(want, sizeof(want),
		 "process %d, which does not map the file yet, will never see the probe enabled\n",
		 (int)child);
	expect_warned(want);
	release((void *)(intptr_t)child);

	release(attach_warned(f->man, prog, getpid(), file, "bss_sema"));
	assert_string_equal(last_warn, "");
	release(attach_warned(f->man, prog, -1, file, "data_sema"));
	assert_string_equal(last_warn, "");
}

/*
 * Per-site perf uprobes past the soft RLIMIT_NOFILE: 100 sites take 200
 * descriptors, the soft limit leaves 20. The limit is the host program's
 * and libusdt never raises it (past FD_SETSIZE, a program's select()
 * overflows its fd_set): the attach fails whole with EMFILE, says to
 * raise the limit and by how much, leaves nothing attached and the limit
 * as it was. With the room the program gives, every site fires.
 */
static void test_perf_rlimit(void **state)
{
	struct fix *f = *state;
	struct usdt_test *skel = f->perf_skel;
	size_t live = f->perf_man->store->specs.live_cnt;
	struct rlimit before, after;
	struct usdt_link *l;
	rlim_t low;

	assert_int_equal(getrlimit(RLIMIT_NOFILE, &before), 0);
	low = (rlim_t)fd_count() + 20;
	assert_true(before.rlim_max == RLIM_INFINITY ||
		    before.rlim_max > low + 200);
	reset(skel);
	l = attach_at_nofile(f->perf_man, skel->progs.on_usdt, NULL, "many",
			     low, &after);
	if (l)
		fail_msg("perf attach under a soft limit of %llu worked",
			 (unsigned long long)low);
	assert_int_equal(errno, EMFILE);
	assert_int_equal(after.rlim_cur, low);
	assert_int_equal(after.rlim_max, before.rlim_max);
	expect_warned("test:many: 100 perf uprobes in '/proc/self/exe' need 200 file descriptors");
	expect_warned("raise the soft limit to at least");
	fire_many();
	assert_int_equal(hits(skel), 0);
	assert_int_equal(f->perf_man->store->specs.live_cnt, live);

	l = attach_at_nofile(f->perf_man, skel->progs.on_usdt, NULL, "many",
			     low + 200, &after);
	if (!l)
		fail_msg("perf attach under a soft limit of %llu: %s",
			 (unsigned long long)(low + 200), strerror(errno));
	assert_int_equal(after.rlim_cur, low + 200);
	assert_false(usdt_link__is_multi(l));
	assert_int_equal(usdt_link__site_cnt(l), 100);
	fire_many();
	assert_int_equal(hits(skel), 100);
	release(l);
}

/*
 * A new spec chunk at the soft RLIMIT_NOFILE: test:many300's 300 specs
 * need chunks past the head (USDT_SPEC_CHUNK, 256 specs each),
 * which holds a descriptor, and none is free below the limit (the file
 * was opened before). EMFILE with the limit and what to do, the limit as it was,
 * nothing taken.
 */
static void test_chunk_rlimit(void **state)
{
	struct usdt_file *file = hold(HELD_FILE,
				      usdt_file__open("/proc/self/exe", NULL));
	struct rlimit before, after;
	struct usdt_manager *man;
	struct usdt_test *skel;
	struct usdt_link *l;
	size_t live;
	int free_fd;

	(void)state;
	assert_non_null(file);
	skel = open_held(&man, NULL);
	/*
	 * The first attach opens the spec map and its head, which holds
	 * test:mix's specs: no chunk is made (the object's head is 64
	 * specs). many300 needs chunks past it. Where the head is given up
	 * (readers verified per call), test:mix's specs take chunk 0, and
	 * many300's 300 specs need another.
	 */
	free_fd = dup(0);
	assert_true(free_fd >= 0);
	close(free_fd);
	l = attach_at_nofile(man, skel->progs.on_usdt, file, "mix",
			     (rlim_t)free_fd + 4, &after);
	assert_non_null(l);
	assert_int_equal(man->store->specs.cnt,
			 head_kept(skel->obj, 64) ? 0 : 1);
	live = man->store->specs.live_cnt;
	assert_int_equal(getrlimit(RLIMIT_NOFILE, &before), 0);
	free_fd = dup(0);
	assert_true(free_fd >= 0);
	close(free_fd);
	l = attach_at_nofile(man, skel->progs.on_usdt, file, "many300",
			     (rlim_t)free_fd, &after);
	if (l)
		fail_msg("attach with no descriptor free worked");
	assert_int_equal(errno, EMFILE);
	assert_int_equal(after.rlim_cur, (rlim_t)free_fd);
	assert_int_equal(after.rlim_max, before.rlim_max);
	expect_warned("cannot create a chunk of usdt__specs: ");
	expect_warned("the soft RLIMIT_NOFILE is ");
	expect_warned("raise the soft limit");
	assert_int_equal(man->store->specs.live_cnt, live);
}

/* test:many300 past the cap, with one ID held: E2BIG, and that ID the
 * only one live. */
static void many300_past_cap(struct usdt_manager *man, struct usdt_test *skel)
{
	errno = 0;
	assert_null(usdt_manager__attach(man, skel->progs.on_usdt, -1,
					 "/proc/self/exe", "test", "many300",
					 NULL));
	assert_int_equal(errno, E2BIG);
	assert_int_equal(man->store->specs.live_cnt, 1);
}

/* Past a max_specs the user set: E2BIG, and every ID of the failed
 * attach given back, with per-site uprobes and uprobe_multi. */
static void e2big_past_cap(bool perf)
{
	USDT_OPTS(usdt_manager_opts, mo, .max_specs = 200,
		  .no_uprobe_multi = perf);
	struct usdt_manager *man;
	struct usdt_test *skel = open_held(&man, &mo);
	struct usdt_link *small;
	uint32_t kept;

	/* Hold one ID so that the failed attach has something to keep (not
	 * test:zero: a spec without arguments or cookie is all zeros). */
	small = attach(man, skel->progs.on_usdt, -1, "/proc/self/exe", "test",
		       "mix", NULL);
	assert_int_equal(man->store->specs.live_cnt, 1);
	reset(skel);
	many300_past_cap(man, skel);
	assert_ids_packed(skel, 1);
	/* The head (64 specs in this object) and the outer array holds
	 * just the chunks for the other 136 IDs; where the head is given
	 * up, the outer array takes it back: one chunk more. */
	kept = head_kept(skel->obj, 64);
	assert_int_equal(bpf_map__max_entries(skel->maps.usdt__spec_head),
			 kept + 1);
	assert_int_equal(bpf_map__max_entries(skel->maps.usdt__specs),
			 outer_for(200, 64, kept));
	fire_many300();
	assert_int_equal(hits(skel), 0);
	release(small);
	assert_specs_empty(skel, man);
	release(man);
	release(skel);
}

/*
 * A max_specs below the head shrinks it before load, and the BPF side's
 * usdt__spec_head_cnt with it: the cap's IDs are all in the head, the
 * outer array keeps its one entry, hits read their specs, and past the
 * cap an attach fails with E2BIG. Where the head is given up (readers
 * verified per call), the outer array holds one chunk more, which takes
 * the cap's IDs.
 */
static void test_head_shrunk(void **state)
{
	USDT_OPTS(usdt_manager_opts, mo, .max_specs = 40);
	struct usdt_manager *man;
	struct usdt_test *skel = open_held(&man, &mo);
	struct usdt_link *l;
	uint32_t kept;

	(void)state;
	kept = head_kept(skel->obj, 40);
	assert_int_equal(bpf_map__max_entries(skel->maps.usdt__spec_head),
			 kept + 1);
	assert_int_equal(skel->rodata->usdt__spec_head_cnt, kept);
	assert_int_equal(bpf_map__max_entries(skel->maps.usdt__specs),
			 outer_for(40, 40, kept));
	l = attach(man, skel->progs.on_usdt, -1, "/proc/self/exe", "test",
		   "mix", NULL);
	reset(skel);
	call_mix();
	assert_int_equal(hits(skel), 1);
	check_mix_hit(&skel->bss->hits[0], 0);
	many300_past_cap(man, skel);
	assert_int_equal(man->store->specs.cnt, kept ? 0 : 1);
	release(l);
	assert_specs_empty(skel, man);
	release(man);
	release(skel);
}

static void test_e2big_leaves_nothing(void **state)
{
	struct fix *f = *state;
	struct usdt_link *l;

	/* Without an option, 300 distinct specs fit: 64 in the head (where
	 * it is kept), the rest in chunks of 256, or from Linux 6.8 in those
	 * made for the whole file at once. */
	l = attach(f->man, f->skel->progs.on_usdt, -1, "/proc/self/exe",
		   "test", "many300", NULL);
	assert_int_equal(usdt_link__spec_cnt(l), 300);
	assert_ids_packed(f->skel, 300);
	assert_int_equal(inner_cnt(bpf_map__fd(f->skel->maps.usdt__specs)),
			 usdt__features()->outer_batch_one_wait ?
				 f->man->store->specs.cnt :
				 (300 - head_kept(f->skel->obj, 64) +
				  USDT_SPEC_CHUNK - 1) /
					 USDT_SPEC_CHUNK);
	assert_true(f->man->store->specs.cnt >= 1);
	release(l);
	assert_specs_empty(f->skel, f->man);

	e2big_past_cap(false);
	e2big_past_cap(true);
}

/*
 * Attach the "mix" probe of this process with o, fire it once: one hit
 * with its twelve arguments and the cookie; ips >= 0: that many IP-map
 * entries while attached.
 */
static void mix_fires(struct usdt_test *skel, struct usdt_manager *man,
		      const struct usdt_attach_opts *o, long cookie, int ips)
{
	struct usdt_link *l = attach(man, skel->progs.on_usdt, 0,
				     "/proc/self/exe", "test", "mix", o);

	if (ips >= 0)
		assert_int_equal(ip_cnt(bpf_map__fd(skel->maps.usdt__ip2spec)),
				 ips);
	call_mix();
	assert_int_equal(hits(skel), 1);
	check_mix_hit(&skel->bss->hits[0], cookie);
	release(l);
}

static void test_ip_map_full_unwinds(void **state)
{
	USDT_OPTS(usdt_manager_opts, mo, .max_ips = 10, .keep_ip_map = true);
	USDT_OPTS(usdt_attach_opts, o, .force_ip_map = true);
	struct usdt_manager *man;
	struct usdt_test *skel = open_held(&man, &mo);

	errno = 0;
	assert_null(usdt_manager__attach(man, skel->progs.on_usdt, 0,
					 "/proc/self/exe", "test", "many",
					 &o));
	assert_int_equal(errno, E2BIG);
	assert_specs_empty(skel, man);
	reset(skel);
	fire_many();
	assert_int_equal(hits(skel), 0);
	/* Ten fit. */
	mix_fires(skel, man, &o, 0, -1);
	release(man);
	release(skel);
}

/*
 * A manager made before load without keep_ip_map, on a kernel with
 * bpf_cookie: the programs load without the IP-map path, so a
 * force_ip_map attach fails with EINVAL and takes nothing (no fd,
 * spec ID or IP-map entry), while cookie attaches work. An object loaded
 * before its manager was made keeps the path: IP-map attaches work there
 * (and with keep_ip_map: test_ip_map_full_unwinds, the fixture's tests).
 */
static void test_ip_map_dropped(void **state)
{
	USDT_OPTS(usdt_manager_opts, mo, .no_uprobe_multi = false);
	USDT_OPTS(usdt_attach_opts, o, .force_ip_map = true, .usdt_cookie = 4);
	struct usdt_manager *man;
	struct usdt_test *skel;
	int fds;

	if (!usdt__features()->bpf_cookie)
		skip();	/* without cookies the path is always kept */
	skel = open_held(&man, &mo);
	assert_int_equal(skel->rodata->usdt__ip_map, 0);
	fds = usdt_test_count_fds();
	errno = 0;
	assert_null(usdt_manager__attach(man, skel->progs.on_usdt, 0,
					 "/proc/self/exe", "test", "mix", &o));
	assert_int_equal(errno, EINVAL);
	assert_int_equal(usdt_test_count_fds(), fds);
	assert_specs_empty(skel, man);
	reset(skel);
	call_mix();
	assert_int_equal(hits(skel), 0);
	o.force_ip_map = false;
	mix_fires(skel, man, &o, 4, 0);
	release(man);
	release(skel);

	/* Loaded first, managed after: the path is there. Without kernel
	 * BTF the object loads only as a manager prepared it. */
	if (!usdt__features()->ctx_known) {
		print_message("test_ip_map_dropped: no kernel BTF: an object loaded before its manager cannot load here; that half not run\n");
		return;
	}
	skel = hold(HELD_SKEL, usdt_test__open_and_load());
	assert_non_null(skel);
	assert_int_equal(skel->rodata->usdt__ip_map, 1);
	man = hold(HELD_MAN, usdt_manager__new(skel->obj, NULL));
	assert_non_null(man);
	o.force_ip_map = true;
	mix_fires(skel, man, &o, 4, 1);
	release(man);
	release(skel);
}

static void test_shared_spec(void **state)
{
	struct fix *f = *state;
	struct usdt_link *l;
	unsigned int i;

	reset(f->skel);
	l = attach(f->man, f->skel->progs.on_usdt, -1, "/proc/self/exe", "test",
		   "shared", NULL);
	assert_int_equal(usdt_link__site_cnt(l), 400);
	assert_int_equal(usdt_link__spec_cnt(l), 1);
	assert_int_equal(f->man->store->specs.live_cnt, 1);
	assert_ids_packed(f->skel, 1);
	fire_shared();
	assert_int_equal(hits(f->skel), 400);
	for (i = 0; i < 400; i++)
		assert_int_equal(f->skel->bss->hits[i].args[0], 7);
	release(l);
	assert_specs_empty(f->skel, f->man);
}

static void test_two_objects(void **state)
{
	struct fix *f = *state;
	USDT_OPTS(usdt_attach_opts, o1, .usdt_cookie = 111);
	USDT_OPTS(usdt_attach_opts, o2, .usdt_cookie = 222);
	struct usdt_manager *man2;
	struct usdt_test *skel2 = open_held(&man2, NULL);
	struct usdt_link *l1, *l2;

	reset(f->skel);
	reset(skel2);
	l1 = attach(f->man, f->skel->progs.on_usdt, -1, "/proc/self/exe",
		    "test", "mix", &o1);
	l2 = attach(man2, skel2->progs.on_usdt, -1, "/proc/self/exe", "test",
		    "mix", &o2);
	call_mix();
	assert_int_equal(hits(f->skel), 1);
	assert_int_equal(hits(skel2), 1);
	check_mix_hit(&f->skel->bss->hits[0], 111);
	check_mix_hit(&skel2->bss->hits[0], 222);
	/* Each object numbers its own specs from 0. */
	assert_ids_packed(f->skel, 1);
	assert_ids_packed(skel2, 1);
	release(l1);
	call_mix();
	assert_int_equal(hits(f->skel), 1);
	assert_int_equal(hits(skel2), 2);
	release(l2);
	release(man2);
	release(skel2);
}

/* path (a mkstemp() template): a copy of this binary whose header says
 * it is for another architecture. */
static void make_foreign(char *path)
{
	int in = open("/proc/self/exe", O_RDONLY | O_CLOEXEC);
	int out = mkstemp(path);
	char buf[1 << 16];
	Elf64_Ehdr eh;
	ssize_t n;

	assert_true(in >= 0 && out >= 0);
	while ((n = read(in, buf, sizeof(buf))) > 0)
		assert_int_equal(write(out, buf, (size_t)n), n);
	assert_int_equal(n, 0);
	assert_int_equal(pread(out, &eh, sizeof(eh), 0), sizeof(eh));
	eh.e_machine = eh.e_machine == EM_AARCH64 ? EM_X86_64 : EM_AARCH64;
	assert_int_equal(pwrite(out, &eh, sizeof(eh), 0), sizeof(eh));
	close(in);
	close(out);
}

/* The attach fails with errno err and returns NULL. */
static void expect_fail(struct usdt_manager *man,
			const struct bpf_program *prog, pid_t pid,
			const char *path, const char *prov, const char *name,
			const struct usdt_attach_opts *opts, int err)
{
	struct usdt_link *l;

	errno = 0;
	l = usdt_manager__attach(man, prog, pid, path, prov, name, opts);
	if (l) {
		usdt_link__destroy(l);
		fail_msg("attach %s:%s in %s worked, want errno %d", prov,
			 name, path, err);
	}
	if (errno != err)
		fail_msg("attach %s:%s in %s: errno %d, want %d", prov, name,
			 path, errno, err);
}

static void test_errors(void **state)
{
	struct fix *f = *state;
	USDT_OPTS(usdt_attach_opts, multi, .mode = USDT_MODE_MULTI);
	USDT_OPTS(usdt_attach_opts, perf, .mode = USDT_MODE_PERF);
	struct bpf_program *p = f->skel->progs.on_usdt;
	const char *exe = "/proc/self/exe";

	expect_fail(f->man, p, -1, exe, "test", "nosuchprobe", NULL, ENOENT);
	expect_fail(f->man, p, -1, "/no/such/file", "test", "mix", NULL, ENOENT);
	expect_fail(f->man, p, -1, "libnosuchlib.so", "test", "mix", NULL,
		    ENOENT);
	expect_fail(f->man, p, -2, exe, "test", "mix", NULL, EINVAL);
	expect_fail(f->man, NULL, -1, exe, "test", "mix", NULL, EINVAL);
	/* The multi-prepared program cannot go per site, and back (the
	 * manager prepares it for uprobe_multi only where the kernel has
	 * it). */
	if (usdt__features()->uprobe_multi)
		expect_fail(f->man, p, -1, exe, "test", "mix", &perf, EINVAL);
	/* A per-site program cannot take a uprobe_multi link: the caller's
	 * choice (no_uprobe_multi) where the kernel has them, the kernel's
	 * lack where it does not. */
	expect_fail(f->perf_man, f->perf_skel->progs.on_usdt, -1, exe, "test",
		    "mix", &multi,
		    usdt__features()->uprobe_multi ? EINVAL : EOPNOTSUPP);
	/* A file that is not ELF (made here: the guests of make vm-check
	 * have no /etc/passwd). */
	{
		char text[] = "/tmp/usdt-not-elf-XXXXXX";
		int fd = mkstemp(text);

		assert_true(fd >= 0);
		assert_int_equal(write(fd, "not ELF\n", 8), 8);
		close(fd);
		expect_fail(f->man, p, -1, text, "test", "mix", NULL, ENOEXEC);
		unlink(text);
	}
	/* A file for another architecture, its probes readable: ENOEXEC,
	 * as execve() says, not EOPNOTSUPP (which says the kernel lacks
	 * something). */
	{
		char other[] = "/tmp/usdt-other-arch-XXXXXX";

		make_foreign(other);
		expect_fail(f->man, p, -1, other, "test", "mix", NULL, ENOEXEC);
		expect_fail(f->man, p, 0, other, "test", "mix", NULL, ENOEXEC);
		unlink(other);
	}
	assert_specs_empty(f->skel, f->man);
	/* Globs: one link for every match. */
	{
		struct usdt_link *l = attach(f->man, p, -1, "/proc/self/exe",
					     "t?st", "[mz][ie]*", NULL);

		/* mix and zero, one site each */
		assert_int_equal(usdt_link__site_cnt(l), 2);
		assert_int_equal(usdt_link__spec_cnt(l), 2);
		assert_int_equal(release(l), 0);
	}
	assert_int_equal(usdt_link__destroy(NULL), 0);
}

/* In IP-map mode one run-time IP can hold one spec: a second attach of
 * the same site is refused and leaves the first one working. */
static void test_ip_collision(void **state)
{
	struct fix *f = *state;
	USDT_OPTS(usdt_attach_opts, o, .force_ip_map = true, .usdt_cookie = 5);
	USDT_OPTS(usdt_attach_opts, o2, .force_ip_map = true, .usdt_cookie = 6);
	struct usdt_link *l;

	l = attach(f->man, f->skel->progs.on_usdt, 0, "/proc/self/exe", "test",
		   "mix", &o);
	errno = 0;
	assert_null(usdt_manager__attach(f->man, f->skel->progs.on_usdt3, 0,
					 "/proc/self/exe", "test", "mix", &o2));
	assert_int_equal(errno, EEXIST);
	assert_int_equal(f->man->store->specs.live_cnt, 1);
	reset(f->skel);
	call_mix();
	assert_int_equal(hits(f->skel), 1);
	check_mix_hit(&f->skel->bss->hits[0], 5);
	release(l);
	assert_specs_empty(f->skel, f->man);
}

/* A container's view of a file: /proc/PID/root/PATH. */
static void test_proc_root_path(void **state)
{
	struct fix *f = *state;
	char exe[4096], path[4200];
	struct usdt_link *l;
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);

	assert_true(n > 0);
	exe[n] = '\0';
	snprintf(path, sizeof(path), "/proc/%d/root%s", getpid(), exe);
	reset(f->skel);
	l = attach(f->man, f->skel->progs.on_usdt, -1, path, "test", "mix",
		   NULL);
	call_mix();
	assert_int_equal(hits(f->skel), 1);
	check_mix_hit(&f->skel->bss->hits[0], 0);
	release(l);
}

/*
 * The kernel refuses a uprobe part-way: another uprobe already sits on the
 * semaphore site with a different ref_ctr_offset. Attaching test:mix and
 * test:sema together must then leave nothing: mix's uprobe (made first in
 * per-site mode) is taken down again, and every ID is given back.
 */
static int clash_hints;

static int count_clash_hints(enum usdt_print_level level, const char *fmt,
			     va_list ap)
{
	char buf[1024];

	(void)level;
	vsnprintf(buf, sizeof(buf), fmt, ap);
	clash_hints += strstr(buf, "ref_ctr_offset mismatch") != NULL;
	return 0;
}

static void test_kernel_refusal_unwinds(void **state)
{
	struct fix *f = *state;
	struct usdt_file *file = hold(HELD_FILE,
				      usdt_file__open("/proc/self/exe", NULL));
	const struct usdt_probe *sema = NULL;
	struct bpf_link *blocker;
	size_t i;
	int m;

	assert_non_null(file);
	for (i = 0; i < usdt_file__probe_cnt(file); i++)
		if (!strcmp(usdt_probe__name(usdt_file__probe(file, i)), "sema"))
			sema = usdt_file__probe(file, i);
	assert_non_null(sema);
	{
		LIBBPF_OPTS(bpf_uprobe_opts, uo,
			    .ref_ctr_offset = usdt_probe__semaphore_offset(sema) + 2);

		blocker = bpf_program__attach_uprobe_opts(
			f->perf_skel->progs.on_usdt3, -1, "/proc/self/exe",
			usdt_probe__file_offset(sema), &uo);
		assert_int_equal(libbpf_get_error(blocker), 0);
		hold(HELD_BPF_LINK, blocker);
	}
	for (m = 0; m < 2; m++) {
		struct usdt_test *skel = m ? f->perf_skel : f->skel;
		struct usdt_manager *man = m ? f->perf_man : f->man;

		usdt_print_fn_t old = usdt_set_print(count_clash_hints);

		errno = 0;
		clash_hints = 0;
		assert_null(usdt_manager__attach(man, skel->progs.on_usdt, -1,
						 "/proc/self/exe", "test",
						 "[ms][ie]*[xa]", NULL));
		assert_int_equal(errno, EINVAL);
		usdt_set_print(old);
		/* The refusal is explained (either mode). */
		assert_int_equal(clash_hints, 1);
		assert_specs_empty(skel, man);
		reset(skel);
		call_mix();
		assert_int_equal(hits(skel), 0);
	}
	release(blocker);
	/* With the blocker gone, the same attach works. */
	{
		struct usdt_link *l = attach(f->perf_man,
					     f->perf_skel->progs.on_usdt, -1,
					     "/proc/self/exe", "test",
					     "[ms][ie]*[xa]", NULL);

		assert_int_equal(usdt_link__site_cnt(l), 2);
		release(l);
	}
	release(file);
}

/* The BPF side built without __TARGET_ARCH_xxx reads the same values. */
static void test_no_target_arch(void **state)
{
	struct usdt_test_noarch *skel = hold(HELD_NOARCH_SKEL,
					     usdt_test_noarch__open());
	USDT_OPTS(usdt_manager_opts, mo, .keep_ip_map = true);
	struct usdt_manager *man;
	int ip;

	assert_non_null(skel);
	man = hold(HELD_MAN, usdt_manager__new(skel->obj, &mo));
	assert_non_null(man);
	assert_int_equal(usdt_test_noarch__load(skel), 0);
	/* The PC's place in this arch's struct pt_regs, from the library's
	 * own table (x86_64 128, arm64 256, s390x 16, riscv64 0). */
	assert_int_equal(skel->rodata->usdt__ip_off, usdt__arch_host()->ip_off);
	for (ip = 0; ip < 2; ip++) {
		USDT_OPTS(usdt_attach_opts, o, .force_ip_map = ip,
			  .usdt_cookie = 77);
		struct usdt_link *l = attach(man, skel->progs.on_usdt, 0,
					     "/proc/self/exe", "test", "mix",
					     &o);

		skel->bss->hit_cnt = 0;
		call_mix();
		assert_int_equal(skel->bss->hit_cnt, 1);
		check_mix_hit(&skel->bss->hits[0], 77);
		release(l);
	}
	release(man);
	release(skel);
}

static void test_attach_destroy_cycles(void **state)
{
	struct fix *f = *state;
	int fds = usdt_test_count_fds(), i;

	for (i = 0; i < 1000; i++) {
		USDT_OPTS(usdt_attach_opts, o, .usdt_cookie = (uint64_t)i);
		struct usdt_link *l = attach(f->man, f->skel->progs.on_usdt, -1,
					     "/proc/self/exe", "test", "mix",
					     &o);

		if (i % 100 == 0) {
			reset(f->skel);
			call_mix();
			assert_int_equal(hits(f->skel), 1);
			check_mix_hit(&f->skel->bss->hits[0], i);
		}
		assert_int_equal(release(l), 0);
	}
	assert_specs_empty(f->skel, f->man);
	assert_int_equal(usdt_test_count_fds(), fds);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_teardown(test_mix_modes, release_all),
		cmocka_unit_test_teardown(test_bpf_usdt_macro, release_all),
		cmocka_unit_test_teardown(test_zero_args, release_all),
#ifdef __x86_64__
		cmocka_unit_test_teardown(test_nop5_combo, release_all),
		cmocka_unit_test_teardown(test_sizeless_regs, release_all),
		cmocka_unit_test_teardown(test_wide_args, release_all),
#endif
#if defined(__x86_64__) || defined(__aarch64__)
		cmocka_unit_test_teardown(test_index_extension, release_all),
#endif
		cmocka_unit_test_teardown(test_semaphore, release_all),
		cmocka_unit_test_teardown(test_semaphore_bss, release_all),
		cmocka_unit_test_teardown(test_semaphore_cleared_warned,
					  release_all),
		cmocka_unit_test_teardown(test_shared_library, release_all),
		cmocka_unit_test_teardown(test_pid_filter, release_all),
		cmocka_unit_test_teardown(test_many_specs_reattach, release_all),
		cmocka_unit_test_teardown(test_perf_rlimit, release_all),
		cmocka_unit_test_teardown(test_chunk_rlimit, release_all),
		cmocka_unit_test_teardown(test_repeated_notes, release_all),
		cmocka_unit_test_teardown(test_e2big_leaves_nothing, release_all),
		cmocka_unit_test_teardown(test_head_shrunk, release_all),
		cmocka_unit_test_teardown(test_ip_map_full_unwinds, release_all),
		cmocka_unit_test_teardown(test_shared_spec, release_all),
		cmocka_unit_test_teardown(test_two_objects, release_all),
		cmocka_unit_test_teardown(test_errors, release_all),
		cmocka_unit_test_teardown(test_kernel_refusal_unwinds, release_all),
		cmocka_unit_test_teardown(test_ip_collision, release_all),
		cmocka_unit_test_teardown(test_ip_map_dropped, release_all),
		cmocka_unit_test_teardown(test_no_target_arch, release_all),
		cmocka_unit_test_teardown(test_proc_root_path, release_all),
		cmocka_unit_test_teardown(test_attach_destroy_cycles, release_all),
	};

	usdt_test_require_kernel("kernel/test_attach");
	if (!getenv("USDT_LOG_LEVEL"))
		usdt_set_print(NULL);
	return cmocka_run_group_tests_name("attach", tests, fix_setup,
					   fix_teardown);
}
