#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# How long `usdt trace` takes to start tracing and to end, on files with
# many probes: a generated one (N probes, default 20000) and, when
# installed, libjvm; then what a hit costs, with and without --listen
# (HITS hits, default 2000000). Prints seconds; asserts nothing (root).
#
#   lab/bench/trace_scale.sh USDT_BIN OBJDIR [N]
set -eu
usdt=$1
dir=$2
n=${3:-20000}
many=$dir/bench_many_probes

if [ ! -x "$many" ] || [ "$(cat "$many.n" 2>/dev/null)" != "$n" ]; then
	"$(dirname "$0")/../../tests/fixtures/gen_probes.sh" "$n" > "$many.c"
	${CC:-cc} -O0 -o "$many" "$many.c"
	echo "$n" > "$many.n"
fi

now() { date +%s.%N; }

# Start: from the tool's start to the release of its -c command (which
# prints the time); total: to the tool's exit, links destroyed.
measure() {
	t0=$(now)
	"$usdt" trace --count -c "date +%s.%N" "$1" > "$dir/bench_trace.out"
	t2=$(now)
	t1=$(head -n 1 "$dir/bench_trace.out")
	awk -v a="$t0" -v b="$t1" -v c="$t2" -v what="$2" \
		'BEGIN { printf "%s: start %.3f s, start to end %.3f s\n", what, b - a, c - a }'
}

measure "$many" "$n generated probes"
for jvm in /usr/lib/jvm/*/lib/server/libjvm.so; do
	[ -f "$jvm" ] || continue
	sites=$("$usdt" list "$jvm" | wc -l)
	measure "$jvm" "libjvm, $sites call sites ($jvm)"
done

# The cost of a hit: one probe fired in a tight loop, untraced, counted,
# and counted while --listen serves and a scraper reads /metrics every
# 50 ms (it must add nothing a hit: the server is not on the hit's path);
# the same for --hist, whose --listen adds the sum (one map update more).
hits=$dir/bench_hits
hits_n=${HITS:-2000000}
if [ ! -x "$hits" ]; then
	cat > "$hits.c" <<'C'
#include <stdio.h>
#include <stdlib.h>
#include <sys/sdt.h>
#include <time.h>

int main(int argc, char **argv)
{
	long n = strtol(argv[1], NULL, 10), i;
	struct timespec a, b;

	clock_gettime(CLOCK_MONOTONIC, &a);
	for (i = 0; i < n; i++)
		STAP_PROBE1(bh, hit, i);
	clock_gettime(CLOCK_MONOTONIC, &b);
	printf("ns/hit %.1f\n", ((b.tv_sec - a.tv_sec) * 1e9 +
				(b.tv_nsec - a.tv_nsec)) / n);
	return 0;
}
C
	${CC:-cc} -O2 -o "$hits" "$hits.c"
fi

# A port of 127.0.0.1 free just now.
free_port() {
	python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

# hit_cost WHAT [OPTIONS...]: ns a hit, the best of 3 runs.
hit_cost() {
	what=$1
	shift
	best=
	for run in 1 2 3; do
		out=$dir/bench_hits.out
		: > "$out"
		port=
		case " $* " in *" --listen "*) port=$(free_port) ;; esac
		if [ -z "$*" ]; then
			"$hits" "$hits_n" > "$out"
		else
			# shellcheck disable=SC2086
			"$usdt" trace -q "$@" ${port:+"127.0.0.1:$port"} \
				-c "$hits $hits_n" "$hits" bh:hit > "$out" 2>&1 &
			tool=$!
			scraper=
			if [ -n "$port" ]; then
				python3 -c '
import sys, time, urllib.request
while True:
    try:
        urllib.request.urlopen("http://127.0.0.1:%s/metrics" % sys.argv[1], timeout=5).read()
    except Exception:
        pass
    time.sleep(0.05)' "$port" &
				scraper=$!
			fi
			while ! grep -q "ns/hit" "$out" && kill -0 "$tool" 2>/dev/null; do
				sleep 0.05
			done
			[ -n "$scraper" ] && kill "$scraper"
			kill -INT "$tool" 2>/dev/null || true
			wait "$tool" || true
		fi
		v=$(sed -n 's/^ns\/hit //p' "$out")
		if [ -z "$best" ] || awk -v a="$v" -v b="$best" 'BEGIN { exit !(a < b) }'; then
			best=$v
		fi
	done
	echo "$what: $best ns a hit ($hits_n hits, best of 3)"
}

hit_cost "untraced"
hit_cost "--count" --count
hit_cost "--count --listen, scraped every 50 ms" --count --listen
hit_cost "--hist 0" --hist 0
hit_cost "--hist 0 --listen, scraped every 50 ms" --hist 0 --listen
