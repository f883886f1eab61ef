#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# Write a C program with N distinct USDT probes (gen:p0 .. gen:pN-1), each
# with one argument, fired once each when the program runs. For measuring
# `usdt trace` on files with many probes (libjvm has about 500).
#
#   tests/bench/gen_probes.sh N > many.c && cc -O0 many.c -o many
set -eu
n=$1
echo '#include <sys/sdt.h>'
echo 'int main(int argc, char **argv)'
echo '{'
echo '	long v = argc;'
i=0
while [ "$i" -lt "$n" ]; do
	echo "	STAP_PROBE1(gen, p$i, v);"
	i=$((i + 1))
done
echo '	(void)argv;'
echo '	return 0;'
echo '}'
