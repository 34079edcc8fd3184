#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# The instructions of one cache hit (Cache::lookup finding its entry), as
# callgrind counts them in a release build of examples/cache_hit.rs: a
# cache of the module's default size, filled, then every entry in it
# looked up ROUNDS times. callgrind counts the example's function `hit`
# alone (--toggle-collect), which only calls Cache::lookup, in two runs,
# of ROUNDS and 2 x ROUNDS rounds; the cost of a hit is the difference of
# the two counts over the difference of the hits, so that nothing constant
# is in it. Instruction counts repeat exactly from run to run.
#
#   callgrind-hit.sh [MAX]
#
# Prints "cache hit: N instructions (callgrind, release; ...; by way:
# A/B/C/D)", N the mean over every entry of the cache, A to D the cost of a
# hit in each way of a set (the same measure on a cache of one full set: a
# hit costs more the further it scans); exits 1 when N is above MAX
# (default 80) or when it cannot measure (a line says which). Builds into
# $CARGO_TARGET_DIR when set, as cargo does. Installs valgrind (apt-get)
# when it is missing.
here=$(cd "$(dirname "$0")" && pwd)
. "$here/../scripts/lib.sh"

max=${1:-80}
rounds=${MMAP3_HIT_ROUNDS:-10}

if ! command -v valgrind >/dev/null; then
	log "installing valgrind (apt-get)"
	[ "$(id -u)" = 0 ] || die "valgrind not found: run as root (apt-get needs it), or install valgrind"
	export DEBIAN_FRONTEND=noninteractive
	apt-get update -q >/dev/null
	apt-get install -y -q --no-install-recommends valgrind >/dev/null
fi

# The example's path, from cargo's own account of what it built.
exe=$(cd "$here" &&
	cargo build --quiet --release --example cache_hit --message-format=json-render-diagnostics |
	sed -n 's/.*"executable":"\([^"]*\)".*/\1/p' | tail -n 1) || die "cargo build failed"
[ -n "$exe" ] && [ -x "$exe" ] || die "cargo did not build examples/cache_hit.rs"

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# callgrind_run ROUNDS [WAY]: sets hits and ir, the hits and the instructions of
# `hit` in a run of ROUNDS rounds (of the entry in way WAY alone if given).
callgrind_run() {
	local out=$tmp/callgrind.$1
	hits=$(valgrind --tool=callgrind --callgrind-out-file="$out" \
		--toggle-collect='cache_hit::hit' "$exe" "$@" 2>"$tmp/log" |
		sed -n 's/^hits: //p') || { cat "$tmp/log" >&2; die "callgrind run of $* failed"; }
	ir=$(sed -n 's/^\(summary\|totals\): *\([0-9][0-9]*\).*/\2/p' "$out" | head -n 1)
	[ -n "$hits" ] && [ -n "$ir" ] || { cat "$tmp/log" >&2; die "no count from the run of $*"; }
}

# per [WAY]: sets per, the instructions of a hit, from two runs, and n,
# the hits it is the mean of.
per() {
	local h1 i1
	callgrind_run "$rounds" "$@"
	h1=$hits i1=$ir
	callgrind_run $((2 * rounds)) "$@"
	[ "$hits" -gt "$h1" ] && [ "$ir" -gt "$i1" ] ||
		die "nothing counted: $h1 and $hits hits, $i1 and $ir instructions"
	n=$((hits - h1))
	per=$(awk -v d=$((ir - i1)) -v h=$n 'BEGIN { printf "%.1f", d / h }')
}

ways=()
for way in 0 1 2 3; do
	per "$way"
	ways+=("$per")
done
per
echo "cache hit: $per instructions (callgrind, release; mean of $n hits; by way: $(IFS=/; echo "${ways[*]}"))"
awk -v p="$per" -v m="$max" 'BEGIN { exit !(p <= m) }' || die "more than $max instructions"
