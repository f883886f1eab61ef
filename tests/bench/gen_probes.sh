#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# Write a C program with N USDT call sites, each with one argument, fired
# once each when the program runs: N distinct probes (gen:p0 .. gen:pN-1),
# or with NAMES, N sites of NAMES probes (site i is gen:p<i % NAMES>). For
# measuring `usdt trace` on files with many probes (libjvm has about 500)
# and attaching at scale (bench_scale.c).
#
#   tests/bench/gen_probes.sh N [NAMES] > many.c && cc -O0 many.c -o many
set -eu
n=$1
names=${2:-$1}
echo '#include <sys/sdt.h>'
echo 'int main(int argc, char **argv)'
echo '{'
echo '	long v = argc;'
i=0
while [ "$i" -lt "$n" ]; do
	echo "	STAP_PROBE1(gen, p$((i % names)), v);"
	i=$((i + 1))
done
echo '	(void)argv;'
echo '	return 0;'
echo '}'
