# make bench: libusdt side by side with the system's libbpf (root), and the
# BPF side with libbpf 1.1.2's and 1.7's headers (bench_bpf).
BENCH_SKELS := $(OBJDIR)/skel/lab/bench/bench_ours.skel.h \
	       $(OBJDIR)/skel/lab/bench/bench_libbpf.skel.h
# The host's multiarch triplet from gcc (always installed): clang 21 refuses
# -print-multiarch, and CC may be clang.
MULTIARCH := $(shell gcc -print-multiarch 2>/dev/null)

# libbpf's usdt.bpf.h includes <linux/errno.h>, which needs the host's asm/.
$(OBJDIR)/bpf/lab/bench/bench_libbpf.bpf.o: BPF_EXTRA_CFLAGS += \
	-idirafter /usr/include/$(MULTIARCH)

$(OBJDIR)/bench: lab/bench/bench.c $(STATIC_LIB) $(BENCH_SKELS)
	$(call msg,CC,$@)
	$(Q)$(CC) $(ALL_CFLAGS) -I$(OBJDIR)/skel/lab/bench $< -o $@ \
		$(STATIC_LIB) $(ALL_LDFLAGS) $(LIBS)

# The program shapes of tests/kernel/shapes.bpf.c at each -mcpu, on our
# header, on the system's libbpf 1.1.2 header and on libbpf 1.7's, the
# last in LB17_PREFIX (lab/libbpf/libbpf.mk).
BENCH_DIR := $(OBJDIR)/bench-bpf
BENCH_CPUS := v1 v2 v3
BENCH_OBJS := $(foreach i,ours lb11 lb17,$(foreach v,$(BENCH_CPUS),\
	$(BENCH_DIR)/$(i)/shapes-$(v).o))
LB_BPF_CFLAGS = -g -O2 -target bpf -D__TARGET_ARCH_$(BPF_ARCH) \
	-DUSDT_SHAPES_LIBBPF -I$(OBJDIR) -idirafter /usr/include/$(MULTIARCH)

$(BENCH_DIR)/ours/shapes-%.o: tests/kernel/shapes.bpf.c $(VMLINUX_H) \
		$(wildcard bpf/*.h)
	$(call msg,CLANG,$@)
	@mkdir -p $(@D)
	$(Q)$(CLANG) $(BPF_CFLAGS) $(or $(BENCH_FLAGS_$*),-mcpu=$*) -c $< -o $@

# Ours again with USDT_STORAGE_TYPE (the rule above): bpf_usdt_storage()'s
# cost per hit, and the other shapes' (unchanged).
BENCH_OBJS += $(BENCH_DIR)/ours/shapes-storage.o
BENCH_FLAGS_storage := -mcpu=v3 -DUSDT_STORAGE_TYPE=__u64

# Ours: the spec lookup alone, chunked (layout 3) and flat (layout 2).
BENCH_OBJS += $(BENCH_DIR)/ours/shapes-lookup.o
$(BENCH_DIR)/ours/shapes-lookup.o: lab/bench/bench_lookup.bpf.c \
		$(VMLINUX_H) $(wildcard bpf/*.h)
	$(call msg,CLANG,$@)
	@mkdir -p $(@D)
	$(Q)$(CLANG) $(BPF_CFLAGS) -mcpu=v3 -c $< -o $@

$(BENCH_DIR)/lb11/shapes-%.o: tests/kernel/shapes.bpf.c $(VMLINUX_H)
	$(call msg,CLANG,$@)
	@mkdir -p $(@D)
	$(Q)$(CLANG) $(LB_BPF_CFLAGS) -mcpu=$* -c $< -o $@

$(BENCH_DIR)/lb17/shapes-%.o: tests/kernel/shapes.bpf.c $(VMLINUX_H) \
		$(LB17_PREFIX)/.done
	$(call msg,CLANG,$@)
	@mkdir -p $(@D)
	$(Q)$(CLANG) $(LB_BPF_CFLAGS) -I$(LB17_PREFIX)/include -mcpu=$* \
		-c $< -o $@

# Attaching at scale (bench_scale.c): a target of SCALE_N call sites
# of as many probe names, and the program in each DIR as scale.o.
SCALE_N := 10003
SCALE_TARGET := $(abspath $(BENCH_DIR))/scale-target
# Call sites under SCALE_NAMES probe names, at each of NAMES_SIZES: the
# cost per site from 1k to 100k, as libbpf users attach (a name a call).
SCALE_NAMES := 35
NAMES_SIZES := 1003 10003 100003
NAMES_TARGETS := $(foreach n,$(NAMES_SIZES),$(abspath $(BENCH_DIR))/names-$(n))
BENCH_OBJS += $(foreach i,ours lb11 lb17,$(BENCH_DIR)/$(i)/scale.o)
BENCH_BPF_SRCS := lab/bench/bench_bpf.c lab/bench/bench_scale.c \
		  lab/bench/bench_waits.c
# Map calls that wait for a grace period are counted by wrapping them at
# the final link (bench_waits.h), which sees the calls of static
# libraries only: libbpf too is linked statically (libusdt.a's calls and
# libbpf's own usdt.c's go to its bpf.c across objects).
BENCH_WRAP := $(foreach f,bpf_map_update_elem bpf_map_update_batch \
	bpf_map_delete_elem bpf_map_delete_batch close dup2 dup3,-Wl,--wrap=$(f))

$(SCALE_TARGET): tests/fixtures/gen_probes.sh
	$(call msg,GEN,$@)
	@mkdir -p $(@D)
	$(Q)sh $< $(SCALE_N) $(SCALE_N) mixed > $@.c
	$(Q)$(CC) -O0 $@.c -o $@

$(NAMES_TARGETS): $(abspath $(BENCH_DIR))/names-%: tests/fixtures/gen_probes.sh
	$(call msg,GEN,$@)
	@mkdir -p $(@D)
	$(Q)sh $< $* $(SCALE_NAMES) mixed > $@.c
	$(Q)$(CC) -O0 $@.c -o $@

$(BENCH_DIR)/ours/scale.o: lab/bench/scale.bpf.c $(VMLINUX_H) \
		$(wildcard bpf/*.h)
	$(call msg,CLANG,$@)
	@mkdir -p $(@D)
	$(Q)$(CLANG) $(BPF_CFLAGS) -c $< -o $@

BENCH_OBJS += $(BENCH_DIR)/ours/owned.o
$(BENCH_DIR)/ours/owned.o: lab/bench/owned.bpf.c $(VMLINUX_H) \
		$(wildcard bpf/*.h)
	$(call msg,CLANG,$@)
	@mkdir -p $(@D)
	$(Q)$(CLANG) $(BPF_CFLAGS) -DSCALE_TARGET='"$(SCALE_TARGET)"' -c $< -o $@

$(BENCH_DIR)/lb11/scale.o: lab/bench/scale.bpf.c $(VMLINUX_H)
	$(call msg,CLANG,$@)
	@mkdir -p $(@D)
	$(Q)$(CLANG) $(LB_BPF_CFLAGS) -DSCALE_LIBBPF -mcpu=v3 -c $< -o $@

$(BENCH_DIR)/lb17/scale.o: lab/bench/scale.bpf.c $(VMLINUX_H) \
		$(LB17_PREFIX)/.done
	$(call msg,CLANG,$@)
	@mkdir -p $(@D)
	$(Q)$(CLANG) $(LB_BPF_CFLAGS) -DSCALE_LIBBPF -I$(LB17_PREFIX)/include \
		-mcpu=v3 -c $< -o $@

$(OBJDIR)/bench_bpf: $(BENCH_BPF_SRCS) lab/bench/bench_scale.h \
		lab/bench/bench_waits.h $(STATIC_LIB)
	$(call msg,CC,$@)
	$(Q)$(CC) $(ALL_CFLAGS) $(BENCH_BPF_SRCS) -o $@ $(STATIC_LIB) \
		$(ALL_LDFLAGS) $(BENCH_WRAP) -Wl,-Bstatic -lbpf -Wl,-Bdynamic \
		-lelf -lz -lpthread

# The same rounds with libbpf 1.7's user space, linked statically.
$(OBJDIR)/bench_bpf17: $(BENCH_BPF_SRCS) lab/bench/bench_scale.h \
		lab/bench/bench_waits.h $(LB17_PREFIX)/.done
	$(call msg,CC,$@)
	$(Q)$(CC) -std=gnu11 -O2 -g -Wall -DBENCH_LIBBPF_ONLY \
		-I$(LB17_PREFIX)/include $(BENCH_BPF_SRCS) -o $@ \
		$(BENCH_WRAP) $(LB17_PREFIX)/lib/libbpf.a -lelf -lz -lpthread

.PHONY: bench bench-trace
bench: $(OBJDIR)/bench $(OBJDIR)/bench_bpf $(OBJDIR)/bench_bpf17 $(BENCH_OBJS) \
		$(SCALE_TARGET) $(NAMES_TARGETS)
	$(Q)$(OBJDIR)/bench
	$(Q)$(OBJDIR)/bench_bpf -s $(SCALE_TARGET) $(SCALE_N) \
		$(foreach n,$(NAMES_SIZES),-m $(abspath $(BENCH_DIR))/names-$(n) $(n) $(SCALE_NAMES)) \
		$(BENCH_DIR)/ours $(BENCH_DIR)/lb11 \
		$(OBJDIR)/bench_bpf17 $(BENCH_DIR)/lb17

# make bench-trace: start and end times of `usdt trace` on many probes,
# the cost of a hit with --count and --hist, with and without --listen
# (scraped meanwhile), and its time to a first event next to bpftrace's.
bench-trace: $(TOOL) $(TOOL_FIX)/trace_target
	$(Q)lab/bench/trace_scale.sh $(TOOL) $(OBJDIR)
	$(Q)lab/bench/startup.sh $(TOOL) $(OBJDIR)
