#!/bin/sh
# Run test programs, each in its own process under a timeout, and end with
# one line for the whole suite: "N passed, N failed, N skipped".
#
#   tests/run.sh TIMEOUT_SECONDS PROGRAM...
#
# Counts come from each program's cmocka summary ("[  PASSED  ] 3 test(s)."
# from cmocka 1.1.5, "[  FAILED  ] attach: 1 test(s), listed below:" with
# the group's name from 1.1.7). A program that crashes, times out or exits
# non-zero without a cmocka failure counts one failure. A kernel test that
# cannot run prints "SKIP: why" and exits 77; under CI=true that is a
# failure. Each program's time follows it ("--- NAME: N s"). Plain POSIX
# sh: it also runs under busybox in the guests of `make vm-check`, whose
# timeout has no --kill-after.
set -u
timeout_s=$1
shift

passed=0 failed=0 skipped=0
failed_names=""
out=$(mktemp)
rcf=$(mktemp)
trap 'rm -f "$out" "$rcf"' EXIT
# GNU timeout can follow up with SIGKILL; busybox's cannot.
kill_after=""
timeout -k 1 1 true 2>/dev/null && kill_after="-k 10"

# The count of cmocka's last "[  $1 ] [GROUP: ]N test(s)" line, or 0.
count() {
	n=$(sed -n "s/^\[  $1 *\] \([^ ]*: \)\{0,1\}\([0-9][0-9]*\) test.*/\2/p" \
		"$out" | tail -n1)
	echo "${n:-0}"
}

for prog in "$@"; do
	name=${prog#*/tests/}
	echo "=== $name"
	t0=$(date +%s)
	# TEST_WRAPPER: e.g. valgrind (see `make valgrind`).
	# shellcheck disable=SC2086
	{ timeout $kill_after "$timeout_s" ${TEST_WRAPPER:-} "$prog" 2>&1
	  echo $? > "$rcf"; } | tee "$out"
	rc=$(cat "$rcf")
	echo "--- $name: $(($(date +%s) - t0)) s"
	p=$(count PASSED) f=$(count FAILED) s=$(count SKIPPED)
	if [ "$rc" = 77 ]; then
		if [ "${CI:-}" = true ]; then
			echo "*** $name: skipped under CI=true: counted as a failure"
			f=$((f + 1))
		else
			s=$((s + 1))
		fi
	elif [ "$rc" = 124 ] || [ "$rc" = 137 ] || [ "$rc" = 143 ]; then
		# GNU timeout: 124; busybox's kills the program: 128 + SIGTERM.
		echo "*** $name: timed out after ${timeout_s}s"
		f=$((f + 1))
	elif [ "$rc" != 0 ] && [ "$f" = 0 ]; then
		echo "*** $name: exited with status $rc"
		f=$((f + 1))
	fi
	if [ "$s" != 0 ] && [ "${CI:-}" = true ] && [ "$rc" != 77 ]; then
		echo "*** $name: $s test(s) skipped under CI=true: counted as failures"
		f=$((f + s))
		s=0
	fi
	[ "$f" != 0 ] && failed_names="$failed_names $name"
	passed=$((passed + p)) failed=$((failed + f)) skipped=$((skipped + s))
done

echo
if [ -n "$failed_names" ]; then
	echo "failing programs:$failed_names"
fi
echo "$passed passed, $failed failed, $skipped skipped"
[ "$failed" = 0 ]
