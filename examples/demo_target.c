// SPDX-License-Identifier: BSD-2-Clause
/*
 * The target of `make demo`: a small program whose USDT probes pass
 * arguments of the shapes a real program's do, so `usdt list` and
 * `usdt trace` have something to show: integers of every width, signed
 * negatives, a string pointer, a double, a global read PC-relative, a
 * struct field, an array element, a probe with a semaphore (in
 * demo_sema.c), and one with twelve arguments.
 *
 *   demo_target [SECONDS]   fire every probe ten times a second
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/sdt.h>
#include <time.h>

struct request {
	int id;
	long bytes;
	const char *path;
};

/* Globals the probes read in place (x86: sym(%rip) operands). */
long demo_counter;
double demo_ratio = 0.5;
int demo_table[8] = { 2, 3, 5, 7, 11, 13, 17, 19 };

void demo_sema_fire(int round);

/* noinline keeps each probe's operands in registers and memory the way a
 * real function's would be, instead of folded into constants. */
__attribute__((noinline)) static void fire(int round, struct request *req,
					   volatile int *idx)
{
	int8_t i8 = (int8_t)(-round);
	uint8_t u8 = (uint8_t)(200 + round);
	int16_t i16 = (int16_t)(-1000 * round);
	uint16_t u16 = (uint16_t)(60000 + round);
	int32_t i32 = -100000 * round;
	uint32_t u32 = 4000000000u + (uint32_t)round;
	int64_t i64 = -5000000000LL * round;
	uint64_t u64 = 18000000000000000000ULL + (uint64_t)round;
	int k = *idx;

	STAP_PROBE8(demo, ints, i8, u8, i16, u16, i32, u32, i64, u64);
	STAP_PROBE2(demo, negative, -round - 1, (long)-round * 1000000);
	STAP_PROBE2(demo, string, req->path, round);
	STAP_PROBE1(demo, ratio, demo_ratio);
	STAP_PROBE1(demo, global, demo_counter);
	STAP_PROBE2(demo, request, req->id, req->bytes);
	STAP_PROBE2(demo, element, demo_table[k], k);
	STAP_PROBE12(demo, twelve, round, round + 1, round + 2, round + 3,
		     round + 4, round + 5, round + 6, round + 7, round + 8,
		     round + 9, round + 10, round + 11);
}

int main(int argc, char **argv)
{
	double seconds = argc > 1 ? atof(argv[1]) : 3;
	struct timespec tick = { 0, 100 * 1000 * 1000 };
	struct request req = { .path = "/index.html" };
	volatile int idx = 0;
	int round;

	for (round = 0; round < seconds * 10; round++) {
		demo_counter += 3;
		demo_ratio = round / 4.0;
		req.id = round;
		req.bytes = 512L * round;
		idx = round % 8;
		fire(round, &req, &idx);
		demo_sema_fire(round);
		nanosleep(&tick, NULL);
	}
	printf("demo_target: %d rounds\n", round);
	return 0;
}
