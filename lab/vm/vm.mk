# SPDX-License-Identifier: BSD-2-Clause
#
# make vm-check ARCH=arm64|s390x|riscv64|x86_64 KERNEL=6.1|6.12|sid
#
# The kernel tests on a real kernel of another architecture or version:
# Debian's kernel of that arch and release (6.1 bookworm's, 6.12 trixie's,
# sid the newest in Debian sid, Linux 7.x, whose version moves: a fetched
# one stays in build/vm/kernel/ARCH-sid until that is removed) booted in
# QEMU system emulation (TCG), with an initramfs holding busybox, the
# cross-built kernel tests, the tool, their fixtures and the target's
# libraries; it ends with the tests' "N passed, N failed, N skipped" line
# and their exit status.
#
#  1. lab/vm/fetch.sh: the kernel and the target's userland (busybox,
#     libc, libelf, zlib, libbpf, cmocka) from Debian's archive, through a
#     private apt state (lab/apt-private.sh) into build/vm/.
#  2. A sub-make with OBJDIR=build/vm/ARCH builds the kernel tests, the
#     tool and the fixtures with the target's compiler against those
#     libraries, and the BPF objects with -D__TARGET_ARCH_xxx (bpfeb for
#     s390x) and the target's vmlinux.h, from the BTF in Debian's 6.12
#     kernel of that arch (lab/vm/btf.sh).
#  3. lab/vm/run.sh packs the initramfs and boots it; tests/run.sh runs
#     in the guest under busybox, at the same path as here.

VM_DIR := build/vm
comma := ,
ARCH ?= $(patsubst aarch64,arm64,$(HOST_ARCH))
KERNEL ?= 6.12
# A guest's whole run: s390x 6.1 took 1,311 s beside the others since the
# spec head (its verifier walks the readers twice: no kernel BTF), and
# 2,630 s in CI once `usdt trace`'s program was split into functions of 48
# bytes at most (2026-12-04: each load of it walked 403,701 instructions
# there, about 12 s); with its arguments read by a global function of its
# own, 354 s alone (2026-12-05).
VM_TIMEOUT ?= 2000
# Per test program in a guest: TCG with one vCPU, two guests sharing the
# host's two cores. test_trace_fmt (31 `usdt trace` runs) took 259 s in
# the s390x 6.1 guest alone and went past the host's 300 s beside another;
# since 2026-12-05, 100 s alone.
VM_TEST_TIMEOUT ?= 900

VM_TRIPLET := $(patsubst arm64,aarch64,$(ARCH))-linux-gnu
VM_SYSROOT := $(abspath $(VM_DIR)/sysroot/$(ARCH))
VM_OBJDIR := $(VM_DIR)/$(ARCH)
VM_BPF_ARCH := $(call kernel_arch,$(ARCH))
VM_BPF_TARGET := $(if $(filter s390x,$(ARCH)),bpfeb,bpfel)
VM_TOOLPFX := $(if $(filter $(HOST_ARCH),$(firstword $(subst -, ,$(VM_TRIPLET)))),,$(VM_TRIPLET)-)
VM_LIBDIRS := $(VM_SYSROOT)/usr/lib/$(VM_TRIPLET) $(VM_SYSROOT)/lib/$(VM_TRIPLET)
# The sysroot's headers come before the host's (the cross compilers search
# the host's /usr/include last); <sys/sdt.h> is the host's copy.
# riscv64's libraries are trixie's, built against glibc 2.41, and the
# cross compiler's C library is 2.36: what they need from it beyond 2.36 is
# left for the guest's own (trixie) C library to provide at run time.
VM_CC := $(VM_TOOLPFX)gcc -I$(abspath $(FIXTURE_INC)) \
	-isystem $(VM_SYSROOT)/usr/include \
	$(foreach d,$(VM_LIBDIRS),-L$(d) -Wl,-rpath-link,$(d)) \
	$(if $(filter riscv64,$(ARCH)),-Wl$(comma)--allow-shlib-undefined)

.PHONY: vm-check vm-prepare vm-build
# Everything but the boot: the downloads and the build.
VM_DEPS := qemu-system-arm qemu-system-misc qemu-system-x86 qemu-system-data \
	   cpio llvm xz-utils zstd

vm-prepare: deps
	$(Q)scripts/deps.sh $(VM_DEPS)
	$(Q)$(MAKE) --no-print-directory $(FIXTURE_INC)/sys/sdt.h
	$(Q)lab/vm/fetch.sh $(VM_DIR) $(ARCH) $(KERNEL)
	$(Q)$(MAKE) --no-print-directory OBJDIR=$(VM_OBJDIR) SANITIZE= \
		CC="$(VM_CC)" AR=$(VM_TOOLPFX)ar BPF_ARCH=$(VM_BPF_ARCH) \
		BPF_TARGET=$(VM_BPF_TARGET) \
		VMLINUX_BTF=$(VM_DIR)/btf/$(ARCH).btf vm-build

# VM_EXCLUDE (and VM_EXCLUDE_<ARCH>): kernel tests not run in the guest,
# named on the console so that a gap is never silent. .ci/run uses it for
# the tests that still fail in guests (see there); the default runs all.
# VM_EXCLUDE_K<kernel, dots as underscores>, e.g. VM_EXCLUDE_K6_1: for one
# kernel version.
VM_EXCLUDE ?=
# VM_EXCLUDE_<ARCH>_K<kernel>, e.g. VM_EXCLUDE_s390x_K6_1: for one guest.
VM_EXCLUDE_KERNEL := $(VM_EXCLUDE_K$(subst .,_,$(KERNEL))) \
	$(VM_EXCLUDE_$(ARCH)_K$(subst .,_,$(KERNEL)))
VM_TESTS := $(filter-out $(VM_EXCLUDE) $(VM_EXCLUDE_$(ARCH)) $(VM_EXCLUDE_KERNEL), \
	      $(KERNEL_SRCS:tests/kernel/%.c=%))

VM_NOT_RUN := $(filter-out $(VM_TESTS),$(KERNEL_SRCS:tests/kernel/%.c=%))

vm-check: vm-prepare
	@echo "vm-check: kernel tests NOT RUN in the $(ARCH) guest: $(or $(VM_NOT_RUN),none)"
	$(Q)lab/vm/run.sh $(VM_DIR) $(ARCH) $(KERNEL) $(VM_TIMEOUT) \
		$(VM_TEST_TIMEOUT) $(VM_OBJDIR) $(VM_TESTS)

# Run by vm-prepare's sub-make, with the target's compiler.
vm-build: $(KERNEL_BINS)

# s390x's BPF objects are big-endian (vm-prepare's sub-make sets
# BPF_TARGET=bpfeb), and bpftool cannot open one on this host: the
# skeleton is made from a little-endian build and given the big-endian
# object (lab/vm/skel-endian.sh). Same target and prerequisites as the
# Makefile's rule, which this one replaces.
ifeq ($(BPF_TARGET),bpfeb)
$(OBJDIR)/skel/%.skel.h: $(OBJDIR)/bpf/%.bpf.o
	$(call msg,GEN,$@)
	@mkdir -p $(@D)
	$(Q)$(CLANG) $(subst -target bpfeb,-target bpfel,$(BPF_CFLAGS)) \
		-c $*.bpf.c -o $(<:.o=.el.o)
	$(Q)$(BPFTOOL) gen skeleton $(<:.o=.el.o) \
		name $(subst -,_,$(notdir $*)) > $@.el
	$(Q)lab/vm/skel-endian.sh $@.el $(<:.o=.el.o) $< > $@
	$(Q)rm -f $@.el
endif
