// SPDX-License-Identifier: BSD-2-Clause
/*
 * One file from read to attach, against the real kernel: the path swapped
 * between read and attach, files replaced on disk under a running process,
 * a zombie, a read-only mapping below the code, a program of another
 * object, links outliving their manager, one parse for many attaches, and
 * a process that runs from an overlayfs (as in a container) or from btrfs
 * (Fedora's and openSUSE's default).
 *
 * Run as "test_file firer", this program is its own target: it fires
 * tf:fire once for every byte it reads from stdin, until EOF ("test_file
 * firer LIB": testlib:fire of the library LIB, which it dlopen()s).
 * Copies of it in a temporary directory play the target and the victim.
 */
#include <dlfcn.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/utsname.h>
#include <sys/sdt.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#include <linux/btrfs.h>
#include <linux/capability.h>
#include <linux/loop.h>
#include <bpf/bpf.h>
#include <zlib.h>

#include "test_util.h"
#include "chunk_util.h"
#include "attach/attach.h"
#include "reader/arch_ops.h"
#include "reader/file.h"
#include "proc/procmap.h"
#include "skel_fixture.h"
#include "tool_run.h"

__attribute__((noinline)) void fire(long v)
{
	STAP_PROBE1(tf, fire, v);
}

/* 60 probes of distinct names: tf:n00 .. tf:n59, each one site. */
#define NAME_SITE(i) STAP_PROBE1(tf, n##i, 1##i);
#define R10(b) NAME_SITE(b##0) NAME_SITE(b##1) NAME_SITE(b##2) \
	NAME_SITE(b##3) NAME_SITE(b##4) NAME_SITE(b##5) NAME_SITE(b##6) \
	NAME_SITE(b##7) NAME_SITE(b##8) NAME_SITE(b##9)
__attribute__((noinline)) void fire_names(void)
{
	R10(0) R10(1) R10(2) R10(3) R10(4) R10(5)
}
#define NAME_CNT 60

static int firer_main(const char *lib)
{
	void (*lib_fire)(int) = NULL;
	void *h;
	char c = 'r';

	if (lib) {
		h = dlopen(lib, RTLD_NOW);
		lib_fire = h ? (void (*)(int))dlsym(h, "lib_fire") : NULL;
		if (!lib_fire)
			return 1;
	}
	/* Mapped and running: tell spawn_firer() on fd 3; and there each
	 * time it has fired (firer_fire()). */
	if (write(3, &c, 1) != 1)
		return 1;
	while (read(0, &c, 1) == 1) {
		if (lib_fire)
			lib_fire(c);
		else
			fire(c);
		if (write(3, "f", 1) != 1)
			return 1;
	}
	return 0;
}

/* ---------------------------------------------------------------------- */
/* Fixture: skel_fixture.h's, and a temporary directory for the copies.   */

static char tmp_dir[64];
static char btrfs_dir[160];	/* where a btrfs is mounted, or "" */

static int setup(void **state)
{
	fix_setup(state);
	snprintf(tmp_dir, sizeof(tmp_dir), "/tmp/usdt-test-file-XXXXXX");
	assert_non_null(mkdtemp(tmp_dir));
	return 0;
}

static int teardown(void **state)
{
	char cmd[128];

	/* Lazily: a firer that a failed test left may still run from it.
	 * Its loop device detaches itself once the file system is gone. */
	if (btrfs_dir[0])
		assert_int_equal(umount2(btrfs_dir, MNT_DETACH), 0);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", tmp_dir);
	assert_int_equal(system(cmd), 0);
	return fix_teardown(state);
}

/* Hits of process pid among the recorded ones. */
static unsigned int hits_of(struct usdt_test *skel, pid_t pid)
{
	unsigned int i, n = 0, cnt = hits(skel);

	for (i = 0; i < cnt && i < USDT_TEST_MAX_HITS; i++)
		n += skel->bss->hits[i].pid == (uint32_t)pid;
	return n;
}

static void path_in(char *out, size_t sz, const char *name)
{
	snprintf(out, sz, "%s/%s", tmp_dir, name);
}

/* A copy of this program at path (a new inode each time). */
static void copy_self(const char *path)
{
	char cmd[8192], self[4096];
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);

	assert_true(n > 0);
	self[n] = '\0';
	unlink(path);
	snprintf(cmd, sizeof(cmd), "cp '%s' '%s'", self, path);
	assert_int_equal(system(cmd), 0);
}

/* A copy of this program at path, mapped whole (as the loader would map
 * a library); *size its length. */
static void *map_copy_self(const char *path, size_t *size)
{
	struct stat st;
	void *map;
	int fd;

	copy_self(path);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	assert_true(fd >= 0);
	assert_int_equal(fstat(fd, &st), 0);
	*size = (size_t)st.st_size;
	map = mmap(NULL, *size, PROT_READ | PROT_EXEC, MAP_PRIVATE, fd, 0);
	assert_true(map != MAP_FAILED);
	close(fd);
	return map;
}

struct firer {
	pid_t pid;
	int go;		/* write a byte: one tf:fire */
	int done;	/* then a byte comes here: it has fired */
};

/*
 * Run path as a firer; returns once it runs that file. /proc/PID/exe
 * changes before exec maps the new file, so only the firer itself can say
 * that it runs: it writes a byte on fd 3.
 */
static struct firer spawn_firer_lib(const char *path, const char *lib)
{
	struct firer fr;
	int p[2], ready[2];
	char c;

	/* Close-on-exec: another firer must not hold this one's pipes. */
	assert_int_equal(pipe2(p, O_CLOEXEC), 0);
	assert_int_equal(pipe2(ready, O_CLOEXEC), 0);
	fr.pid = fork();
	assert_true(fr.pid >= 0);
	if (fr.pid == 0) {
		dup2(p[0], 0);
		/* dup2() clears close-on-exec, but not onto itself. */
		if (ready[1] == 3)
			fcntl(3, F_SETFD, 0);
		else
			dup2(ready[1], 3);
		execl(path, path, "firer", lib, (char *)NULL);
		_exit(127);
	}
	close(p[0]);
	close(ready[1]);
	fr.go = p[1];
	fr.done = ready[0];
	assert_int_equal(read(fr.done, &c, 1), 1);
	assert_int_equal(c, 'r');
	return fr;
}

static struct firer spawn_firer(const char *path)
{
	return spawn_firer_lib(path, NULL);
}

/* One tf:fire of fr, done: a hit of it is recorded by then (the program
 * runs in the firer, in that call), and none comes later. */
static void firer_fire(const struct firer *fr)
{
	char c;

	assert_int_equal(write(fr->go, "x", 1), 1);
	assert_int_equal(read(fr->done, &c, 1), 1);
}

static void firer_reap(struct firer *fr)
{
	int status;

	close(fr->go);
	close(fr->done);
	assert_int_equal(waitpid(fr->pid, &status, 0), fr->pid);
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
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
	return l;
}

/* ---------------------------------------------------------------------- */
/* The path race                                                          */

/* Armed by the test: at the reader's "N USDT call sites" message, the
 * attacker points the symlink at another file. */
static const char *race_link, *race_victim;
static unsigned int parse_cnt;

static int count_and_race(enum usdt_print_level level, const char *fmt,
			  va_list ap)
{
	char tmp[256];

	if (!strstr(fmt, "USDT call sites"))
		return 0;
	parse_cnt++;
	if (race_link) {
		snprintf(tmp, sizeof(tmp), "%s.new", race_link);
		unlink(tmp);
		assert_int_equal(symlink(race_victim, tmp), 0);
		assert_int_equal(rename(tmp, race_link), 0);
		race_link = NULL;
	}
	return 0;
}

/*
 * The symlink points at a (a copy of this program) when the library reads
 * it, and at b (another copy, the victim, running) by the time the kernel
 * would open it. The uprobes must be on a: the victim's probe is not hit.
 */
static void test_path_race(void **state)
{
	struct fix *f = *state;
	char a[128], b[128], link[128];
	struct firer target, victim;
	int m;

	path_in(a, sizeof(a), "a");
	path_in(b, sizeof(b), "b");
	path_in(link, sizeof(link), "link");
	copy_self(a);
	copy_self(b);
	target = spawn_firer(a);
	victim = spawn_firer(b);
	for (m = 0; m < 2; m++) {
		struct usdt_test *skel = m ? f->perf_skel : f->skel;
		struct usdt_manager *man = m ? f->perf_man : f->man;
		usdt_print_fn_t old;
		struct usdt_link *l;

		unlink(link);
		assert_int_equal(symlink(a, link), 0);
		race_link = link;
		race_victim = b;
		old = usdt_set_print(count_and_race);
		l = attach(man, skel->progs.on_usdt, -1, link, "tf", "fire",
			   NULL);
		usdt_set_print(old);
		assert_null(race_link);		/* the swap happened */
		reset(skel);
		firer_fire(&victim);
		firer_fire(&target);
		assert_int_equal(hits_of(skel, target.pid), 1);
		assert_int_equal(hits_of(skel, victim.pid), 0);
		assert_int_equal(usdt_link__destroy(l), 0);
	}
	firer_reap(&target);
	firer_reap(&victim);
}

/* ---------------------------------------------------------------------- */
/* Processes and the files they run                                       */

/* Attaching to the file at path for process pid is refused with ESRCH (it
 * runs another file of that name), in both modes, leaving nothing. */
static void refused_for(struct fix *f, pid_t pid, const char *path,
			const char *provider)
{
	int ip;

	for (ip = 0; ip < 2; ip++) {
		USDT_OPTS(usdt_attach_opts, o, .force_ip_map = ip);

		errno = 0;
		assert_null(usdt_manager__attach(f->man,
						 f->skel->progs.on_usdt, pid,
						 path, provider, "fire", &o));
		assert_int_equal(errno, ESRCH);
		assert_int_equal(f->man->store->specs.live_cnt, 0);
	}
}

/*
 * The program a process runs is replaced on disk (an upgrade): attaching
 * to the path for that pid must fail clearly, in both modes; the old file
 * is still reachable through /proc/PID/exe and /proc/PID/map_files/.
 */
static void test_replaced_binary(void **state)
{
	struct fix *f = *state;
	char c[128], exe[64], mapped[4096];
	struct firer fr;
	int ip;

	path_in(c, sizeof(c), "c");
	copy_self(c);
	fr = spawn_firer(c);
	copy_self(c);		/* replaced: a new inode at the same path */
	snprintf(exe, sizeof(exe), "/proc/%d/exe", fr.pid);
	/* The resolver finds the mapped file, not the new one. */
	assert_int_equal(usdt_resolve_path(fr.pid, "c", mapped,
					   sizeof(mapped)), 0);
	assert_true(!strncmp(mapped, "/proc/", 6));
	assert_non_null(strstr(mapped, "/map_files/"));
	for (ip = 0; ip < 2; ip++) {
		USDT_OPTS(usdt_attach_opts, o, .force_ip_map = ip);
		const char *paths[] = { exe, mapped };
		size_t i;

		errno = 0;
		assert_null(usdt_manager__attach(f->man, f->skel->progs.on_usdt,
						 fr.pid, c, "tf", "fire", &o));
		assert_int_equal(errno, ESRCH);
		for (i = 0; i < 2; i++) {
			struct usdt_link *l;

			reset(f->skel);
			l = attach(f->man, f->skel->progs.on_usdt, fr.pid,
				   paths[i], "tf", "fire", &o);
			firer_fire(&fr);
			assert_int_equal(hits_of(f->skel, fr.pid), 1);
			assert_int_equal(f->skel->bss->hits[0].rc[0], 0);
			assert_int_equal(f->skel->bss->hits[0].args[0], 'x');
			assert_int_equal(usdt_link__destroy(l), 0);
		}
	}
	firer_reap(&fr);
}

/*
 * Another install of the program the process runs, named by a symlink of
 * another name (/usr/bin/python3 -> python3.11, for a process that runs
 * a python3.11 of its own): refused in both modes, as a replaced file
 * is, by the name the symlink leads to; the process's own file attaches.
 */
static void test_other_install_by_symlink(void **state)
{
	struct fix *f = *state;
	char c[128], dir[128], other[160], link[160];
	struct firer fr;
	struct usdt_link *l;

	path_in(c, sizeof(c), "prog");
	copy_self(c);
	path_in(dir, sizeof(dir), "install2");
	assert_int_equal(mkdir(dir, 0755), 0);
	snprintf(other, sizeof(other), "%s/prog", dir);
	snprintf(link, sizeof(link), "%s/alias", dir);
	copy_self(other);
	assert_int_equal(symlink("prog", link), 0);
	fr = spawn_firer(c);
	refused_for(f, fr.pid, link, "tf");
	l = attach(f->man, f->skel->progs.on_usdt, fr.pid, c, "tf", "fire",
		   NULL);
	reset(f->skel);
	firer_fire(&fr);
	assert_int_equal(hits_of(f->skel, fr.pid), 1);
	assert_int_equal(usdt_link__destroy(l), 0);
	firer_reap(&fr);
}

/*
 * `usdt list -p` shows the probes of a file the process maps but that was
 * deleted since (read through /proc/PID/map_files/).
 */
static void test_list_deleted_mapped(void **state)
{
	char d[128], pid[16], want[160];
	struct run_result r;
	size_t size;
	void *map;

	path_in(d, sizeof(d), "d");
	map = map_copy_self(d, &size);
	assert_int_equal(unlink(d), 0);
	snprintf(pid, sizeof(pid), "%d", (int)getpid());
	assert_int_equal(run_tool(&r, "list", "-p", pid, "tf:fire"), 0);
	snprintf(want, sizeof(want), "%s (deleted) (%s)\ntf:fire ", d,
		 usdt__arch_host()->name);
	if (!strstr(r.out, want))
		fail_msg("no '%s' in:\n%s", want, r.out);
	run_result_free(&r);
	munmap(map, size);
}

/*
 * `usdt list -p` and `usdt trace -p` open each mapped file once: the
 * descriptor checked to be the mapped file is the one read (and given to
 * the kernel), never the file its path reaches a moment later. Counted by
 * inotify on a private copy that nothing else opens.
 */
static void test_mapped_file_opened_once(void **state)
{
	char d[128], pid[16];
	struct run_result r;
	size_t size;
	void *map;
	int in;

	(void)state;
	path_in(d, sizeof(d), "once");
	map = map_copy_self(d, &size);
	in = opens_watch(d);
	assert_true(in >= 0);
	snprintf(pid, sizeof(pid), "%d", (int)getpid());
	assert_int_equal(run_tool(&r, "list", "-p", pid, "tf:fire"), 0);
	if (!strstr(r.out, "tf:fire "))
		fail_msg("no tf:fire in:\n%s", r.out);
	run_result_free(&r);
	assert_int_equal(opens_seen(in), 1);
	assert_int_equal(run_tool(&r, "trace", "-q", "-p", pid, "-d", "0.1",
				  d, "tf:fire"), 0);
	run_result_free(&r);
	assert_int_equal(opens_seen(in), 1);
	close(in);
	munmap(map, size);
	unlink(d);
}

/*
 * A process chrooted in our mount namespace (chroot, unshare --root): its
 * maps show its files by our paths, which its /proc/PID/root/ does not
 * reach. This one maps a file from outside its root (mapped before the
 * chroot): the resolver finds it through /proc/PID/map_files/ only, and
 * never by our path, which the process's user might have pointed
 * elsewhere (test_trace's test_chrooted_links_stay_inside).
 */
static void test_resolve_chrooted(void **state)
{
	char root[128], self[4096], got[4096];
	int up[2], down[2];
	ssize_t n;
	pid_t pid;
	char c;

	(void)state;
	n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	assert_true(n > 0);
	self[n] = '\0';
	path_in(root, sizeof(root), "empty_root");
	assert_int_equal(mkdir(root, 0755), 0);
	assert_int_equal(pipe2(up, O_CLOEXEC), 0);
	assert_int_equal(pipe2(down, O_CLOEXEC), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (!pid) {
		/* Our end of down[] closed, the read ends when the test's is. */
		close(down[1]);
		if (chroot(root) || chdir("/") || write(up[1], "r", 1) != 1)
			_exit(1);
		_exit(read(down[0], &c, 1) < 0);
	}
	close(up[1]);
	close(down[0]);
	assert_int_equal(read(up[0], &c, 1), 1);
	assert_int_equal(usdt_resolve_path(pid, strrchr(self, '/') + 1, got,
					   sizeof(got)), 0);
	snprintf(self, sizeof(self), "/proc/%d/map_files/", (int)pid);
	assert_int_equal(strncmp(got, self, strlen(self)), 0);
	close(down[1]);
	assert_int_equal(waitpid(pid, NULL, 0), pid);
	close(up[0]);
	rmdir(root);
}

static void on_alarm(int sig)
{
	(void)sig;
	fail_msg("blocked on a FIFO");
}

/*
 * A FIFO named like a library first on LD_LIBRARY_PATH: `usdt list` and
 * an attach by bare name pass over it without blocking (they hung).
 */
static void test_fifo_on_library_path(void **state)
{
	struct fix *f = *state;
	char fifo[128], *old = usdt_test_env_save("LD_LIBRARY_PATH");
	struct run_result r;

	path_in(fifo, sizeof(fifo), "libzzz.so");
	assert_int_equal(mkfifo(fifo, 0600), 0);
	setenv("LD_LIBRARY_PATH", tmp_dir, 1);
	signal(SIGALRM, on_alarm);
	alarm(20);
	assert_int_equal(run_tool(&r, "list", "libzzz.so"), 1);
	assert_non_null(strstr(r.err, "libzzz.so"));
	run_result_free(&r);
	errno = 0;
	assert_null(usdt_manager__attach(f->man, f->skel->progs.on_usdt, -1,
					 "libzzz.so", "tf", "fire", NULL));
	assert_int_equal(errno, ENOENT);
	/* Named by its path: refused, not opened for reading. */
	errno = 0;
	assert_null(usdt_manager__attach(f->man, f->skel->progs.on_usdt, -1,
					 fifo, "tf", "fire", NULL));
	assert_int_equal(errno, ENOEXEC);
	alarm(0);
	usdt_test_env_restore("LD_LIBRARY_PATH", old);
	assert_int_equal(unlink(fifo), 0);
}

/* A process that has exited and not been reaped has nothing to probe. */
static void test_zombie(void **state)
{
	struct fix *f = *state;
	char stat[64], buf[256];
	pid_t pid = fork();
	int tries, ip;
	FILE *s;

	assert_true(pid >= 0);
	if (pid == 0)
		_exit(0);
	snprintf(stat, sizeof(stat), "/proc/%d/stat", pid);
	for (tries = 0; tries < 1000; tries++) {
		s = fopen(stat, "r");
		assert_non_null(s);
		assert_non_null(fgets(buf, sizeof(buf), s));
		fclose(s);
		if (strstr(buf, ") Z "))
			break;
		usleep(1000);
	}
	assert_true(tries < 1000);
	for (ip = 0; ip < 2; ip++) {
		USDT_OPTS(usdt_attach_opts, o, .force_ip_map = ip);

		errno = 0;
		assert_null(usdt_manager__attach(f->man, f->skel->progs.on_usdt,
						 pid, "/proc/self/exe", "tf",
						 "fire", &o));
		assert_int_equal(errno, ESRCH);
	}
	assert_int_equal(waitpid(pid, NULL, 0), pid);
	assert_int_equal(f->man->store->specs.live_cnt, 0);
}

/*
 * A read-only mapping of the same file, placed below its code: IP-map
 * mode must key the IP by the executable mapping.
 */
static void test_ip_map_uses_exec_mapping(void **state)
{
	struct fix *f = *state;
	USDT_OPTS(usdt_attach_opts, o, .force_ip_map = true);
	struct usdt_link *l;
	struct stat st;
	void *low;
	int fd = open("/proc/self/exe", O_RDONLY | O_CLOEXEC);

	assert_true(fd >= 0);
	assert_int_equal(fstat(fd, &st), 0);
	low = mmap((void *)0x10000000, (size_t)st.st_size, PROT_READ,
		   MAP_PRIVATE | MAP_FIXED_NOREPLACE, fd, 0);
	assert_true(low != MAP_FAILED);
	close(fd);
	reset(f->skel);
	l = attach(f->man, f->skel->progs.on_usdt, 0, "/proc/self/exe", "tf",
		   "fire", &o);
	fire(4321);
	assert_int_equal(hits(f->skel), 1);
	assert_int_equal(f->skel->bss->hits[0].rc[0], 0);
	assert_int_equal(f->skel->bss->hits[0].args[0], 4321);
	assert_int_equal(usdt_link__destroy(l), 0);
	munmap(low, (size_t)st.st_size);
}

/* ---------------------------------------------------------------------- */
/* A process on overlayfs                                                 */

/*
 * An overlay at tmp_dir/ovl/merged, its lower layer holding a copy of this
 * program ("ofirer") and of libusdttest.so, mounted in a mount namespace
 * of our own, so that even a crash leaves no mount behind; the teardown
 * unmounts it in any case.
 */
static char ovl_merged[160];

static void ovl_path(char *out, size_t sz, const char *layer,
		     const char *name)
{
	snprintf(out, sz, "%s/ovl/%s%s%s", tmp_dir, layer, *name ? "/" : "",
		 name);
}

/* Mounts from here on are ours alone, and go when this process does. */
static void private_mounts(void)
{
	assert_int_equal(unshare(CLONE_NEWNS), 0);
	assert_int_equal(usdt_test_private_mount(tmp_dir), 0);
}

static int ovl_setup(void **state)
{
	char opts[512], lower[128], upper[128], work[128], p[160], cmd[512];
	const char *layers[] = { "", "lower", "upper", "work", "merged" };
	size_t i;

	(void)state;
	ovl_merged[0] = '\0';
	for (i = 0; i < USDT__ARRAY_SIZE(layers); i++) {
		ovl_path(p, sizeof(p), layers[i], "");
		assert_int_equal(mkdir(p, 0755), 0);
	}
	ovl_path(p, sizeof(p), "lower", "ofirer");
	copy_self(p);
	ovl_path(p, sizeof(p), "lower", "libusdttest.so");
	snprintf(cmd, sizeof(cmd), "cp '%s' '%s'", TESTLIB, p);
	assert_int_equal(system(cmd), 0);
	private_mounts();
	ovl_path(lower, sizeof(lower), "lower", "");
	ovl_path(upper, sizeof(upper), "upper", "");
	ovl_path(work, sizeof(work), "work", "");
	ovl_path(p, sizeof(p), "merged", "");
	snprintf(opts, sizeof(opts), "lowerdir=%s,upperdir=%s,workdir=%s",
		 lower, upper, work);
	if (mount("overlay", p, "overlay", 0, opts)) {
		print_message("SKIP: cannot mount an overlay: %s\n",
			      strerror(errno));
		return 0;
	}
	snprintf(ovl_merged, sizeof(ovl_merged), "%s", p);
	return 0;
}

static int ovl_teardown(void **state)
{
	char cmd[160];

	(void)state;
	if (ovl_merged[0])
		assert_int_equal(umount2(ovl_merged, MNT_DETACH), 0);
	ovl_merged[0] = '\0';
	snprintf(cmd, sizeof(cmd), "rm -rf %s/ovl", tmp_dir);
	assert_int_equal(system(cmd), 0);
	return 0;
}

/* The kernel's version, as major * 1000 + minor. */
static int kernel_version(void)
{
	struct utsname u;
	int major = 0, minor = 0;

	assert_int_equal(uname(&u), 0);
	assert_int_equal(sscanf(u.release, "%d.%d", &major, &minor), 2);
	return major * 1000 + minor;
}

/* The device and inode pid's maps show for its executable mapping of a
 * file named name. */
static void exec_mapping_id(pid_t pid, const char *name, dev_t *dev,
			    ino_t *ino)
{
	struct usdt__mapping m;
	char *line = NULL;
	size_t cap = 0;
	bool found = false;
	FILE *f = usdt__maps_open(pid);

	assert_non_null(f);
	while (!found && usdt__maps_next(f, &line, &cap, &m) > 0)
		found = m.exec && !strcmp(strrchr(m.path, '/') + 1, name);
	assert_true(found);
	*dev = m.dev;
	*ino = m.ino;
	fclose(f);
	free(line);
}

/*
 * What pid's maps show for its executable mapping of a file named name:
 * the overlay's device and inode (what fstat() on the merged path gives),
 * or the lower layer's, which Linux before 6.8 shows (the mapped file is
 * the lower one). The guests' 6.1 kernels must show the lower one: that
 * is the case these tests are for.
 */
static bool check_maps_shows(pid_t pid, const char *name)
{
	struct stat ovl, low;
	char p[160];
	bool lower;
	dev_t dev;
	ino_t ino;

	ovl_path(p, sizeof(p), "merged", name);
	assert_int_equal(stat(p, &ovl), 0);
	ovl_path(p, sizeof(p), "lower", name);
	assert_int_equal(stat(p, &low), 0);
	assert_true(ovl.st_dev != low.st_dev);
	exec_mapping_id(pid, name, &dev, &ino);
	lower = dev == low.st_dev && ino == low.st_ino;
	print_message("maps shows %s of the %s\n", name,
		      lower ? "lower layer" : "overlay");
	if (!lower)
		assert_true(dev == ovl.st_dev && ino == ovl.st_ino);
	/* 6.6 and 6.7 may have it backported. */
	if (kernel_version() < 6006)
		assert_true(lower);
	if (kernel_version() >= 6008)
		assert_false(lower);
	return lower;
}

/*
 * Attach to fr by path (with pid), fire once, check the hit: tf:fire's
 * argument, or (lib) testlib:fire's three, the second and third read from
 * the library's memory (%rip-relative on x86_64): n, its calls so far
 * plus 1000, and -77.
 */
static void fire_by_path(struct fix *f, const struct firer *fr,
			 const char *path, bool lib, bool ip, long n)
{
	USDT_OPTS(usdt_attach_opts, o, .force_ip_map = ip);
	struct usdt_link *l;
	struct usdt_test_hit *h = &f->skel->bss->hits[0];

	reset(f->skel);
	l = attach(f->man, f->skel->progs.on_usdt, fr->pid, path,
		   lib ? "testlib" : "tf", "fire", &o);
	firer_fire(fr);
	assert_int_equal(hits_of(f->skel, fr->pid), 1);
	assert_int_equal(h->arg_cnt, lib ? 3 : 1);
	assert_int_equal(h->rc[0], 0);
	assert_int_equal(h->args[0], 'x');
	if (lib) {
		assert_int_equal(h->rc[1], 0);
		assert_int_equal(h->args[1], n);
		assert_int_equal(h->rc[2], 0);
		assert_int_equal(h->args[2], -77);
	}
	assert_int_equal(usdt_link__destroy(l), 0);
}

/*
 * fr runs a program (and with lib, has dlopen()ed the library at path):
 * attach to the file at path by the name its maps show, by that path and
 * through /proc/PID/root, with cookies and with the IP map, and the probe
 * fires with its arguments.
 */
static void attach_each(struct fix *f, const struct firer *fr,
			const char *path, bool lib)
{
	const char *name = strrchr(path, '/') + 1;
	char resolved[4096], root[4096];
	const char *paths[] = { name, path, root };
	long n = 1000;
	size_t i;
	int ip;

	/* The name resolves to the mapping itself, the file the process
	 * runs, with no path looked up. */
	snprintf(root, sizeof(root), "/proc/%d/map_files/", fr->pid);
	assert_int_equal(usdt_resolve_path(fr->pid, name, resolved,
					   sizeof(resolved)), 0);
	assert_int_equal(strncmp(resolved, root, strlen(root)), 0);
	snprintf(root, sizeof(root), "/proc/%d/root%s", fr->pid, path);
	for (ip = 0; ip < 2; ip++)
		for (i = 0; i < USDT__ARRAY_SIZE(paths); i++)
			fire_by_path(f, fr, paths[i], lib, ip, ++n);
}

/*
 * A process runs a program from the overlay (and with lib, dlopen()s a
 * library from it): attach_each().
 */
static void ovl_attach_each(struct fix *f, bool lib)
{
	const char *name = lib ? "libusdttest.so" : "ofirer";
	char exe[160], path[160];
	struct firer fr;

	if (!ovl_merged[0])
		skip();
	ovl_path(exe, sizeof(exe), "merged", "ofirer");
	ovl_path(path, sizeof(path), "merged", name);
	fr = spawn_firer_lib(exe, lib ? path : NULL);
	check_maps_shows(fr.pid, name);
	attach_each(f, &fr, path, lib);
	firer_reap(&fr);
}

static void test_overlay_exe(void **state)
{
	ovl_attach_each(*state, false);
}

static void test_overlay_lib(void **state)
{
	ovl_attach_each(*state, true);
}

/*
 * The program is replaced in the merged directory while the process runs
 * the old one (a copy-up: the new file is in the upper layer). The merged
 * path is another file now and is refused; the name finds the old one
 * through /proc/PID/map_files/.
 */
static void test_overlay_replaced(void **state)
{
	struct fix *f = *state;
	char path[160], resolved[4096];
	struct firer fr;
	int ip;

	if (!ovl_merged[0])
		skip();
	ovl_path(path, sizeof(path), "merged", "ofirer");
	fr = spawn_firer(path);
	copy_self(path);
	assert_int_equal(usdt_resolve_path(fr.pid, "ofirer", resolved,
					   sizeof(resolved)), 0);
	assert_non_null(strstr(resolved, "/map_files/"));
	for (ip = 0; ip < 2; ip++) {
		USDT_OPTS(usdt_attach_opts, o, .force_ip_map = ip);

		errno = 0;
		assert_null(usdt_manager__attach(f->man,
						 f->skel->progs.on_usdt,
						 fr.pid, path, "tf", "fire",
						 &o));
		assert_int_equal(errno, ESRCH);
		fire_by_path(f, &fr, "ofirer", false, ip, 0);
	}
	firer_reap(&fr);
}

/*
 * `usdt trace -p PID NAME` of a process that runs the program at path: the
 * tool resolves the name in the process's maps and prints each hit with
 * its argument.
 *
 * Not run here: the same without NAME or without "tf:fire" (all 61 probes
 * of the firer, 60 of them tf:nNN in the page of tf:fire). On s390x (6.1
 * per-site and 6.12 uprobe_multi alike) the firer, fed every 2 ms, dies
 * with SIGILL at tf:fire's nop (its uprobe breakpoint 0x0002 executed and
 * not claimed) while the tool detaches. Offsets are right; it takes hits
 * during the detach and other breakpoints removed from the same page after
 * tf:fire's (tf:fire alone, or 61 probes detached from another file: no
 * SIGILL). s390's illegal_op() sends SIGILL when the opcode it reads back
 * is no longer 0x0002 (x86 and arm64 restart): a kernel (or QEMU TCG)
 * race, not settled yet.
 */
/*
 * `usdt trace -p PID -n 3 TARGET tf:fire` of fr, which fires until the
 * tool has its three hits; each shows file name.
 */
static void trace_fired(const struct firer *fr, const char *target,
			const char *name)
{
	char pid[16], file[16], probe[16], c;
	unsigned long long ts;
	struct run_result r;
	const char *line;
	pid_t feeder;
	long arg;
	int p;

	/* Fires until killed: the tool attaches at some point meanwhile. */
	feeder = fork();
	assert_true(feeder >= 0);
	if (!feeder) {
		while (write(fr->go, "x", 1) == 1 &&
		       read(fr->done, &c, 1) == 1)
			usleep(2000);
		_exit(0);
	}
	snprintf(pid, sizeof(pid), "%d", (int)fr->pid);
	run_tool(&r, "trace", "-p", pid, "-n", "3", target, "tf:fire");
	kill(feeder, SIGKILL);
	assert_int_equal(waitpid(feeder, NULL, 0), feeder);
	if (r.status)
		fail_msg("status %d, stderr:\n%s", r.status, r.err);
	assert_int_equal(count_lines(r.out), 3);
	for (line = r.out; *line; line = strchr(line, '\n') + 1) {
		assert_int_equal(sscanf(line, "%llu %d %*d %15s %15s %ld", &ts,
					&p, file, probe, &arg), 5);
		assert_int_equal(p, fr->pid);
		assert_string_equal(file, name);
		assert_string_equal(probe, "tf:fire");
		assert_int_equal(arg, 'x');
	}
	run_result_free(&r);
}

/* `usdt trace -p PID NAME tf:fire` of path run as a firer. */
static void trace_by_pid(const char *path)
{
	const char *name = strrchr(path, '/') + 1;
	struct firer fr = spawn_firer(path);

	trace_fired(&fr, name, name);
	firer_reap(&fr);
}

/* `usdt trace -p PID NAME` of a process on the overlay. */
static void test_overlay_trace(void **state)
{
	char path[160], lower[160], pid[16];
	struct run_result r;
	struct firer fr;

	(void)state;
	if (!ovl_merged[0])
		skip();
	ovl_path(path, sizeof(path), "merged", "ofirer");
	trace_by_pid(path);

	/* Where maps shows the lower layer's file (before 6.8), that is the
	 * file mapped, traced by that path too. Elsewhere it is not the one
	 * the process maps: said so, not "No such process" (it runs). */
	ovl_path(lower, sizeof(lower), "lower", "ofirer");
	fr = spawn_firer(path);
	if (check_maps_shows(fr.pid, "ofirer")) {
		trace_fired(&fr, lower, "ofirer");
		firer_reap(&fr);
		return;
	}
	snprintf(pid, sizeof(pid), "%d", (int)fr.pid);
	run_tool(&r, "trace", "-p", pid, "-n", "1", lower, "tf:fire");
	firer_reap(&fr);
	assert_int_equal(r.status, 1);
	if (!strstr(r.err, "the process does not run this file: it maps another of that name"))
		fail_msg("stderr:\n%s", r.err);
	run_result_free(&r);
}

/* ---------------------------------------------------------------------- */
/* A process on btrfs                                                     */

/*
 * A btrfs file system at tmp_dir/btrfs, made at build time (BTRFS_IMG: a
 * guest has no mkfs.btrfs) and unpacked here, on a loop device that goes
 * away with its last user, mounted in a mount namespace of our own: even
 * a crash leaves neither mount nor loop device behind. It is mounted once
 * (each copy of the image has its UUID, which Linux 6.1 mounts only once
 * at a time, and the manager keeps files of it open) and unmounted by the
 * group's teardown. btrfs_fill() makes subvolumes aN and bN for test N,
 * each with a copy of this program ("bfirer") and of libusdttest.so,
 * copied in the same order into a fresh subvolume: the copies have the
 * same inode numbers, and maps shows the same device (the file system's)
 * for both.
 */
static bool btrfs_tried;
static unsigned int btrfs_test;

/* Subvolume subvol ("a", "b") of this test. */
static void btrfs_path(char *out, size_t sz, const char *subvol,
		       const char *name)
{
	snprintf(out, sz, "%s/btrfs/%s%u/%s", tmp_dir, subvol, btrfs_test,
		 name);
}

/* The gzip'd image src unpacked at dst, its zero blocks left as holes. */
static void unpack_sparse(const char *src, const char *dst)
{
	static const char zero[65536];
	char buf[sizeof(zero)];
	gzFile in = gzopen(src, "rb");
	off_t off = 0;
	int out, n;

	if (!in)
		fail_msg("cannot open %s: %s", src, strerror(errno));
	out = open(dst, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	assert_true(out >= 0);
	while ((n = gzread(in, buf, sizeof(buf))) > 0) {
		if (memcmp(buf, zero, (size_t)n))
			assert_int_equal(pwrite(out, buf, (size_t)n, off), n);
		off += n;
	}
	assert_int_equal(n, 0);
	assert_int_equal(ftruncate(out, off), 0);
	close(out);
	gzclose(in);
}

/*
 * The file img on a free loop device that detaches itself once nothing
 * holds it (autoclear; the mount will): its fd, kept until the mount, and
 * its name in dev; or -errno.
 */
static int loop_attach(const char *img, char *dev, size_t sz)
{
	struct loop_info64 info = { .lo_flags = LO_FLAGS_AUTOCLEAR };
	int ctl, n, tries, lfd = -1, err = -EBUSY;
	int ifd = open(img, O_RDWR | O_CLOEXEC);

	assert_true(ifd >= 0);
	ctl = open("/dev/loop-control", O_RDWR | O_CLOEXEC);
	if (ctl < 0)
		err = -errno;
	/* Another process may take the free device first. */
	for (tries = 0; ctl >= 0 && tries < 10 && err == -EBUSY; tries++) {
		n = ioctl(ctl, LOOP_CTL_GET_FREE);
		snprintf(dev, sz, "/dev/loop%d", n);
		lfd = n < 0 ? -1 : open(dev, O_RDWR | O_CLOEXEC);
		err = lfd < 0 || ioctl(lfd, LOOP_SET_FD, ifd) ? -errno : 0;
		if (err && lfd >= 0)
			close(lfd);
	}
	if (!err && ioctl(lfd, LOOP_SET_STATUS64, &info)) {
		err = -errno;
		ioctl(lfd, LOOP_CLR_FD, 0);
		close(lfd);
	}
	if (ctl >= 0)
		close(ctl);
	close(ifd);
	return err ? err : lfd;
}

static int btrfs_setup(void **state)
{
	char img[128], dev[32], p[160];
	int lfd;

	(void)state;
	if (btrfs_tried)
		return 0;
	btrfs_tried = true;
	path_in(img, sizeof(img), "btrfs.img");
	unpack_sparse(BTRFS_IMG, img);
	path_in(p, sizeof(p), "btrfs");
	assert_int_equal(mkdir(p, 0755), 0);
	private_mounts();
	lfd = loop_attach(img, dev, sizeof(dev));
	if (lfd < 0) {
		print_message("SKIP: no loop device: %s\n", strerror(-lfd));
		return 0;
	}
	if (mount(dev, p, "btrfs", 0, NULL)) {
		print_message("SKIP: cannot mount btrfs: %s\n", strerror(errno));
		close(lfd);
		return 0;
	}
	close(lfd);
	snprintf(btrfs_dir, sizeof(btrfs_dir), "%s", p);
	return 0;
}

/* Subvolumes a and b of a new test, with their copies (see btrfs_dir). */
static void btrfs_fill(void)
{
	struct btrfs_ioctl_vol_args args;
	const char *subvols[] = { "a", "b" };
	char p[160], cmd[512];
	size_t i;
	int fd;

	if (!btrfs_dir[0])
		skip();
	btrfs_test++;
	fd = open(btrfs_dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	assert_true(fd >= 0);
	for (i = 0; i < USDT__ARRAY_SIZE(subvols); i++) {
		memset(&args, 0, sizeof(args));
		snprintf(args.name, sizeof(args.name), "%s%u", subvols[i],
			 btrfs_test);
		assert_int_equal(ioctl(fd, BTRFS_IOC_SUBVOL_CREATE, &args), 0);
		btrfs_path(p, sizeof(p), subvols[i], "bfirer");
		copy_self(p);
		btrfs_path(p, sizeof(p), subvols[i], "libusdttest.so");
		snprintf(cmd, sizeof(cmd), "cp '%s' '%s'", TESTLIB, p);
		assert_int_equal(system(cmd), 0);
	}
	close(fd);
}

/*
 * The copies of name in a and b have the same inode number and different
 * devices, and pid's maps show a's executable mapping with the file
 * system's device, not a's (so b's copy would show the same).
 */
static void check_btrfs_maps(pid_t pid, const char *name)
{
	struct stat a, b;
	char p[160];
	dev_t dev;
	ino_t ino;

	btrfs_path(p, sizeof(p), "a", name);
	assert_int_equal(stat(p, &a), 0);
	btrfs_path(p, sizeof(p), "b", name);
	assert_int_equal(stat(p, &b), 0);
	assert_int_equal(a.st_ino, b.st_ino);
	assert_true(a.st_dev != b.st_dev);
	exec_mapping_id(pid, name, &dev, &ino);
	assert_int_equal(ino, a.st_ino);
	assert_true(dev != a.st_dev && dev != b.st_dev);
}

/*
 * A process runs a's program (and with lib, dlopen()s a's library):
 * attach_each() to a's file, and b's copy, which shows the same device and
 * inode in maps, is refused for that process in both modes.
 */
static void btrfs_attach_each(struct fix *f, bool lib)
{
	const char *name = lib ? "libusdttest.so" : "bfirer";
	char exe[160], path[160], other[160];
	struct firer fr;

	btrfs_fill();
	btrfs_path(exe, sizeof(exe), "a", "bfirer");
	btrfs_path(path, sizeof(path), "a", name);
	btrfs_path(other, sizeof(other), "b", name);
	fr = spawn_firer_lib(exe, lib ? path : NULL);
	check_btrfs_maps(fr.pid, name);
	attach_each(f, &fr, path, lib);
	refused_for(f, fr.pid, other, lib ? "testlib" : "tf");
	firer_reap(&fr);
}

static void test_btrfs_exe(void **state)
{
	btrfs_attach_each(*state, false);
}

static void test_btrfs_lib(void **state)
{
	btrfs_attach_each(*state, true);
}

/*
 * An overlay whose lower layer is a (upper and work in b), at
 * btrfs_dir/mergedN, so that the teardown's lazy unmount takes it too. A
 * process runs its program: attach_each() to the merged file, and b's
 * copy is refused. Before Linux 6.8 maps shows the lower file, with the
 * file system's device, as for b's copy.
 */
static void test_btrfs_overlay(void **state)
{
	struct fix *f = *state;
	char opts[700], lower[160], upper[160], work[160], merged[200],
		path[240], other[160];
	struct firer fr;

	btrfs_fill();
	btrfs_path(lower, sizeof(lower), "a", "");
	btrfs_path(upper, sizeof(upper), "b", "up");
	btrfs_path(work, sizeof(work), "b", "work");
	snprintf(merged, sizeof(merged), "%s/merged%u", btrfs_dir,
		 btrfs_test);
	assert_int_equal(mkdir(upper, 0755), 0);
	assert_int_equal(mkdir(work, 0755), 0);
	assert_int_equal(mkdir(merged, 0755), 0);
	snprintf(opts, sizeof(opts), "lowerdir=%s,upperdir=%s,workdir=%s",
		 lower, upper, work);
	if (mount("overlay", merged, "overlay", 0, opts)) {
		print_message("SKIP: cannot mount an overlay: %s\n",
			      strerror(errno));
		skip();
	}
	snprintf(path, sizeof(path), "%s/bfirer", merged);
	btrfs_path(other, sizeof(other), "b", "bfirer");
	fr = spawn_firer(path);
	attach_each(f, &fr, path, false);
	refused_for(f, fr.pid, other, "tf");
	firer_reap(&fr);
	assert_int_equal(umount2(merged, MNT_DETACH), 0);
}

static bool said_cannot_tell;

static int note_cannot_tell(enum usdt_print_level level, const char *fmt,
			    va_list ap)
{
	(void)level;
	(void)ap;
	said_cannot_tell |= strstr(fmt, "cannot tell whether") != NULL;
	return 0;
}

/*
 * Without CAP_SYS_ADMIN and CAP_CHECKPOINT_RESTORE, /proc/PID/map_files/
 * cannot be read, and a's file cannot be told from b's copy in maps: an
 * attach by pid fails with EPERM and leaves nothing, rather than take
 * either; the resolver, which only names a file, takes the one at the
 * path the process sees (in a child that drops them; it says how it ended
 * by its exit status).
 */
static void test_btrfs_no_cap(void **state)
{
	struct __user_cap_header_struct h = { _LINUX_CAPABILITY_VERSION_3, 0 };
	struct __user_cap_data_struct d[2];
	struct fix *f = *state;
	char path[160], want[192], got[4096];
	struct firer fr;
	int status;
	pid_t child;

	btrfs_fill();
	btrfs_path(path, sizeof(path), "a", "bfirer");
	fr = spawn_firer(path);
	child = fork();
	assert_true(child >= 0);
	if (!child) {
		if (syscall(SYS_capget, &h, d))
			_exit(2);
		d[CAP_SYS_ADMIN / 32].effective &= ~(1u << (CAP_SYS_ADMIN % 32));
		d[CAP_CHECKPOINT_RESTORE / 32].effective &=
			~(1u << (CAP_CHECKPOINT_RESTORE % 32));
		if (syscall(SYS_capset, &h, d))
			_exit(3);
		/* The resolver takes the path the process sees, which maps
		 * shows by its device and inode: nothing can tell more. */
		snprintf(want, sizeof(want), "/proc/%d/root%s", (int)fr.pid,
			 path);
		if (usdt_resolve_path(fr.pid, "bfirer", got, sizeof(got)) ||
		    strcmp(got, want))
			_exit(8);
		usdt_set_print(note_cannot_tell);
		/* A child attaches nothing through its parent's manager:
		 * this one takes it over (the parent waits). */
		f->man->store->owner = getpid();
		errno = 0;
		if (usdt_manager__attach(f->man, f->skel->progs.on_usdt,
					 fr.pid, path, "tf", "fire", NULL))
			_exit(4);
		_exit(errno != EPERM ? 5 : f->man->store->specs.live_cnt ? 6 :
			  !said_cannot_tell ? 7 : 0);
	}
	assert_int_equal(waitpid(child, &status, 0), child);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);
	firer_reap(&fr);
}

/* `usdt trace -p PID NAME` of a process that runs a's program. */
static void test_btrfs_trace(void **state)
{
	char path[160];

	(void)state;
	btrfs_fill();
	btrfs_path(path, sizeof(path), "a", "bfirer");
	trace_by_pid(path);
}

/* ---------------------------------------------------------------------- */
/* Programs, managers and links                                           */

/* A program of another bpf_object would get spec IDs it never reads. */
static void test_program_of_other_object(void **state)
{
	struct fix *f = *state;

	errno = 0;
	assert_null(usdt_manager__attach(f->man, f->perf_skel->progs.on_usdt,
					 -1, "/proc/self/exe", "tf", "fire",
					 NULL));
	assert_int_equal(errno, EINVAL);
	assert_int_equal(f->man->store->specs.live_cnt, 0);
	assert_int_equal(f->perf_man->store->specs.live_cnt, 0);
}

/* Read an int at byte off of the .bss map through its fd. */
static unsigned int bss_read(int fd, size_t off)
{
	static char buf[1 << 20];
	uint32_t key = 0;
	unsigned int v;

	assert_int_equal(bpf_map_lookup_elem(fd, &key, buf), 0);
	memcpy(&v, buf + off, sizeof(v));
	return v;
}

/*
 * The manager is freed and the bpf_object closed while a link lives: the
 * link goes on firing, and destroying it later still gives back its
 * IP-map entries and zeroes its spec, without touching the object.
 */
static void test_links_outlive_manager(void **state)
{
	USDT_OPTS(usdt_attach_opts, o, .force_ip_map = true, .usdt_cookie = 9);
	USDT_OPTS(usdt_manager_opts, mo, .keep_ip_map = true);
	struct usdt_manager *man;
	struct usdt_test *skel = open_loaded(&man, &mo);
	struct usdt_link *l;
	static const struct usdt_spec zero;
	struct usdt_spec spec;
	size_t cnt_off = (size_t)((char *)&skel->bss->hit_cnt -
				  (char *)skel->bss);
	int specs = dup(bpf_map__fd(skel->maps.usdt__specs));
	int head = dup(bpf_map__fd(skel->maps.usdt__spec_head));
	int ips = dup(bpf_map__fd(skel->maps.usdt__ip2spec));
	int bss = dup(bpf_map__fd(skel->maps.bss));
	uint32_t id;

	l = attach(man, skel->progs.on_usdt, 0, "/proc/self/exe", "tf", "fire",
		   &o);
	usdt_manager__free(man);
	usdt_test__destroy(skel);
	fire(1);
	assert_int_equal(bss_read(bss, cnt_off), 1);
	assert_int_equal(ip_cnt(ips), 1);
	assert_int_equal(usdt_link__destroy(l), 0);
	/* The last link gone, its IP-map entry and specs go (the chunks
	 * stay in the outer map, which goes with its last holder). */
	assert_int_equal(ip_cnt(ips), 0);
	for (id = 0; id < 4; id++) {
		assert_int_equal(spec_read(head, specs, id, &spec), 0);
		assert_memory_equal(&spec, &zero, sizeof(spec));
	}
	fire(2);
	assert_int_equal(bss_read(bss, cnt_off), 1);
	close(specs);
	close(head);
	close(ips);
	close(bss);
}

/* Destroy reports the first error it meets, and still undoes the rest. */
static void test_destroy_reports_error(void **state)
{
	struct fix *f = *state;
	USDT_OPTS(usdt_attach_opts, o, .force_ip_map = true);
	int ips;
	struct usdt_link *l;
	long key;

	l = attach(f->man, f->skel->progs.on_usdt, 0, "/proc/self/exe", "tf",
		   "fire", &o);
	ips = inner_fd(bpf_map__fd(f->skel->maps.usdt__ip2spec), 0);
	assert_true(ips >= 0);
	assert_int_equal(bpf_map_get_next_key(ips, NULL, &key), 0);
	assert_int_equal(bpf_map_delete_elem(ips, &key), 0);
	close(ips);
	errno = 0;
	assert_int_equal(usdt_link__destroy(l), -ENOENT);
	assert_int_equal(errno, ENOENT);
	assert_int_equal(f->man->store->specs.live_cnt, 0);
	reset(f->skel);
	fire(3);
	assert_int_equal(hits(f->skel), 0);
}

/* ---------------------------------------------------------------------- */
/* Parse once                                                             */

static void attach_every_name(struct fix *f, const struct usdt_file *file)
{
	struct usdt_link *links[NAME_CNT];
	char name[8];
	int i;

	for (i = 0; i < NAME_CNT; i++) {
		snprintf(name, sizeof(name), "n%02d", i);
		if (file)
			links[i] = usdt_manager__attach_file(
				f->man, f->skel->progs.on_usdt, -1, file, "tf",
				name, NULL);
		else
			links[i] = usdt_manager__attach(
				f->man, f->skel->progs.on_usdt, -1,
				"/proc/self/exe", "tf", name, NULL);
		assert_non_null(links[i]);
		assert_int_equal(usdt_link__site_cnt(links[i]), 1);
	}
	reset(f->skel);
	fire_names();
	assert_int_equal(hits(f->skel), NAME_CNT);
	for (i = 0; i < NAME_CNT; i++)
		assert_int_equal(usdt_link__destroy(links[i]), 0);
}

/* 60 probe names attached one call at a time: one parse of the file. */
static void test_parse_once(void **state)
{
	struct fix *f = *state;
	usdt_print_fn_t old;
	struct usdt_file *file;

	usdt_manager__free(f->man);	/* a fresh manager, nothing kept */
	f->man = usdt_manager__new(f->skel->obj, NULL);
	assert_non_null(f->man);
	parse_cnt = 0;
	old = usdt_set_print(count_and_race);
	attach_every_name(f, NULL);
	assert_int_equal(parse_cnt, 1);

	file = usdt_file__open("/proc/self/exe", NULL);
	assert_non_null(file);
	assert_int_equal(parse_cnt, 2);
	attach_every_name(f, file);
	assert_int_equal(parse_cnt, 2);
	/* A miss, exact or glob. */
	errno = 0;
	assert_null(usdt_manager__attach_file(f->man, f->skel->progs.on_usdt,
					      -1, file, "tf", "nosuch", NULL));
	assert_int_equal(errno, ENOENT);
	assert_null(usdt_manager__attach_file(f->man, f->skel->progs.on_usdt,
					      -1, file, "tf", "n6?", NULL));
	assert_int_equal(errno, ENOENT);
	usdt_set_print(old);
	/* A glob over names: all 60, one link. */
	{
		struct usdt_link *l = usdt_manager__attach_file(
			f->man, f->skel->progs.on_usdt, -1, file, "t?", "n[0-5]*",
			NULL);

		assert_non_null(l);
		assert_int_equal(usdt_link__site_cnt(l), NAME_CNT);
		assert_int_equal(usdt_link__destroy(l), 0);
	}
	usdt_file__close(file);
}

static int broken_said;

static int count_broken(enum usdt_print_level level, const char *fmt,
			va_list ap)
{
	char msg[512];

	if (level != USDT_WARN)
		return 0;
	vsnprintf(msg, sizeof(msg), fmt, ap);
	broken_said += strstr(msg, "tf:broken") != NULL;
	return 0;
}

/*
 * A call site the reader cannot take (trace_fmt_target's tf:broken, 13
 * arguments) is said once where it is met: at usdt_file__open(), which
 * builds every probe, and once by each attach that skips it, not a
 * second time by the attach's own read of the site.
 */
static void test_bad_site_said_once(void **state)
{
	const char *tf = FIXTURE_DIR "/trace_fmt_target";
	struct fix *f = *state;
	struct usdt_file *file;
	struct usdt_link *l;
	usdt_print_fn_t old;
	int i;

	old = usdt_set_print(count_broken);
	broken_said = 0;
	file = usdt_file__open(tf, NULL);
	assert_non_null(file);
	assert_int_equal(broken_said, 1);
	for (i = 0; i < 2; i++) {
		broken_said = 0;
		l = i ? usdt_manager__attach(f->man, f->skel->progs.on_usdt,
					     -1, tf, "tf", "*", NULL) :
			usdt_manager__attach_file(f->man,
						  f->skel->progs.on_usdt, -1,
						  file, "tf", "*", NULL);
		assert_non_null(l);
		assert_int_equal(broken_said, 1);
		assert_int_equal(usdt_link__destroy(l), 0);
	}
	usdt_set_print(old);
	usdt_file__close(file);
}

/* A file read from memory has no file for the kernel. */
static void test_attach_file_needs_fd(void **state)
{
	struct fix *f = *state;
	struct usdt_file *file;
	struct stat st;
	char *img;
	int fd = open("/proc/self/exe", O_RDONLY | O_CLOEXEC);

	errno = 0;
	assert_null(usdt_manager__attach_file(f->man, f->skel->progs.on_usdt,
					      -1, NULL, "tf", "fire", NULL));
	assert_int_equal(errno, EINVAL);
	assert_true(fd >= 0);
	assert_int_equal(fstat(fd, &st), 0);
	img = malloc((size_t)st.st_size);
	assert_non_null(img);
	assert_int_equal(pread(fd, img, (size_t)st.st_size, 0), st.st_size);
	close(fd);
	file = usdt__file_open_mem(img, (size_t)st.st_size, "image");
	free(img);
	assert_non_null(file);
	errno = 0;
	assert_null(usdt_manager__attach_file(f->man, f->skel->progs.on_usdt,
					      -1, file, "tf", "fire", NULL));
	assert_int_equal(errno, EINVAL);
	usdt_file__close(file);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_path_race),
		cmocka_unit_test(test_replaced_binary),
		cmocka_unit_test(test_other_install_by_symlink),
		cmocka_unit_test(test_list_deleted_mapped),
		cmocka_unit_test(test_mapped_file_opened_once),
		cmocka_unit_test(test_resolve_chrooted),
		cmocka_unit_test(test_fifo_on_library_path),
		cmocka_unit_test(test_zombie),
		cmocka_unit_test(test_ip_map_uses_exec_mapping),
		cmocka_unit_test_setup_teardown(test_overlay_exe, ovl_setup,
						ovl_teardown),
		cmocka_unit_test_setup_teardown(test_overlay_lib, ovl_setup,
						ovl_teardown),
		cmocka_unit_test_setup_teardown(test_overlay_replaced,
						ovl_setup, ovl_teardown),
		cmocka_unit_test_setup_teardown(test_overlay_trace, ovl_setup,
						ovl_teardown),
		cmocka_unit_test_setup(test_btrfs_exe, btrfs_setup),
		cmocka_unit_test_setup(test_btrfs_lib, btrfs_setup),
		cmocka_unit_test_setup(test_btrfs_trace, btrfs_setup),
		cmocka_unit_test_setup(test_btrfs_overlay, btrfs_setup),
		cmocka_unit_test_setup(test_btrfs_no_cap, btrfs_setup),
		cmocka_unit_test(test_program_of_other_object),
		cmocka_unit_test(test_links_outlive_manager),
		cmocka_unit_test(test_destroy_reports_error),
		cmocka_unit_test(test_parse_once),
		cmocka_unit_test(test_attach_file_needs_fd),
		cmocka_unit_test(test_bad_site_said_once),
	};

	if ((argc == 2 || argc == 3) && !strcmp(argv[1], "firer"))
		return firer_main(argc == 3 ? argv[2] : NULL);
	usdt_test_require_kernel("kernel/test_file");
	if (!getenv("USDT_LOG_LEVEL"))
		usdt_set_print(NULL);
	return cmocka_run_group_tests_name("file", tests, setup, teardown);
}
