# SPDX-License-Identifier: BSD-2-Clause
#
# libbpf releases other than the system's, each built by
# lab/libbpf/libbpf-VER.sh from Debian sid's source package into a
# prefix of its own, OUTDIR/prefix (OUTDIR/prefix/.done once complete).
# Two users: LIBBPF=VER, the whole build against one (the Makefile's
# LIBBPF_DIR and LIBBPF_STAMP), and make bench, which runs libbpf 1.7
# beside ours whatever LIBBPF says (LB17_DIR, below).

ifneq ($(LIBBPF),)
ifeq ($(wildcard lab/libbpf/libbpf-$(LIBBPF).sh),)
$(error LIBBPF=$(LIBBPF): no lab/libbpf/libbpf-$(LIBBPF).sh (known: 1.7))
endif
endif

LB17_DIR ?= build/libbpf-1.7
LB17_PREFIX := $(abspath $(LB17_DIR))/prefix

# One rule for every prefix in use: with LIBBPF=1.7 both users name the
# same one.
$(LB17_PREFIX)/.done: LIBBPF_SH = lab/libbpf/libbpf-1.7.sh $(LB17_DIR)
ifneq ($(LIBBPF),)
$(LIBBPF_STAMP): LIBBPF_SH = lab/libbpf/libbpf-$(LIBBPF).sh $(LIBBPF_DIR)

# make LIBBPF=VER deps: that libbpf too, after the Makefile's deps::
# has installed what its build needs.
deps::
	$(Q)lab/libbpf/libbpf-$(LIBBPF).sh $(LIBBPF_DIR)
endif
$(sort $(LB17_PREFIX)/.done $(LIBBPF_STAMP)):
	$(Q)$(LIBBPF_SH)
