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

DEPS_test_attach := $(KTEST_DIR)/libusdttest.so $(KTEST_DIR)/sema.o
LDFLAGS_test_attach := $(KTEST_DIR)/sema.o -L$(KTEST_DIR) -lusdttest \
	-Wl,-rpath,$(abspath $(KTEST_DIR))

# The attach path out of memory: the library's allocations fail in turn.
LDFLAGS_test_attach_oom := -Wl,--wrap=malloc -Wl,--wrap=calloc \
	-Wl,--wrap=realloc

# The verifier-cost shapes at each -mcpu, and without __TARGET_ARCH_xxx
# (the last -mcpu and -U win over BPF_CFLAGS').
SHAPES_OBJS := $(foreach v,v1 v2 v3 noarch,$(KTEST_DIR)/shapes-$(v).bpf.o)
$(KTEST_DIR)/shapes-%.bpf.o: tests/kernel/shapes.bpf.c $(VMLINUX_H) \
		$(wildcard bpf/*.h)
	$(call msg,CLANG,$@)
	@mkdir -p $(@D)
	$(Q)$(CLANG) $(BPF_CFLAGS) $(if $(filter noarch,$*),-U__TARGET_ARCH_$(BPF_ARCH),-mcpu=$*) \
		-c $< -o $@
DEPS_test_verifier := $(SHAPES_OBJS)

# The shapes again with per-attach storage declared: what a program that
# does not call bpf_usdt_storage() costs must not change.
$(KTEST_DIR)/shapes-storage.bpf.o: tests/kernel/shapes.bpf.c $(VMLINUX_H) \
		$(wildcard bpf/*.h)
	$(call msg,CLANG,$@)
	@mkdir -p $(@D)
	$(Q)$(CLANG) $(BPF_CFLAGS) -mcpu=v3 -DUSDT_STORAGE_TYPE=__u64 -c $< -o $@
DEPS_test_storage := $(KTEST_DIR)/shapes-storage.bpf.o \
	$(KTEST_DIR)/shapes-v3.bpf.o
LDFLAGS_test_attach_oom += -Wl,--wrap=mmap
