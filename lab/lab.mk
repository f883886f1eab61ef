# SPDX-License-Identifier: BSD-2-Clause
#
# What only CI and benchmarking use, the Makefile's one entry into lab/.
# Included after the other fragments: it builds on their variables
# (LIB_SRCS, UNIT_SRCS, KERNEL_SRCS, FIXTURE_DIR, TOOL, ...).
#
#   lab/libbpf/libbpf.mk   the libbpf prefixes of LIBBPF=1.7 and make bench
#   lab/bench/bench.mk     make bench, make bench-trace (docs/bench.md)
#   lab/cross/cross.mk     make cross-check (docs/ci.md)
#   lab/vm/vm.mk           make vm-check (docs/vm.md)
#
# The scripts beside them are run by .ci/run (chroot.sh, packages-test.sh,
# consumer-test.sh; docs/ci.md) or by the others: apt-private.sh and
# debian-mirror.sh fetch from the Debian archive the system's apt uses.

include lab/libbpf/libbpf.mk
include lab/bench/bench.mk
include lab/cross/cross.mk
include lab/vm/vm.mk
