#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
#
# `make vm-check` for several ARCH:KERNEL pairs, two guests at a time (one
# vCPU each, on a 2-core machine), with one summary line for all:
#
#   lab/vm/matrix.sh arm64:6.12 s390x:6.12 riscv64:6.12 x86_64:6.1
#
# Everything is downloaded and built first, one pair after the other with
# make -j2; then the guests boot, JOBS (default 2) at a time, each into its
# own log, shown whole when it ends. Ends with "N passed, N failed,
# N skipped" summed over the guests and fails if any guest did.
set -u
cd "$(dirname "$0")/../.." || exit 1
jobs=${JOBS:-2}
logdir=build/vm/logs
mkdir -p "$logdir"
start=$(date +%s)

for p in "$@"; do
	if ! make --no-print-directory -j2 vm-prepare ARCH="${p%:*}" \
			KERNEL="${p#*:}"; then
		echo "vm matrix: $p: preparing failed"
		exit 1
	fi
done
echo "vm matrix: prepared in $(($(date +%s) - start)) s"

# Boot the pairs, $jobs at a time; each writes LOG and then LOG.rc.
running="" nrunning=0
finish_one() {
	while :; do
		for p in $running; do
			log=$logdir/$(echo "$p" | tr : -).log
			[ -f "$log.rc" ] || continue
			echo "---------------- vm $p (exit status $(cat "$log.rc"))"
			cat "$log"
			running=$(echo "$running" | tr ' ' '\n' | grep -vx "$p" |
				tr '\n' ' ')
			nrunning=$((nrunning - 1))
			return
		done
		sleep 2
	done
}
for p in "$@"; do
	log=$logdir/$(echo "$p" | tr : -).log
	rm -f "$log" "$log.rc"
	(make --no-print-directory vm-check ARCH="${p%:*}" KERNEL="${p#*:}" \
		> "$log" 2>&1; echo $? > "$log.rc") &
	running="$running $p" nrunning=$((nrunning + 1))
	[ "$nrunning" -ge "$jobs" ] && finish_one
done
while [ "$nrunning" -gt 0 ]; do
	finish_one
done
wait

passed=0 failed=0 skipped=0 bad=""
for p in "$@"; do
	log=$logdir/$(echo "$p" | tr : -).log
	line=$(grep -E '^[0-9]+ passed, [0-9]+ failed, [0-9]+ skipped$' "$log" |
		tail -n1)
	p_n=$(echo "$line" | sed -n 's/^\([0-9]*\) passed.*/\1/p')
	f_n=$(echo "$line" | sed -n 's/.* \([0-9]*\) failed.*/\1/p')
	s_n=$(echo "$line" | sed -n 's/.* \([0-9]*\) skipped$/\1/p')
	passed=$((passed + ${p_n:-0})) failed=$((failed + ${f_n:-0}))
	skipped=$((skipped + ${s_n:-0}))
	rc=$(cat "$log.rc")
	if [ "$rc" != 0 ]; then
		bad="$bad $p"
		# A guest that failed without a failing test (a crash, a
		# timeout, a build error) counts one failure.
		[ "${f_n:-0}" = 0 ] && failed=$((failed + 1))
	fi
	echo "vm matrix: $p: ${line:-no summary} (exit status $rc)"
done
echo "vm matrix: $(($(date +%s) - start)) s in all"
[ -n "$bad" ] && echo "failing guests:$bad"
echo "$passed passed, $failed failed, $skipped skipped"
[ -z "$bad" ]
