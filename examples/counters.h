/* SPDX-License-Identifier: BSD-2-Clause */
/* The per-attach value of examples/counters.bpf.c: a configuration that
 * user space sets at attach, and counters the BPF program keeps. */
#ifndef __COUNTERS_H
#define __COUNTERS_H

struct counter {
	/* Configuration: count hits whose first argument is >= min_arg. */
	long long min_arg;
	/* State: every hit, and those counted. */
	unsigned long long hits;
	unsigned long long counted;
};

#endif
