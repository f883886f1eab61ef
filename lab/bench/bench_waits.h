/* SPDX-License-Identifier: BSD-2-Clause */
#ifndef __BENCH_WAITS_H
#define __BENCH_WAITS_H

/*
 * Calls that wait for an RCU grace period, counted (bench_waits.c): every
 * update or delete of an outer map (BPF_MAP_TYPE_ARRAY_OF_MAPS or
 * HASH_OF_MAPS) waits for one before it returns. The bench links with
 * -Wl,--wrap for bpf_map_update_elem, bpf_map_update_batch,
 * bpf_map_delete_elem, bpf_map_delete_batch, close, dup2 and dup3, so
 * that every such call of the binary's own libbpf.a and libusdt.a goes
 * through here; a library linked as a shared object is not seen.
 */
struct bench_waits {
	unsigned long map_calls;	/* every update/delete call seen */
	unsigned long outer_calls;	/* of those, on an outer map */
	/* Grace periods waited: one per outer-map call, and before Linux
	 * 6.8 one per entry of an outer-map batch. */
	unsigned long waits;
	unsigned long closes;	/* close() calls, any descriptor's */
};

/* The counts since the process started. */
void bench_waits_now(struct bench_waits *w);
/* Does a batch on an outer map wait once (Linux 6.8+), not per entry? */
int bench_waits_batch_once(void);

#endif
