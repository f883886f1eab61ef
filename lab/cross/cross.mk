# SPDX-License-Identifier: BSD-2-Clause
#
# make cross-check: the reader, the parsers and their unit tests built with
# Debian's cross compilers and run under qemu-user, so that "every parser
# builds and is unit-tested on every host" holds on other hosts too,
# big-endian s390x in particular.
#
# What is built, per target TRIPLET, into build/cross/TRIPLET/:
#   - the library without store.c, attach/, manager.c, progh.c, object.c, kfeatures.c
#     and linkids.c (they need libbpf and a kernel): the note reader (codec, probe builder,
#     index, file object, matcher), the ELF layer, the
#     arch parsers, argument and path resolution, process maps, the
#     symbol table, hashing, the kernel-BTF reader, logging and the
#     version (libusdt.a). The map back ends (chunks.c, ipmap.c,
#     storage.c) are compiled into it too, but call libbpf, so no test
#     here links them;
#   - every unit test except those in CROSS_UNIT_EXCLUDE, linked with
#     that archive and with the target's libelf and libcmocka, which
#     lab/cross/deps-cross.sh unpacks from Debian's archive into
#     build/cross/TRIPLET/sysroot (the C library is Debian's
#     libc6-dev-*-cross, as for the compilers).
#
# Each test program gets a wrapper, build/cross/tests/ARCH/unit/NAME, that
# runs it under qemu-ARCH -L /usr/TRIPLET (no binfmt_misc needed), and
# tests/run.sh runs all the wrappers of all targets for one summary line;
# its names read "aarch64/unit/test_note". The fixture tests read the
# host's fixtures (build/fixtures: x86_64, and every cross compiler's),
# through a link build/cross/TRIPLET/fixtures.
#
# A target whose libraries the archive lacks (riscv64 on Debian 12) is
# compiled, library and tests, with -Werror but not linked or run; the
# run says so before its summary. (Its <gelf.h> and <cmocka.h> then come
# from the host's /usr/include, which Debian's cross compilers search
# last; those headers are the same on every architecture. So does
# <bpf/libbpf.h>, which tests/test_util.h includes, on every target.)
#
# Sanitizers are never used here: their runtimes do not work under qemu.

CROSS_TRIPLETS ?= aarch64-linux-gnu s390x-linux-gnu riscv64-linux-gnu
CROSS_DIR := build/cross

CROSS_LIB_SRCS := $(filter-out src/store/store.c src/attach/%.c src/manager.c \
	src/libbpf/progh.c src/libbpf/object.c src/kernel/linkids.c src/kernel/kfeatures.c,$(LIB_SRCS))
# They need libbpf: the spec-ID allocator (store.c), the BPF-side header
# (compiles BPF with the host's clang), `usdt list` (the host-built tool),
# the libbpf a test runs with, the section handler (test_header_link); and
# the host build's libusdt.pc.
CROSS_UNIT_EXCLUDE := test_specids test_bpf_header test_list test_header_link \
	test_libbpf_version test_version
CROSS_UNIT := $(filter-out $(CROSS_UNIT_EXCLUDE),\
	$(patsubst tests/unit/%.c,%,$(UNIT_SRCS)))
# USDT_CROSS_BUILD: a test that compares with libbpf does without it.
CROSS_CFLAGS := $(filter-out $(SAN_FLAGS),$(ALL_CFLAGS)) -DUSDT_CROSS_BUILD \
	-DUSDT_NO_SKEL_HANDLER

# Filled in per target below.
CROSS_RUN :=
CROSS_BUILD :=
CROSS_COMPILE_ONLY :=

# $(1): triplet. $(2): arch (qemu's name).
define cross_target
CROSS_$(1)_CFLAGS := $(CROSS_CFLAGS) -I$(CROSS_DIR)/$(1)/sysroot/usr/include
CROSS_$(1)_LIBDIRS := $(abspath $(CROSS_DIR)/$(1)/sysroot)/usr/lib/$(1) \
	$(abspath $(CROSS_DIR)/$(1)/sysroot)/lib/$(1)
CROSS_$(1)_OBJS := $(patsubst %.c,$(CROSS_DIR)/$(1)/%.o,$(CROSS_LIB_SRCS))

$$(CROSS_$(1)_OBJS): $(CROSS_DIR)/$(1)/%.o: %.c $(HDRS)
	$$(call msg,CC,$$@)
	@mkdir -p $$(@D)
	$(Q)$(1)-gcc $$(CROSS_$(1)_CFLAGS) -fvisibility=hidden -c $$< -o $$@

$(CROSS_DIR)/$(1)/libusdt.a: $$(CROSS_$(1)_OBJS)
	$$(call msg,AR,$$@)
	$(Q)rm -f $$@ && $(1)-ar rcs $$@ $$^

CROSS_BUILD += $(CROSS_DIR)/$(1)/libusdt.a

ifneq ($(wildcard $(CROSS_DIR)/$(1)/sysroot/usr/lib/$(1)/libcmocka.so),)
CROSS_$(1)_BINS := $(patsubst %,$(CROSS_DIR)/$(1)/tests/unit/%,$(CROSS_UNIT))
CROSS_$(1)_WRAPS := $(patsubst %,$(CROSS_DIR)/tests/$(2)/unit/%,$(CROSS_UNIT))

# DT_RPATH, not DT_RUNPATH: the sysroot must also serve libelf's own
# libz.so.1, and a RUNPATH only serves the program's direct needs.
$$(CROSS_$(1)_BINS): $(CROSS_DIR)/$(1)/tests/unit/%: tests/unit/%.c \
		$(CROSS_DIR)/$(1)/libusdt.a $(TEST_HDRS) $(HDRS)
	$$(call msg,CC,$$@)
	@mkdir -p $$(@D)
	$(Q)$(1)-gcc $$(CROSS_$(1)_CFLAGS) -Itests -Ibpf $$< -o $$@ \
		$(CROSS_DIR)/$(1)/libusdt.a $$(LDFLAGS_$$*) \
		-Wl,--disable-new-dtags \
		$$(foreach d,$$(CROSS_$(1)_LIBDIRS),-L$$(d) -Wl,-rpath,$$(d) \
		-Wl,-rpath-link,$$(d)) -lcmocka -lelf

$$(CROSS_$(1)_WRAPS): $(CROSS_DIR)/tests/$(2)/unit/%: \
		$(CROSS_DIR)/$(1)/tests/unit/%
	@mkdir -p $$(@D)
	$(Q)printf '#!/bin/sh\n# Made by lab/cross/cross.mk.\nexec qemu-%s -L /usr/%s %s "$$$$@"\n' \
		$(2) $(1) $$(abspath $$<) > $$@
	$(Q)chmod +x $$@

# The tests look for the fixtures in ../../fixtures from the program.
$(CROSS_DIR)/$(1)/fixtures:
	@mkdir -p $$(@D)
	$(Q)ln -sfn $(abspath $(FIXTURE_DIR)) $$@

CROSS_BUILD += $$(CROSS_$(1)_WRAPS) $(CROSS_DIR)/$(1)/fixtures
CROSS_RUN += $$(CROSS_$(1)_WRAPS)
else
CROSS_$(1)_TOBJS := $(patsubst %,$(CROSS_DIR)/$(1)/tests/unit/%.o,$(CROSS_UNIT))

$$(CROSS_$(1)_TOBJS): $(CROSS_DIR)/$(1)/tests/unit/%.o: tests/unit/%.c \
		$(TEST_HDRS) $(HDRS)
	$$(call msg,CC,$$@)
	@mkdir -p $$(@D)
	$(Q)$(1)-gcc $$(CROSS_$(1)_CFLAGS) -Itests -Ibpf -c $$< -o $$@

CROSS_BUILD += $$(CROSS_$(1)_TOBJS)
CROSS_COMPILE_ONLY += $(1)
endif
endef

$(foreach t,$(CROSS_TRIPLETS),\
	$(eval $(call cross_target,$(t),$(firstword $(subst -, ,$(t))))))

.PHONY: cross-check cross-build cross-test

# The target libraries are unpacked first, in their own make run, so that
# the second run sees which targets have them.
cross-check: deps
	$(Q)lab/cross/deps-cross.sh $(CROSS_DIR) $(CROSS_TRIPLETS)
	$(Q)$(MAKE) --no-print-directory cross-test

cross-build: $(CROSS_BUILD) $(FIXTURES)

cross-test: cross-build
	$(if $(CROSS_RUN),,$(error no target has its libraries: run make cross-check))
	$(Q)$(foreach t,$(CROSS_COMPILE_ONLY),echo "$(t): library and unit \
		tests compiled, not run: $$(cat $(CROSS_DIR)/$(t)/unavailable)";)
	$(Q)tests/run.sh $(TEST_TIMEOUT) $(CROSS_RUN)
