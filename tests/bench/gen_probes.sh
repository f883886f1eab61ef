#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# Write a C program with N USDT call sites, each with one argument, fired
# once each when the program runs: N distinct probes (gen:p0 .. gen:pN-1),
# or with NAMES, N sites of NAMES probes (site i is gen:p<i % NAMES>). For
# measuring `usdt trace` on files with many probes (libjvm has about 500)
# and attaching at scale (bench_scale.c). With MIXED (a third argument),
# sites are shaped like real code's: site i has i % 13 arguments, the
# first the constant i (so no two sites share a spec), then a rotation of
# a local on the stack, a global array's element, a register and a short.
#
#   tests/bench/gen_probes.sh N [NAMES [mixed]] > many.c && cc -O0 many.c -o many
set -eu
n=$1
names=${2:-$1}
mixed=${3:-}
echo '#include <sys/sdt.h>'
echo 'volatile int g[64];'
echo 'int main(int argc, char **argv)'
echo '{'
echo '	long v = argc;'
echo '	short s = (short)argc;'
i=0
while [ "$i" -lt "$n" ]; do
	if [ -z "$mixed" ]; then
		echo "	STAP_PROBE1(gen, p$((i % names)), v);"
		i=$((i + 1))
		continue
	fi
	k=$((i % 13))
	if [ "$k" -eq 0 ]; then
		echo "	STAP_PROBE(gen, p$((i % names)));"
	else
		args="$i"
		j=1
		while [ "$j" -lt "$k" ]; do
			case $(((i + j) % 4)) in
			0) args="$args, v" ;;
			1) args="$args, g[$(((i + j) % 64))]" ;;
			2) args="$args, v + $j" ;;
			3) args="$args, s" ;;
			esac
			j=$((j + 1))
		done
		echo "	STAP_PROBE$k(gen, p$((i % names)), $args);"
	fi
	i=$((i + 1))
done
echo '	(void)argv;'
echo '	return 0;'
echo '}'
