#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
#
# The library's layers, bottom up, one folder each (docs/library.md,
# Layout): a file includes headers of its own layer and of lower ones
# only, written from src/ ("store/chunks.h"), and no headers include each
# other in a loop. src/ itself holds the manager's face and the tool's
# private header, above every layer. Run by `make check`; prints every
# include that breaks the order, and fails.
set -eu
cd "$(dirname "$0")/.."

LAYERS="base reader proc kernel store attach libbpf"

rank() {
	case $1 in
	src/*/*) layer=${1#src/}; layer=${layer%%/*} ;;
	src/*) echo 99; return ;;
	*) echo -1; return ;;
	esac
	n=0
	for l in $LAYERS; do
		[ "$l" = "$layer" ] && { echo $n; return; }
		n=$((n + 1))
	done
	echo "layers.sh: $1: folder '$layer' is no layer (LAYERS)" >&2
	echo 100
}

bad=0
files=$(find src -name '*.[ch]' | sort)
for f in $files; do
	r=$(rank "$f")
	for inc in $(sed -n 's/^#include "\([^"]*\)".*/\1/p' "$f"); do
		case $inc in
		*/*) ;;
		*) continue ;;	# usdt.h (include/), system-like
		esac
		case $inc in ../*) continue ;; esac	# bpf/usdt_spec.h, shared
		if [ ! -f "src/$inc" ]; then
			echo "$f: includes \"$inc\", not a path from src/" >&2
			bad=1
			continue
		fi
		ri=$(rank "src/$inc")
		if [ "$ri" -gt "$r" ]; then
			echo "$f: includes $inc, a higher layer" >&2
			bad=1
		fi
	done
done

# Loops among headers: follow each header's includes, depth-first.
visit() {	# visit HEADER PATH_SO_FAR
	for inc in $(sed -n 's/^#include "\([a-z_]*\/[^"]*\.h\)".*/\1/p' "src/$1"); do
		case " $2 " in
		*" $inc "*) echo "include loop: $2 $inc" >&2; bad=1; continue ;;
		esac
		visit "$inc" "$2 $inc"
	done
}
for h in $(find src -name '*.h' | sed 's|^src/||' | sort); do
	visit "$h" "$h"
done

[ $bad = 0 ] || exit 1
echo "layers: $(echo "$files" | wc -l) files of src/ include down the layers ($LAYERS), no loop"
