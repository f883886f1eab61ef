#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# How long `usdt trace` takes to start tracing and to end, on files with
# many probes: a generated one (N probes, default 20000) and, when
# installed, libjvm. Prints seconds; asserts nothing (root).
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
