#!/bin/sh
# Checks that a shared library exports exactly the functions its public header
# declares with MXK_API: `nm -D --defined-only LIB` against the MXK_API
# declarations of HEADER (names the toolchain reserves, starting with "__", such
# as sanitizer instrumentation, are left out). Prints the differences and fails
# on any; also fails when the header declares fewer than MIN functions (a broken
# extraction must not pass). Further headers of the same library (libmxk's
# mxk_recordio.h) may follow MIN; their declarations count too.
# Usage: check_exports.sh LIB HEADER MIN [HEADER...]
set -eu
lib=$1 header=$2 min=$3
shift 3
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
nm -D --defined-only "$lib" | awk '{print $NF}' | grep -v '^__' | sort -u >"$tmp/exported"
# A declaration: "MXK_API <type> [*]name(" on one line.
cat "$header" "$@" | grep -o '^MXK_API [^(]*(' | sed -E 's/.*[ *]([A-Za-z_0-9]+)\($/\1/' | sort -u >"$tmp/declared"
n=$(wc -l <"$tmp/declared")
if [ "$n" -lt "$min" ]; then
    echo "$header: only $n MXK_API declarations found (expected at least $min)" >&2
    exit 1
fi
if ! diff "$tmp/declared" "$tmp/exported" >"$tmp/diff"; then
    echo "$(basename "$lib") exports differ from the MXK_API declarations of $header" >&2
    echo "(< declared, not exported; > exported, not declared):" >&2
    grep '^[<>]' "$tmp/diff" >&2
    exit 1
fi
echo "$(basename "$lib"): $n exported functions, all declared in $(basename "$header")"
