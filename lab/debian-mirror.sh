#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
#
# Print the Debian archive this machine's apt already uses, so that no
# script names a mirror host of its own:
#
#   mirror=$(lab/debian-mirror.sh)
#
# $DEBIAN_MIRROR, when set, wins. Otherwise the first URI of a `deb`
# source for Debian's main archive (not its security archive) is taken from
# the deb822 files /etc/apt/sources.list.d/*.sources (their `URIs:` field),
# else from the one-line format of /etc/apt/sources.list and
# /etc/apt/sources.list.d/*.list. APT_SOURCES_DIR and APT_SOURCES_LIST
# point elsewhere (the tests). Exit status 1, with a message, when none is
# found.
set -e

if [ -n "${DEBIAN_MIRROR:-}" ]; then
	echo "$DEBIAN_MIRROR"
	exit 0
fi

dir=${APT_SOURCES_DIR:-/etc/apt/sources.list.d}
list=${APT_SOURCES_LIST:-/etc/apt/sources.list}

# deb822: stanzas separated by blank lines; a stanza counts when its Types
# has `deb`, its Suites are not security suites and it is not disabled.
from_deb822() {
	awk '
	function flush() {
		if (types ~ /(^| )deb( |$)/ && uris != "" && suites !~ /-security/ &&
		    enabled !~ /^[Nn][Oo]$/) {
			split(uris, u, " ")
			print u[1]
			found = 1
			exit
		}
		types = uris = suites = enabled = ""
	}
	/^[ \t]*#/ { next }
	/^[ \t]*$/ { flush(); next }
	{
		key = tolower($1); sub(/:$/, "", key)
		val = $0; sub(/^[^:]*:[ \t]*/, "", val)
		if (key == "types") types = val
		else if (key == "uris") uris = val
		else if (key == "suites") suites = val
		else if (key == "enabled") enabled = val
	}
	END { if (!found) flush() }
	' "$@"
}

# One-line format: `deb [options] URI SUITE COMPONENT...`.
from_list() {
	awk '
	$1 != "deb" { next }
	{
		i = 2
		if ($i ~ /^\[/) { while (i <= NF && $i !~ /\]$/) i++; i++ }
		if ($(i + 1) ~ /-security/) next
		print $i
		exit
	}
	' "$@"
}

uri=""
for f in "$dir"/*.sources; do
	[ -r "$f" ] || continue
	uri=$(from_deb822 "$f")
	[ -n "$uri" ] && break
done
if [ -z "$uri" ]; then
	for f in "$list" "$dir"/*.list; do
		[ -r "$f" ] || continue
		uri=$(from_list "$f")
		[ -n "$uri" ] && break
	done
fi
if [ -z "$uri" ]; then
	echo "debian-mirror.sh: no Debian archive in the system's apt sources" \
		"($dir/*.sources, $list); set DEBIAN_MIRROR" >&2
	exit 1
fi
echo "${uri%/}"
