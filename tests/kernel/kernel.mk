# Companions of the kernel tests: a shared library with probes and a
# translation unit with a semaphore.
KTEST_DIR := $(OBJDIR)/tests/kernel

$(KTEST_DIR)/libusdttest.so: tests/kernel/testlib.c
	$(call msg,CC,$@)
	@mkdir -p $(@D)
	$(Q)$(CC) -O2 -g -fPIC -shared -Wl,-soname,libusdttest.so $< -o $@

$(KTEST_DIR)/sema.o: tests/kernel/sema.c
	$(call msg,CC,$@)
	@mkdir -p $(@D)
	$(Q)$(CC) -O2 -g -c $< -o $@

# Semaphores in .bss and .data, outside .probes, at known places.
$(KTEST_DIR)/libsemabss.so: tests/kernel/sema_bss.c
	$(call msg,CC,$@)
	@mkdir -p $(@D)
	$(Q)$(CC) -O2 -g -fPIC -shared -Wl,--sort-section=name \
		-Wl,-soname,libsemabss.so $< -o $@

# Sites whose note is there twice.
$(KTEST_DIR)/dup_sites.o: tests/kernel/dup_sites.S
	$(call msg,AS,$@)
	@mkdir -p $(@D)
	$(Q)$(CC) -c $< -o $@

DEPS_test_attach := $(KTEST_DIR)/libusdttest.so $(KTEST_DIR)/sema.o \
	$(KTEST_DIR)/libsemabss.so $(KTEST_DIR)/dup_sites.o
LDFLAGS_test_attach := $(KTEST_DIR)/sema.o $(KTEST_DIR)/dup_sites.o \
	-L$(KTEST_DIR) -lusdttest \
	-lsemabss \
	-Wl,-rpath,$(abspath $(KTEST_DIR))

# The attach path out of memory: the library's allocations, its mmap()s
# and its map creations fail in turn.
LDFLAGS_test_attach_oom := -Wl,--wrap=malloc -Wl,--wrap=calloc \
	-Wl,--wrap=realloc -Wl,--wrap=mmap -Wl,--wrap=bpf_map_create

# libbpf's flow when a system call fails: the library's calls of the
# kernel (through libbpf), its readlink(), mmap() and fcntl() fail in turn
# (bpf_program__attach_uprobe_multi() is libbpf 1.3's: with an older
# libbpf nothing references it, and the wrap does nothing).
NATIVE_FAIL_WRAPS := bpf_obj_get_info_by_fd bpf_map_lookup_elem \
	bpf_map_update_elem bpf_map_update_batch bpf_map_delete_elem \
	bpf_map_get_next_key bpf_map_create bpf_link_create \
	bpf_link_get_fd_by_id bpf_obj_pin bpf_link__open \
	bpf_program__attach_uprobe_opts bpf_program__attach_uprobe_multi \
	readlink mmap fcntl
DEPS_test_native_fail = $(KTEST_DIR)/libusdttest.so
LDFLAGS_test_native_fail = $(LDFLAGS_test_skel) \
	-DKTEST_LIB_DIR='"$(KTEST_DIR)"' \
	$(foreach f,$(NATIVE_FAIL_WRAPS),-Wl,--wrap=$(f))

# The verifier-cost shapes at each -mcpu, without __TARGET_ARCH_xxx, and
# with a context type the kernel does not take for a global function's
# (as a vmlinux.h of another arch gives). The last -mcpu and -U win over
# BPF_CFLAGS'.
# And at v4 where the BPF compiler has it (clang 18 and later, gcc-bpf
# 14 and later; Debian 12's clang 14 has not): test_verifier then loads
# those too.
SHAPES_V4 := $(shell echo 'int x;' | $(BPF_CC) $(BPF_CC_FLAGS) -mcpu=v4 \
	-x c -c - -o /dev/null 2>/dev/null && echo v4)
SHAPES_OBJS := $(foreach v,v1 v2 v3 $(SHAPES_V4) noarch wrongctx,$(KTEST_DIR)/shapes-$(v).bpf.o)
LDFLAGS_test_verifier := $(if $(SHAPES_V4),-DUSDT_SHAPES_V4)
SHAPES_FLAGS_noarch := -U__TARGET_ARCH_$(BPF_ARCH)
# x86's vmlinux.h has riscv64's context struct; another arch's (make
# vm-check builds with the target's) need not, and no kernel takes a
# struct file for one.
SHAPES_WRONGCTX := $(if $(filter x86,$(BPF_ARCH)),struct user_regs_struct,struct file)
SHAPES_FLAGS_wrongctx := '-D__USDT_CTX=$(SHAPES_WRONGCTX)'
$(KTEST_DIR)/shapes-%.bpf.o: tests/kernel/shapes.bpf.c $(VMLINUX_H) \
		$(wildcard bpf/*.h)
	$(call msg,BPFCC,$@)
	@mkdir -p $(@D)
	$(Q)$(BPF_CC) $(BPF_CFLAGS) $(or $(SHAPES_FLAGS_$*),-mcpu=$*) \
		-c $< -o $@
DEPS_test_verifier := $(SHAPES_OBJS)

# One file from read to attach; it also runs `usdt list -p`, and copies
# libusdttest.so onto an overlay and onto btrfs for a firer to dlopen().
# The btrfs is an empty file system made here (btrfs-progs,
# scripts/deps.sh), so that the guests of make vm-check need no
# mkfs.btrfs; gzip'd, 128 MiB are about 140 KiB, and the test unpacks it
# sparse.
LDFLAGS_test_file = $(TOOL_TEST_DEFS) \
	-DTESTLIB='"$(KTEST_DIR)/libusdttest.so"' \
	-DBTRFS_IMG='"$(KTEST_DIR)/btrfs.img.gz"'
DEPS_test_file = $(TOOL) $(KTEST_DIR)/libusdttest.so $(KTEST_DIR)/btrfs.img.gz \
	$(TRACE_FMT_TARGET)

$(KTEST_DIR)/btrfs.img.gz:
	$(call msg,MKFS,$@)
	@mkdir -p $(@D)
	$(Q)rm -f $@.tmp && truncate -s 128M $@.tmp
	$(Q)PATH="$$PATH:/usr/sbin:/sbin" mkfs.btrfs -q -f $@.tmp >/dev/null 2>&1 || \
		{ echo "mkfs.btrfs $@.tmp failed (btrfs-progs?)" >&2; rm -f $@.tmp; exit 1; }
	$(Q)gzip -9 -c $@.tmp > $@.gz.tmp && rm -f $@.tmp && mv $@.gz.tmp $@

# Skeleton auto-attach: probes in libusdttest.so, found by bare name.
DEPS_test_skel := $(KTEST_DIR)/libusdttest.so
LDFLAGS_test_skel := -L$(KTEST_DIR) -lusdttest -Wl,-rpath,$(abspath $(KTEST_DIR))

# The examples, run as a user runs them.
DEPS_test_examples := $(EXAMPLES_DIR)/hello $(EXAMPLES_DIR)/hello_skel \
	$(EXAMPLES_DIR)/counters $(EXAMPLES_DIR)/target
DEPS_test_link_api := $(DEPS_test_skel)
LDFLAGS_test_link_api := $(LDFLAGS_test_skel)

# The shapes again with per-attach storage declared (the rule above): what
# a program that does not call bpf_usdt_storage() costs must not change.
SHAPES_FLAGS_storage := -mcpu=v3 -DUSDT_STORAGE_TYPE=__u64
DEPS_test_storage := $(KTEST_DIR)/shapes-storage.bpf.o \
	$(KTEST_DIR)/shapes-v3.bpf.o

# 65600 call sites with distinct specs for the capacity tests.
$(KTEST_DIR)/cap_sites.o: tests/kernel/cap_sites.S
	$(call msg,AS,$@)
	@mkdir -p $(@D)
	$(Q)$(CC) -c $< -o $@
DEPS_test_capacity := $(KTEST_DIR)/cap_sites.o
# Updates and deletes of arrays of maps counted (RCU grace-period waits).
LDFLAGS_test_capacity := $(KTEST_DIR)/cap_sites.o \
	-Wl,--wrap=bpf_map_delete_elem -Wl,--wrap=bpf_map_update_elem \
	-Wl,--wrap=bpf_map_update_batch

# A skeleton app with no manager: libusdttest.so and cap:more's 64 sites.
DEPS_test_native := $(KTEST_DIR)/libusdttest.so $(KTEST_DIR)/cap_sites.o
LDFLAGS_test_native := $(KTEST_DIR)/cap_sites.o $(LDFLAGS_test_skel) \
	-DKTEST_LIB_DIR='"$(KTEST_DIR)"'

# The selftests' probes at -O0 and at -O2, providers n0 and n2.
$(KTEST_DIR)/native_probes-O%.o: tests/kernel/native_probes.c
	$(call msg,CC,$@)
	@mkdir -p $(@D)
	$(Q)$(CC) -O$* -g -DNPROV=n$* -c $< -o $@
NATIVE_PROBES := $(KTEST_DIR)/native_probes-O0.o $(KTEST_DIR)/native_probes-O2.o
DEPS_test_native += $(NATIVE_PROBES) $(KTEST_DIR)/libsemabss.so
LDFLAGS_test_native += $(NATIVE_PROBES) -lsemabss

# Red-zone sites, traced through every way to attach, `usdt trace` too.
LDFLAGS_test_redzone = $(TOOL_TEST_DEFS)
DEPS_test_redzone = $(TOOL)

# The tool's program, loaded in each mode: its skeleton and its events'
# header.
DEPS_test_frames := $(TOOL_SKEL)
LDFLAGS_test_frames := -I$(OBJDIR)/skel/tools -Itools

# test_preempt runs `usdt trace` too.
LDFLAGS_test_preempt = $(TOOL_TEST_DEFS)
DEPS_test_preempt = $(TOOL)
