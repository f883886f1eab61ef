/* SPDX-License-Identifier: BSD-2-Clause */
#ifndef __BENCH_SCALE_H
#define __BENCH_SCALE_H

#include <stddef.h>

/* Programs of owned.bpf.c: links usdt_manager__free() destroys. */
#define SCALE_OWNED 1000

/*
 * One scale round (bench_scale.c): load dir/scale.o (program "on_hit") as
 * impl ("ours", else libbpf) and attach each of the n probe names
 * gen:p0 .. of target, one call each, then destroy `sample` more links one
 * by one and the n links all at once; libusdt's then frees a manager
 * owning SCALE_OWNED links (dir/owned.o). Prints "scale
 * KEY VALUE" lines. libbpf's round ends the process. Returns 0 or -1.
 */
int scale_round(const char *impl, const char *dir, const char *target,
		size_t n, size_t sample);
/* Attach and teardown, of names names (of sites call sites in all), as
 * phases: "TAG PHASE_ms", "TAG PHASE_cpu_ms", "TAG PHASE_mapw" (grace
 * periods waited in outer-map calls) and "TAG PHASE_linkw" (kernel links
 * closed) for PHASE attach, detach, free (ours), close and teardown (the
 * three before it), TAG being "names" and sites ("names10003"); then
 * "TAG hwm_mb", "TAG base_mb", and ours "TAG glob_ms" (one attach of
 * gen:* over every site, between detach and free). */
int names_round(const char *impl, const char *dir, const char *target,
		size_t sites, size_t names);

#endif
