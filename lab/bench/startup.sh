#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# Time to the first event, `usdt trace` next to bpftrace (when installed),
# as the median of ROUNDS runs each and their ratio: from the tool's start
# to its exit after one hit, on a process that fires all along, for one
# probe of the tool's fixture and for Debian's python3 with 'python:*'
# (with python:line firing). Asserts nothing (root).
#
#   lab/bench/startup.sh USDT_BIN OBJDIR [ROUNDS]
set -eu
usdt=$1
dir=$2
rounds=${3:-5}
tt=$(realpath "$dir/tests/fixtures/trace_target")

now() { date +%s.%N; }

# Median seconds of "$@" run $rounds times, its output dropped.
median() {
	i=0
	while [ "$i" -lt "$rounds" ]; do
		t0=$(now)
		"$@" > /dev/null 2>&1 || true
		t1=$(now)
		echo "$t0 $t1" | awk '{ printf "%.4f\n", $2 - $1 }'
		i=$((i + 1))
	done | sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'
}

compare() {
	what=$1 pid=$2 target=$3 probe=$4
	u=$(median "$usdt" trace -q -n 1 -p "$pid" "$target" "$probe")
	if command -v bpftrace > /dev/null; then
		b=$(median bpftrace -p "$pid" -e "usdt:$target:$probe { exit(); }")
		echo "$what $u $b" | awk '{ printf "startup %s: usdt %.3f s, bpftrace %.3f s, ratio %.2f (goal <= 0.5)\n", $1, $2, $3, $2 / $3 }'
	else
		echo "startup $what: usdt $u s (no bpftrace to compare with)"
	fi
}

"$tt" 1000000 2 0 > /dev/null &
tpid=$!
py=/usr/bin/python3
"$py" -c 'import time
def f(n): return n
while True:
    [f(i) for i in range(100)]
    time.sleep(0.002)' &
ppid=$!
trap 'kill $tpid $ppid 2>/dev/null' EXIT
sleep 0.5
compare one-probe "$tpid" "$tt" tt:one
compare python-all "$ppid" "$(realpath "$py")" 'python:*'
