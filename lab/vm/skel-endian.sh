#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
#
# A bpftool skeleton for a big-endian BPF object (s390x):
#
#   lab/vm/skel-endian.sh SKEL_H OBJ_EL OBJ_EB > NEW_SKEL_H
#
# bpftool on a little-endian host refuses to open a big-endian object, so
# SKEL_H is generated from OBJ_EL, the same source built with -target
# bpfel, and this script swaps the object it embeds for OBJ_EB. Sound
# because a skeleton holds nothing else from the object's bytes: its maps,
# programs and variables are found by name when it is opened, and the
# mmap()ed data structs it declares have the same layout for both byte
# orders (the target reads them in its own order). To be sure the two
# objects are the same program, their sections, data sizes, variables and
# functions must match, or nothing is written.
set -e

[ $# = 3 ] || { echo "usage: $0 SKEL_H OBJ_EL OBJ_EB" >&2; exit 2; }
skel=$1 el=$2 eb=$3
READELF=${READELF:-llvm-readelf}

# What a skeleton depends on: every section's name, the sizes of the data
# sections, every variable's name, place and size, every function's name.
# (Code differs between byte orders: the BPF side reads bit-fields.)
shape() {
	"$READELF" -S -s --wide "$1" | awk '
	/^ *\[ *[0-9]+\]/ {
		sub(/^ *\[ *[0-9]+\] */, "")
		print $1, ($1 ~ /^(\.maps|\.bss|\.data|\.rodata|\.kconfig|license)/ ? $5 : "")
	}
	/^ *[0-9]+: / && $4 == "OBJECT" { print $8, $2, $3, $7 }
	/^ *[0-9]+: / && $4 == "FUNC" { print $8 }'
}
if [ "$(shape "$el")" != "$(shape "$eb")" ]; then
	echo "skel-endian.sh: $el and $eb differ in sections or symbols" >&2
	exit 1
fi
grep -q '^	return (const void \*)"\\$' "$skel" || {
	echo "skel-endian.sh: $skel: no embedded object found" >&2
	exit 1
}

size=$(wc -c < "$eb")
od -An -v -tx1 "$eb" | awk -v skel="$skel" -v size="$size" '
	BEGIN {
		while ((getline line < skel) > 0) {
			if (state == 0 && line ~ /^\t\*sz = [0-9]+;$/) {
				print "\t*sz = " size ";"
				continue
			}
			if (state == 0 && line ~ /^\treturn \(const void \*\)"\\$/) {
				print line
				state = 1
				continue
			}
			if (state == 1) {
				# The literal ends with the line ending ";.
				if (line !~ /";$/)
					continue
				state = 2
				break
			}
			print line
		}
		n = 0
	}
	{
		for (i = 1; i <= NF; i++) {
			printf "\\x%s", $i
			if (++n % 32 == 0)
				printf "\\\n"
		}
	}
	END {
		if (state != 2)
			exit 1
		printf "\";\n"
		while ((getline line < skel) > 0)
			print line
	}'
