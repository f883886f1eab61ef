# SPDX-License-Identifier: BSD-2-Clause
#
# libusdt: one GNU Makefile, no configure step.
#
#   make                  libusdt.a, libusdt.so and the usdt tool
#   make check            build and run every test (unit, then kernel)
#   make demo             the live demo of `usdt` on a bundled example
#   make SANITIZE=1 check the same tests built with ASan+UBSan
#   make cross-check      unit tests for aarch64, s390x, riscv64 under qemu-user
#   make vm-check ARCH=arm64 KERNEL=6.1   kernel tests in QEMU (lab/vm/vm.mk)
#   make fuzz             libFuzzer targets (FUZZ_SECONDS=N to run each)
#   make bench            benchmarks, side by side with the system's libbpf
#   make install          PREFIX LIBDIR INCLUDEDIR DESTDIR
#
# Knobs: CC CLANG BPF_CC BPFTOOL EXTRA_CFLAGS EXTRA_LDFLAGS OBJDIR V=1
#        BUILD_STATIC_ONLY=1 CROSS_COMPILE=aarch64-linux-gnu-
#        LIBBPF=1.7 (build and test against libbpf 1.7.0, see below)

# The version lives in include/usdt_version.h (usdt_version_string() too).
MAJOR := $(shell sed -n 's/^\#define USDT_MAJOR_VERSION //p' include/usdt_version.h)
MINOR := $(shell sed -n 's/^\#define USDT_MINOR_VERSION //p' include/usdt_version.h)
PATCH := 0
VERSION := $(MAJOR).$(MINOR).$(PATCH)

# The version script's newest node must be this release.
MAP_VERSION := $(lastword $(shell sed -n 's/^LIBUSDT_\([0-9.]*\) *{.*/\1/p' src/libusdt.map))
ifneq ($(MAP_VERSION),$(MAJOR).$(MINOR).0)
$(error src/libusdt.map's newest node is LIBUSDT_$(MAP_VERSION), expected LIBUSDT_$(MAJOR).$(MINOR).0)
endif

PREFIX ?= /usr/local
LIBDIR ?= $(PREFIX)/lib
INCLUDEDIR ?= $(PREFIX)/include
BINDIR ?= $(PREFIX)/bin
MANDIR ?= $(PREFIX)/share/man
PKGCONFIGDIR ?= $(LIBDIR)/pkgconfig

CC := $(CROSS_COMPILE)$(if $(filter default,$(origin CC)),gcc,$(CC))
AR := $(CROSS_COMPILE)ar
CLANG ?= clang
BPFTOOL ?= bpftool
PKG_CONFIG ?= pkg-config

# LIBBPF=1.7: everything (library, tool, tests, example, the BPF side's
# <bpf/*.h>) against libbpf 1.7.0 built from Debian sid's source package
# into LIBBPF_DIR/prefix (lab/libbpf/libbpf.mk), in an OBJDIR of its own.
# Programs find its libbpf.so by rpath. Unset: the system's libbpf.
ifneq ($(LIBBPF),)
LIBBPF_DIR ?= build/libbpf-$(LIBBPF)
LIBBPF_PREFIX := $(abspath $(LIBBPF_DIR))/prefix
LIBBPF_STAMP := $(LIBBPF_PREFIX)/.done
LIBBPF_CFLAGS := -I$(LIBBPF_PREFIX)/include
LIBBPF_LDFLAGS := -L$(LIBBPF_PREFIX)/lib -Wl,-rpath,$(LIBBPF_PREFIX)/lib
OBJ_SUFFIX := -libbpf$(LIBBPF)
endif

ifeq ($(SANITIZE),1)
OBJDIR ?= build-san$(OBJ_SUFFIX)
SAN_FLAGS := -fsanitize=address,undefined -fno-omit-frame-pointer \
	     -fno-sanitize-recover=all
else
OBJDIR ?= build$(OBJ_SUFFIX)
SAN_FLAGS :=
endif

CFLAGS ?= -g -O2 -Wall -Wextra -Werror
ALL_CFLAGS := -std=gnu11 $(CFLAGS) -Wno-unused-parameter \
	      -Wno-missing-field-initializers \
	      -Werror=implicit-function-declaration \
	      -Werror=incompatible-pointer-types \
	      -D_GNU_SOURCE -Iinclude -Isrc $(LIBBPF_CFLAGS) $(SAN_FLAGS) \
	      $(EXTRA_CFLAGS)
ALL_LDFLAGS := $(LDFLAGS) $(LIBBPF_LDFLAGS) $(SAN_FLAGS) $(EXTRA_LDFLAGS)
LIBS := -lbpf -lelf -lz

ifeq ($(V),1)
Q :=
msg =
else
Q := @
msg = @printf '  %-8s %s\n' "$(1)" "$(2)";
endif

# One folder per layer (docs/library.md, Layout); src/ holds the facade.
LIB_SRCS := $(sort $(wildcard src/*.c src/*/*.c src/reader/arch/*.c))
STATIC_OBJS := $(patsubst %.c,$(OBJDIR)/static/%.o,$(LIB_SRCS))
SHARED_OBJS := $(patsubst %.c,$(OBJDIR)/shared/%.o,$(LIB_SRCS))
STATIC_LIB := $(OBJDIR)/libusdt.a
SHARED_LIB := $(OBJDIR)/libusdt.so.$(VERSION)
SONAME := libusdt.so.$(MAJOR)
# With LIBBPF=..., its stamp: everything compiled waits for that libbpf.
HDRS := $(wildcard include/*.h src/*.h src/*/*.h src/reader/arch/*.h bpf/*.h) $(LIBBPF_STAMP)

ifeq ($(BUILD_STATIC_ONLY),1)
LIB_TARGETS := $(STATIC_LIB)
else
LIB_TARGETS := $(STATIC_LIB) $(SHARED_LIB) $(OBJDIR)/libusdt.so \
	       $(OBJDIR)/$(SONAME)
endif

.PHONY: all lib check unit-check unit-tests kernel-tests demo install uninstall clean \
	fuzz examples deps tools
.DELETE_ON_ERROR:

all: lib tools

lib: $(LIB_TARGETS) $(OBJDIR)/libusdt.pc

$(OBJDIR)/static/%.o: %.c $(HDRS)
	$(call msg,CC,$@)
	@mkdir -p $(@D)
	$(Q)$(CC) $(ALL_CFLAGS) -fvisibility=hidden -c $< -o $@

$(OBJDIR)/shared/%.o: %.c $(HDRS)
	$(call msg,CC,$@)
	@mkdir -p $(@D)
	$(Q)$(CC) $(ALL_CFLAGS) -fPIC -fvisibility=hidden -DSHARED -c $< -o $@

$(STATIC_LIB): $(STATIC_OBJS)
	$(call msg,AR,$@)
	$(Q)rm -f $@ && $(AR) rcs $@ $^

# -Wl,--no-undefined: the sanitizer runtimes are not linked into a shared
# object, so the check is only made without them.
$(SHARED_LIB): $(SHARED_OBJS) src/libusdt.map
	$(call msg,LD,$@)
	$(Q)$(CC) -shared $(ALL_LDFLAGS) -Wl,-soname,$(SONAME) \
		-Wl,--version-script=src/libusdt.map \
		$(if $(SAN_FLAGS),,-Wl,--no-undefined) \
		-o $@ $(SHARED_OBJS) $(LIBS)

$(OBJDIR)/$(SONAME) $(OBJDIR)/libusdt.so: $(SHARED_LIB)
	$(Q)ln -sf $(notdir $<) $@

# Made again on every run: it holds PREFIX, LIBDIR and INCLUDEDIR, which
# may differ between `make` and `make install PREFIX=...`.
PC_SED := -e 's|@PREFIX@|$(PREFIX)|' -e 's|@LIBDIR@|$(LIBDIR)|' \
	  -e 's|@INCLUDEDIR@|$(INCLUDEDIR)|' -e 's|@VERSION@|$(VERSION)|'
.PHONY: $(OBJDIR)/libusdt.pc
$(OBJDIR)/libusdt.pc: src/libusdt.pc.template
	@mkdir -p $(@D)
	$(Q)sed $(PC_SED) $< > $@

# ----------------------------------------------------------------------
# Public headers: installed as <usdt/usdt.h>, <usdt/usdt.bpf.h> (and the
# three they include: usdt_version.h, and the BPF side's machinery,
# usdt_impl.bpf.h and usdt_spec.h), as libbpf's are <bpf/...>. In the tree,
# OBJDIR/include has the same layout (links to the sources) for code
# written as a user's: the examples.

PUBLIC_HDRS := include/usdt.h include/usdt_version.h bpf/usdt.bpf.h \
	       bpf/usdt_impl.bpf.h bpf/usdt_spec.h
PUBLIC_INC := $(OBJDIR)/include
PUBLIC_LINKS := $(addprefix $(PUBLIC_INC)/usdt/,$(notdir $(PUBLIC_HDRS)))

$(PUBLIC_LINKS): $(PUBLIC_INC)/usdt/%: $(PUBLIC_HDRS)
	@mkdir -p $(@D)
	$(Q)ln -sf $(abspath $(filter %/$*,$(PUBLIC_HDRS))) $@

# ----------------------------------------------------------------------
# BPF objects and skeletons. vmlinux.h comes from the running kernel's BTF;
# the BPF side needs no host asm/ headers.

VMLINUX_H := $(OBJDIR)/vmlinux.h
HOST_ARCH := $(shell uname -m)
# The kernel's name of an arch, given uname -m's or Debian's: the xxx of
# __TARGET_ARCH_xxx.
kernel_arch = $(strip $(patsubst x86_64,x86,$(patsubst aarch64,arm64,\
	$(patsubst s390x,s390,$(patsubst riscv64,riscv,$(1))))))
BPF_ARCH := $(call kernel_arch,$(HOST_ARCH))
# BPF_TARGET: bpfeb for a big-endian target (make vm-check ARCH=s390x).
BPF_TARGET ?= bpf
# BPF_CC: the compiler of the BPF objects, clang by default, or GCC's BPF
# backend (Debian 13 and sid's gcc-bpf: BPF_CC=bpf-gcc), which takes no
# -target, writes BTF and CO-RE relocations only when asked, and must be
# held to C11 (gcc 15 and later default to C23, where vmlinux.h's bool
# typedef is an error).
# It does not search /usr/include (a freestanding target): libbpf's
# <bpf/*.h> are found there last. vmlinux.h's clang pragma and
# address_space attributes are unknown to it: those two warnings are off.
BPF_CC ?= $(CLANG)
ifneq ($(findstring gcc,$(notdir $(firstword $(BPF_CC)))),)
BPF_CC_FLAGS = -gbtf -mco-re -std=gnu11 \
	$(if $(filter bpfeb,$(BPF_TARGET)),-mbig-endian,-mlittle-endian) \
	-Wno-unknown-pragmas -Wno-attributes -idirafter /usr/include
else
BPF_CC_FLAGS = -target $(BPF_TARGET)
endif
BPF_CFLAGS = -g -O2 $(BPF_CC_FLAGS) -mcpu=v3 -D__TARGET_ARCH_$(BPF_ARCH) -Wall -Werror \
	      -I$(OBJDIR) -Ibpf -I$(PUBLIC_INC) $(LIBBPF_CFLAGS) \
	      $(BPF_EXTRA_CFLAGS)

# VMLINUX_BTF: another kernel's BTF (make vm-check: the target's).
VMLINUX_BTF ?= /sys/kernel/btf/vmlinux
$(VMLINUX_H): $(LIBBPF_STAMP) $(filter-out /sys/%,$(VMLINUX_BTF))
	$(call msg,GEN,$@)
	@mkdir -p $(@D)
	$(Q)$(BPFTOOL) btf dump file $(VMLINUX_BTF) format c > $@

$(OBJDIR)/bpf/%.bpf.o: %.bpf.c $(VMLINUX_H) $(PUBLIC_LINKS) \
		$(wildcard bpf/*.h tests/kernel/*.h tools/*.h)
	$(call msg,BPFCC,$@)
	@mkdir -p $(@D)
	$(Q)$(BPF_CC) $(BPF_CFLAGS) -c $< -o $@

# (lab/vm/vm.mk replaces this rule for a big-endian BPF_TARGET.)
$(OBJDIR)/skel/%.skel.h: $(OBJDIR)/bpf/%.bpf.o
	$(call msg,GEN,$@)
	@mkdir -p $(@D)
	$(Q)$(BPFTOOL) gen skeleton $< name $(subst -,_,$(notdir $*)) > $@

# ----------------------------------------------------------------------
# Tests. Each tests/unit/test_*.c and tests/kernel/test_*.c is one program,
# linked with the static library (so internal usdt__ functions are
# reachable). A fragment may set LDFLAGS_<name> and DEPS_<name>.

UNIT_SRCS := $(sort $(wildcard tests/unit/test_*.c))
KERNEL_SRCS := $(sort $(wildcard tests/kernel/test_*.c))
# test_trace_jvm traces a JVM: without one it is left out, and said so.
JVM_LIB := $(firstword $(wildcard /usr/lib/jvm/*/lib/server/libjvm.so))
ifeq ($(JVM_LIB),)
KERNEL_SRCS := $(filter-out tests/kernel/test_trace_jvm.c,$(KERNEL_SRCS))
NOT_RUN := test_trace_jvm (no JVM in /usr/lib/jvm: apt-get install default-jre-headless)
endif
UNIT_BINS := $(patsubst %.c,$(OBJDIR)/%,$(UNIT_SRCS))
KERNEL_BINS := $(patsubst %.c,$(OBJDIR)/%,$(KERNEL_SRCS))
TEST_BPF_SRCS := $(wildcard tests/kernel/*.bpf.c)
TEST_SKELS := $(patsubst %.bpf.c,$(OBJDIR)/skel/%.skel.h,$(TEST_BPF_SRCS))
TEST_CFLAGS := $(ALL_CFLAGS) -I$(OBJDIR)/skel/tests/kernel -Itests -Ibpf \
	       -DUSDT_OBJDIR=\"$(OBJDIR)\" -DUSDT_CLANG=\"$(CLANG)\" \
	       -DUSDT_LIBBPF=\"$(LIBBPF)\"
TEST_HDRS := $(wildcard tests/*.h tests/unit/*.h tests/kernel/*.h)

# What the build and the tests need from Debian's archive. Double-colon,
# and before the fragments: lab/libbpf/libbpf.mk's LIBBPF build runs after.
deps::
	$(Q)scripts/deps.sh

# Fragments add fixtures, tools, fuzzers, examples and the tests' link
# hooks; lab/lab.mk, last, what only CI and benchmarking use.
include tests/fixtures/fixtures.mk
include tools/tools.mk
include tests/fixtures/tool-fixtures.mk
include tests/fuzz/fuzz.mk
include examples/examples.mk
include tests/kernel/kernel.mk
include tests/unit/unit.mk
include lab/lab.mk

$(OBJDIR)/tests/unit/%: tests/unit/%.c $(STATIC_LIB) $(TEST_HDRS) $(VMLINUX_H)
	$(call msg,CC,$@)
	@mkdir -p $(@D)
	$(Q)$(CC) $(TEST_CFLAGS) $< -o $@ $(STATIC_LIB) $(ALL_LDFLAGS) \
		$(LDFLAGS_$*) -lcmocka $(LIBS)

.SECONDEXPANSION:
$(OBJDIR)/tests/kernel/%: tests/kernel/%.c $(STATIC_LIB) $(TEST_HDRS) \
		$(TEST_SKELS) $$(DEPS_$$*)
	$(call msg,CC,$@)
	@mkdir -p $(@D)
	$(Q)$(CC) $(TEST_CFLAGS) $< -o $@ $(STATIC_LIB) $(ALL_LDFLAGS) \
		$(LDFLAGS_$*) -lcmocka $(LIBS)

TEST_TIMEOUT ?= 300

unit-tests: $(UNIT_BINS) $(TEST_DEPS)
	$(Q)tests/run.sh $(TEST_TIMEOUT) $(UNIT_BINS)

kernel-tests: $(KERNEL_BINS) $(TEST_DEPS)
	$(Q)tests/run.sh $(TEST_TIMEOUT) $(KERNEL_BINS)

# One summary for the whole suite.
check: deps
	$(Q)tests/layers.sh
	$(Q)$(MAKE) --no-print-directory all $(UNIT_BINS) $(KERNEL_BINS) $(TEST_DEPS)
	$(if $(NOT_RUN),@echo "check: kernel tests NOT RUN: $(NOT_RUN)")
	$(Q)tests/run.sh $(TEST_TIMEOUT) $(UNIT_BINS) $(KERNEL_BINS)

# What check builds, kernel tests included, with only the unit tests run:
# CI's second compiler in each chroot (.ci/run), where the kernel tests
# would run again on the kernel that the first compiler's run tested.
unit-check: deps
	$(Q)$(MAKE) --no-print-directory all $(UNIT_BINS) $(KERNEL_BINS) $(TEST_DEPS)
	$(Q)tests/run.sh $(TEST_TIMEOUT) $(UNIT_BINS)

# ----------------------------------------------------------------------

install: lib
	$(call msg,INSTALL,$(DESTDIR)$(PREFIX))
	$(Q)install -d $(DESTDIR)$(INCLUDEDIR)/usdt $(DESTDIR)$(LIBDIR) \
		$(DESTDIR)$(PKGCONFIGDIR)
	$(Q)install -m 644 $(PUBLIC_HDRS) $(DESTDIR)$(INCLUDEDIR)/usdt/
	$(Q)install -m 644 $(STATIC_LIB) $(DESTDIR)$(LIBDIR)/
ifneq ($(BUILD_STATIC_ONLY),1)
	$(Q)install -m 755 $(SHARED_LIB) $(DESTDIR)$(LIBDIR)/
	$(Q)ln -sf libusdt.so.$(VERSION) $(DESTDIR)$(LIBDIR)/$(SONAME)
	$(Q)ln -sf $(SONAME) $(DESTDIR)$(LIBDIR)/libusdt.so
endif
	$(Q)install -m 644 $(OBJDIR)/libusdt.pc $(DESTDIR)$(PKGCONFIGDIR)/
	$(Q)$(MAKE) --no-print-directory install-extra

uninstall:
	$(Q)rm -rf $(DESTDIR)$(INCLUDEDIR)/usdt $(DESTDIR)$(LIBDIR)/libusdt.* $(DESTDIR)$(PKGCONFIGDIR)/libusdt.pc \
		$(DESTDIR)$(BINDIR)/usdt $(DESTDIR)$(MANDIR)/man1/usdt.1

.PHONY: install-extra
install-extra:: ;

clean:
	$(Q)rm -rf build build-san build-clang build-clang-san build-*libbpf*

# Keep skeletons and BPF objects between runs.
.SECONDARY:
