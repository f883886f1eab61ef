// SPDX-License-Identifier: BSD-2-Clause
/*
 * Tracing changes nothing but time: a leaf function keeps three values in
 * its red zone (the 128 bytes below %rsp that the x86_64 ABI gives it)
 * across a "nop; nop5" site and a "nop; nop10" site. Linux 6.18 turns a
 * uprobe on a nop5 into a call into a trampoline, whose pushes land in
 * that red zone; the uprobe on a site's first byte (the one-byte nop) is
 * never optimised. Every way to attach keeps to the first byte unless
 * asked: the skeleton's __attach(), usdt_program__attach(), a manager and
 * `usdt trace`. After 100 hits of each site every value is unchanged and
 * every argument read right.
 */
#include <stddef.h>
#include <sys/prctl.h>
#include <sys/sdt.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <linux/filter.h>
#include <linux/seccomp.h>

#include <bpf/bpf.h>

#include "test_util.h"
#include "tool_run.h"
#include "reader/arch_ops.h"
#include "attach/attach.h"

#ifdef __x86_64__
#include "redzone.skel.h"

#define ROUNDS 100

volatile int g_rz = 424242;

/*
 * long rz_nop5(long v), rz_nop10(long v): store three values at -8, -16
 * and -24(%rsp), pass the site, and return how many of them changed.
 * Leaf functions in asm, so that no compiler moves the stores or the
 * site, and the red zone is used exactly as a compiler may use it.
 */
#define RZ_STORE(off, val)                                                  \
	"movabs $" val ", %rax\n"                                           \
	"mov %rax, " off "(%rsp)\n"
#define RZ_CHECK(off, val)                                                  \
	"movabs $" val ", %rcx\n"                                           \
	"cmp %rcx, " off "(%rsp)\n"                                         \
	"setne %dl\n"                                                       \
	"movzbl %dl, %edx\n"                                                \
	"add %rdx, %rax\n"
#define RZ_FUNC(fn, probe, nop_bytes)                                       \
	".pushsection .text\n"                                              \
	".globl " fn "\n"                                                   \
	".type " fn ", @function\n"                                         \
	fn ":\n"                                                            \
	RZ_STORE("-8", "0x1111111111111111")                                \
	RZ_STORE("-16", "0x2222222222222222")                               \
	RZ_STORE("-24", "0x3333333333333333")                               \
	STAP_PROBE_ASM(rz, probe, -8@%rdi -4@g_rz(%rip))                    \
	".byte " nop_bytes "\n"                                             \
	"xor %eax, %eax\n"                                                  \
	RZ_CHECK("-8", "0x1111111111111111")                                \
	RZ_CHECK("-16", "0x2222222222222222")                               \
	RZ_CHECK("-24", "0x3333333333333333")                               \
	"ret\n"                                                             \
	".size " fn ", .-" fn "\n"                                          \
	".popsection\n"

long rz_nop5(long v);
long rz_nop10(long v);
__asm__(RZ_FUNC("rz_nop5", nop5, "0x0f, 0x1f, 0x44, 0x00, 0x00"));
__asm__(RZ_FUNC("rz_nop10", nop10,
		"0x66, 0x2e, 0x0f, 0x1f, 0x84, 0x00, 0x00, 0x00, 0x00, 0x00"));

/* Hit both sites ROUNDS times: how many red-zone values changed. */
static long fire_rounds(void)
{
	long bad = 0, i;

	for (i = 0; i < ROUNDS; i++) {
		bad += rz_nop5(1000 + i);
		bad += rz_nop10(2000 + i);
	}
	return bad;
}

static void reset(struct redzone *skel)
{
	memset(skel->bss->hits, 0, sizeof(skel->bss->hits));
	memset(skel->bss->val, 0, sizeof(skel->bss->val));
	memset(skel->bss->glob, 0, sizeof(skel->bss->glob));
}

/* The file offset of this program's rz:NAME site. */
static uint64_t site_off(const char *name)
{
	struct usdt_file *file = usdt_file__open("/proc/self/exe", NULL);
	uint64_t off = 0;
	size_t i, n = 0;

	assert_non_null(file);
	for (i = 0; i < usdt_file__probe_cnt(file); i++) {
		const struct usdt_probe *p = usdt_file__probe(file, i);

		if (!strcmp(usdt_probe__provider(p), "rz") &&
		    !strcmp(usdt_probe__name(p), name)) {
			off = usdt_probe__file_offset(p);
			n++;
		}
	}
	usdt_file__close(file);
	assert_int_equal(n, 1);
	return off;
}

/* Fire, then check the red zone, the hits and the last arguments. */
static void fire_and_check(struct redzone *skel)
{
	int k;

	reset(skel);
	assert_int_equal(fire_rounds(), 0);
	for (k = 0; k < 2; k++) {
		assert_int_equal(skel->bss->hits[k], ROUNDS);
		assert_int_equal(skel->bss->val[k], (k ? 2000 : 1000) + ROUNDS - 1);
		assert_int_equal(skel->bss->glob[k], g_rz);
	}
}

/* The skeleton's __attach(), then usdt_program__attach() in its place. */
static void test_skeleton_paths(void **state)
{
	static const char *const names[2] = { "nop5", "nop10" };
	struct redzone *skel = redzone__open_and_load();
	struct bpf_link **links[2];
	struct bpf_program *progs[2];
	int k;

	(void)state;
	assert_non_null(skel);
	assert_int_equal(redzone__attach(skel), 0);
	fire_and_check(skel);

	links[0] = &skel->links.on_nop5, links[1] = &skel->links.on_nop10;
	progs[0] = skel->progs.on_nop5, progs[1] = skel->progs.on_nop10;
	for (k = 0; k < 2; k++) {
		assert_int_equal(bpf_link__destroy(*links[k]), 0);
		*links[k] = usdt_program__attach(progs[k], 0, "/proc/self/exe",
						 "rz", names[k], NULL);
		assert_non_null(*links[k]);
	}
	fire_and_check(skel);
	redzone__destroy(skel);
}

/*
 * A manager, with uprobe_multi links or per-site uprobes: the uprobe is
 * on the site's first byte. Asked to allow writes below the stack
 * pointer, it moves onto the nop5 (one byte in; the nop10 site stays),
 * and the arguments still read right; what the red zone then holds
 * depends on the kernel, and is only printed.
 */
static void manager_run(bool per_site)
{
	USDT_OPTS(usdt_manager_opts, mo, .no_uprobe_multi = per_site);
	struct redzone *skel = redzone__open();
	struct usdt_manager *man;
	struct usdt_link *l[2];
	int red;

	assert_non_null(skel);
	man = usdt_manager__new(skel->obj, &mo);
	assert_non_null(man);
	assert_int_equal(redzone__load(skel), 0);
	for (red = 0; red < 2; red++) {
		USDT_OPTS(usdt_attach_opts, o, .allow_red_zone_writes = red);
		long bad;

		l[0] = usdt_manager__attach(man, skel->progs.on_nop5, 0,
					    "/proc/self/exe", "rz", "nop5", &o);
		l[1] = usdt_manager__attach(man, skel->progs.on_nop10, 0,
					    "/proc/self/exe", "rz", "nop10", &o);
		assert_non_null(l[0]);
		assert_non_null(l[1]);
		assert_int_equal(usdt__link_offset(l[0], 0),
				 site_off("nop5") + red);
		assert_int_equal(usdt__link_offset(l[1], 0), site_off("nop10"));
		if (!red) {
			fire_and_check(skel);
		} else {
			reset(skel);
			bad = fire_rounds();
			print_message("allow_red_zone_writes: %ld of %d red-zone values changed on this kernel\n",
				      bad, 3 * 2 * ROUNDS);
			assert_int_equal(skel->bss->hits[0], ROUNDS);
			assert_int_equal(skel->bss->val[0], 1000 + ROUNDS - 1);
			assert_int_equal(skel->bss->glob[0], g_rz);
		}
		assert_int_equal(usdt_link__destroy(l[0]), 0);
		assert_int_equal(usdt_link__destroy(l[1]), 0);
	}
	usdt_manager__free(man);
	redzone__destroy(skel);
}

static void test_manager(void **state)
{
	(void)state;
	manager_run(false);
	manager_run(true);
}

/*
 * `usdt trace -c` of this program's firing mode: every hit printed with
 * its arguments, and the red zone unchanged; with --allow-red-zone-writes
 * the hits still read right (the red zone is the kernel's to say).
 */
static void tool_run(bool red)
{
	char self[4096], cmd[4200], line[64];
	struct run_result r;
	ssize_t n;
	int i;

	n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	assert_true(n > 0);
	self[n] = '\0';
	snprintf(cmd, sizeof(cmd), "%s fire", self);
	if (red)
		run_tool(&r, "trace", "--allow-red-zone-writes", "-c", cmd, self,
			 "rz:*", "%d %d");
	else
		run_tool(&r, "trace", "-c", cmd, self, "rz:*", "%d %d");
	if (r.status)
		fail_msg("status %d, stderr:\n%s", r.status, r.err);
	assert_non_null(strstr(r.out, red ? "rz red zone changed " :
					    "rz red zone changed 0\n"));
	for (i = 0; i < ROUNDS; i++) {
		snprintf(line, sizeof(line), " rz:nop5 %d %d\n", 1000 + i, g_rz);
		assert_non_null(strstr(r.out, line));
		snprintf(line, sizeof(line), " rz:nop10 %d %d\n", 2000 + i,
			 g_rz);
		assert_non_null(strstr(r.out, line));
	}
	run_result_free(&r);
}

static void test_tool(void **state)
{
	(void)state;
	tool_run(false);
	tool_run(true);
}

/*
 * Under a seccomp filter that kills on x86's uprobe syscall (336: a
 * systemd unit's SystemCallFilter= kills on any syscall it does not
 * list), a manager's whole life and a skeleton's __attach() run: the
 * library never calls a syscall to learn whether the kernel has it.
 */
static int seccomp_child(void)
{
	struct sock_filter insns[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS,
			 offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, 336, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_fprog prog = { .len = sizeof(insns) / sizeof(insns[0]),
				   .filter = insns };
	struct redzone *skel;
	struct usdt_manager *man;
	struct usdt_link *l;

	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) ||
	    syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &prog))
		return 100;
	skel = redzone__open();
	man = skel ? usdt_manager__new(skel->obj, NULL) : NULL;
	if (!man || redzone__load(skel))
		return 101;
	l = usdt_manager__attach(man, skel->progs.on_nop5, 0, "/proc/self/exe",
				 "rz", "nop5", NULL);
	if (!l || rz_nop5(7) || skel->bss->hits[0] != 1)
		return 102;
	usdt_link__destroy(l);
	usdt_manager__free(man);
	redzone__destroy(skel);
	skel = redzone__open_and_load();
	if (!skel || redzone__attach(skel) || fire_rounds())
		return 103;
	redzone__destroy(skel);
	return 0;
}

static int exec_seccomp_child(void *arg)
{
	const char *argv[] = { "/proc/self/exe", "seccomp", NULL };

	(void)arg;
	execv(argv[0], (char *const *)argv);
	return 127;
}

static void test_no_unknown_syscall(void **state)
{
	(void)state;
	usdt_test_in_child(exec_seccomp_child, NULL,
			   "a syscall the filter forbids");
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_skeleton_paths),
		cmocka_unit_test(test_manager),
		cmocka_unit_test(test_tool),
		cmocka_unit_test(test_no_unknown_syscall),
	};

	if (argc == 2 && !strcmp(argv[1], "fire")) {
		printf("rz red zone changed %ld\n", fire_rounds());
		return 0;
	}
	if (argc == 2 && !strcmp(argv[1], "seccomp"))
		return seccomp_child();
	usdt_test_require_kernel(argv[0]);
	usdt_test_need_bpffs(argv[0]);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
#else
/* Other arches have no red zone for a uprobe to write into, and no
 * uprobe moves off a site's first byte there. */
static void test_no_move(void **state)
{
	(void)state;
	assert_non_null(usdt__arch_host());
	assert_null(usdt__arch_host()->attach_skip);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_no_move),
	};

	(void)argc;
	usdt_test_require_kernel(argv[0]);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
#endif
