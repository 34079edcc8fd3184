#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# The perf series' own shell tests that need what the guest does not have
# (a C compiler), run on the host, as 'perf test' runs them, first with an
# unpatched perf (built from mmap3-base), then with the patched one: each
# checks behaviour that upstream perf has, so both must pass. The tests of
# what the series adds run with the patched perf only.
#
#   tests/perf/host-shell.sh
#
#   diff_rebuilt.sh   perf diff pairs a program rebuilt with another build-id
#   buildid_cache_mapped.sh (patched only)
#                     --buildid-cache-mapped with --buildid-mmap keeps a
#                     -z noseparate-code program that only map_files has, a
#                     program that exits at once, one kept at its second
#                     run, one recorded with -p and replaced during the
#                     session, and a recording with a full build-id cache
#                     (a 1 MB tmpfs) completes and says what it lost
#
# Builds both perfs (scripts/perf.sh, cached). Prints TAP; exits 1 when a
# test fails, 4 (skip) when this host cannot record.
. "$(dirname "$0")/../../scripts/lib.sh"

"$MMAP3_ROOT/scripts/perf.sh"
MMAP3_KERNEL=upstream "$MMAP3_ROOT/scripts/perf.sh"

tmp=$(mktemp -d /tmp/mmap3-host-shell.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
# Keep the user's build-id cache and perfconfig out of it.
export HOME=$tmp/home
mkdir -p "$HOME" "$tmp/bin-upstream" "$tmp/bin-patched"
ln -s "$(readlink -f "$PERF_UPSTREAM_BUILD/perf")" "$tmp/bin-upstream/perf"
ln -s "$(readlink -f "$PERF_BUILD/perf")" "$tmp/bin-patched/perf"

. "$MMAP3_ROOT/tests/perf/tap.sh"
echo "TAP version 13"
if ! "$tmp/bin-patched/perf" record -e task-clock -o "$tmp/probe.data" -- true \
	>"$tmp/probe.out" 2>&1; then
	sed 's/^/# /' "$tmp/probe.out" | head -5
	echo "1..0 # SKIP cannot record on this host (perf_event_paranoid=$(cat /proc/sys/kernel/perf_event_paranoid))"
	exit 4
fi
tests=(diff_rebuilt.sh)
patched_tests=(buildid_cache_mapped.sh)
echo "1..$((2 * ${#tests[@]} + ${#patched_tests[@]}))"
for t in "${tests[@]}"; do
	for which in upstream patched; do
		capture "$which-$t" env PATH="$tmp/bin-$which:$PATH" \
			sh "$PERF_SRC/tools/perf/tests/shell/$t"
		sed 's/^/# /' "$tmp/$which-$t.out"
		check "$t with the $which perf" [ "$(rc "$which-$t")" = 0 ]
	done
done
for t in "${patched_tests[@]}"; do
	capture "patched-$t" env PATH="$tmp/bin-patched:$PATH" \
		sh "$PERF_SRC/tools/perf/tests/shell/$t"
	sed 's/^/# /' "$tmp/patched-$t.out"
	check "$t with the patched perf" [ "$(rc "patched-$t")" = 0 ]
done
[ "$failed" = 0 ]
