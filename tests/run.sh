#!/bin/bash
# Run test programs, each in its own process under a timeout, and end with
# one line for the whole suite: "N passed, N failed, N skipped".
#
#   tests/run.sh TIMEOUT_SECONDS PROGRAM...
#
# Counts come from each program's cmocka summary. A program that crashes,
# times out or exits non-zero without a cmocka failure counts one failure.
# A kernel test that cannot run prints "SKIP: why" and exits 77; under
# CI=true that is a failure.
set -u
timeout_s=$1
shift

passed=0 failed=0 skipped=0
failed_names=()

for prog in "$@"; do
	name=${prog#*/tests/}
	echo "=== $name"
	out=$(mktemp)
	# TEST_WRAPPER: e.g. valgrind (see `make valgrind`).
	timeout --kill-after=10 "$timeout_s" ${TEST_WRAPPER:-} "$prog" 2>&1 | tee "$out"
	rc=${PIPESTATUS[0]}
	p=$(sed -n 's/^\[  PASSED  \] \([0-9]*\) test.*/\1/p' "$out" | tail -n1)
	f=$(sed -n 's/^\[  FAILED  \] \([0-9]*\) test.*/\1/p' "$out" | tail -n1)
	s=$(sed -n 's/^\[  SKIPPED \] \([0-9]*\) test.*/\1/p' "$out" | tail -n1)
	p=${p:-0} f=${f:-0} s=${s:-0}
	if [ "$rc" = 77 ]; then
		if [ "${CI:-}" = true ]; then
			echo "*** $name: skipped under CI=true: counted as a failure"
			f=$((f + 1))
		else
			s=$((s + 1))
		fi
	elif [ "$rc" = 124 ] || [ "$rc" = 137 ]; then
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
	[ "$f" != 0 ] && failed_names+=("$name")
	passed=$((passed + p)) failed=$((failed + f)) skipped=$((skipped + s))
	rm -f "$out"
done

echo
if [ ${#failed_names[@]} != 0 ]; then
	echo "failing programs: ${failed_names[*]}"
fi
echo "$passed passed, $failed failed, $skipped skipped"
[ "$failed" = 0 ]
