#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# How perf reads a perf.data file with PERF_RECORD_MMAP3 records, on the host:
# the patched perf must use them, an unpatched one (built from mmap3-base)
# must not crash, and must say why it stops.
#
#   tests/perf/old-perf.sh
#
# Builds both perfs (scripts/perf.sh, cached), records 'perf test -w noploop'
# with the patched perf (a plain record: the host kernel has no MMAP3), turns
# its MMAP2 records into MMAP3 ones (tests/perf/mmap3-perf-data.py), runs
# both perfs on the result, and checks that 'perf inject -B' and
# 'perf inject --mmap2-buildid-all' of the patched perf make files the
# unpatched one reads, and that libperf's union perf_event keeps its size.
# Prints TAP; exits 1 when a check fails, 4 (skip) when this host cannot
# record.
. "$(dirname "$0")/../../scripts/lib.sh"

"$MMAP3_ROOT/scripts/perf.sh"
MMAP3_KERNEL=upstream "$MMAP3_ROOT/scripts/perf.sh"
new=$(readlink -f "$PERF_BUILD/perf")
old=$(readlink -f "$PERF_UPSTREAM_BUILD/perf")

tmp=$(mktemp -d /tmp/mmap3-old-perf.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
# Keep the user's build-id cache out of it.
export HOME=$tmp/home
mkdir -p "$HOME"

. "$MMAP3_ROOT/tests/perf/tap.sh"
# no_crash NAME: not killed by a signal (exit 129..159 from the shell; perf
# itself exits 255 for -1) and no sanitizer or abort text.
no_crash() {
	local r
	r=$(rc "$1")
	{ [ "$r" -le 128 ] || [ "$r" -ge 160 ]; } &&
		! grep -qE 'Segmentation fault|Aborted|core dumped|AddressSanitizer|perf: Segmentation' "$tmp/$1.out"
}
says_unknown() { grep -q 'Found [0-9]* unknown events' "$tmp/$1.out"; }

echo "TAP version 13"
log "recording 'perf test -w noploop 1' with $new"
if ! "$new" record -e task-clock -o "$tmp/mmap2.data" -- "$new" test -w noploop 1 \
	>"$tmp/record.out" 2>&1; then
	sed 's/^/# /' "$tmp/record.out" | head -5
	echo "1..0 # SKIP cannot record on this host (perf_event_paranoid=$(cat /proc/sys/kernel/perf_event_paranoid))"
	exit 4
fi
"$MMAP3_ROOT/tests/perf/mmap3-perf-data.py" -v "$tmp/mmap2.data" "$tmp/mmap3.data" |
	sed 's/^/# /'
bid=$("$new" buildid-list -i "$new")
echo "# build-id of $new: $bid"

# The patched perf.
capture new-script "$new" script -i "$tmp/mmap3.data" --show-mmap-events
check "patched perf script shows the MMAP3 record of perf with its build-id" \
	grep -qE "PERF_RECORD_MMAP3 .*<$bid> FOUND\]: r-xp $new\$" "$tmp/new-script.out"
check "patched perf script resolves samples through MMAP3 maps" \
	grep -q 'noploop' "$tmp/new-script.out"
capture new-report "$new" report -i "$tmp/mmap3.data" --stdio --sort sym
check "patched perf report: noploop is the top symbol, exit 0" \
	eval '[ "$(rc new-report)" = 0 ] && grep -v "^#" "$tmp/new-report.out" | grep -m1 "%" | grep -q noploop'
capture new-buildids "$new" buildid-list -i "$tmp/mmap3.data" --with-hits
check "patched perf buildid-list lists the build-id of perf" \
	grep -q "^$bid $new\$" "$tmp/new-buildids.out"

# The unpatched perf.
for cmd in script report inject buildid-list; do
	case $cmd in
	script) args=(script -i "$tmp/mmap3.data" --show-mmap-events) ;;
	report) args=(report -i "$tmp/mmap3.data" --stdio --sort sym) ;;
	inject) args=(inject -i "$tmp/mmap3.data" -o "$tmp/old-inject.data") ;;
	buildid-list) args=(buildid-list -i "$tmp/mmap3.data" --with-hits) ;;
	esac
	capture "old-$cmd" "$old" "${args[@]}"
	check "unpatched perf $cmd does not crash (exit $(rc "old-$cmd"))" no_crash "old-$cmd"
	check "unpatched perf $cmd says it found an unknown event" says_unknown "old-$cmd"
	grep -E 'unknown events|failed to process|Error|^0x' "$tmp/old-$cmd.out" | head -3 | sed 's/^/#   /'
done
check "unpatched perf report shows no samples (it stops at the first MMAP3 record)" \
	eval '! grep -v "^#" "$tmp/old-report.out" | grep -q "%"'

# The way out for an old perf: let the patched one rewrite the file.
capture new-inject "$new" inject -B -i "$tmp/mmap3.data" -o "$tmp/legacy.data"
check "patched perf inject -B writes a file without MMAP3 records" \
	eval '[ "$(rc new-inject)" = 0 ] && ! "$new" script -i "$tmp/legacy.data" --show-mmap-events | grep -q PERF_RECORD_MMAP3'
capture old-legacy "$old" report -i "$tmp/legacy.data" --stdio --sort sym
check "unpatched perf report reads it: noploop is the top symbol" \
	eval '[ "$(rc old-legacy)" = 0 ] && grep -v "^#" "$tmp/old-legacy.out" | grep -m1 "%" | grep -q noploop'

# --mmap2-buildid-all: every map record as MMAP2 with its build-id, which
# its help promises and an older perf reads.
capture new-inject-all "$new" inject --mmap2-buildid-all -i "$tmp/mmap3.data" -o "$tmp/mmap2-all.data"
capture old-all-script "$old" script -i "$tmp/mmap2-all.data" --show-mmap-events
check "patched perf inject --mmap2-buildid-all: the unpatched perf reads it, no unknown event, perf's MMAP2 with its build-id" \
	eval '[ "$(rc new-inject-all)" = 0 ] && [ "$(rc old-all-script)" = 0 ] &&
	      ! grep -q "unknown events" "$tmp/old-all-script.out" &&
	      grep -qE "PERF_RECORD_MMAP2 .*<$bid>\]: r-xp $new\$" "$tmp/old-all-script.out"'
capture old-all-report "$old" report -i "$tmp/mmap2-all.data" --stdio --sort sym
check "unpatched perf report of it: noploop is the top symbol" \
	eval '[ "$(rc old-all-report)" = 0 ] && grep -v "^#" "$tmp/old-all-report.out" | grep -m1 "%" | grep -q noploop'

# libperf's ABI: a program built against the series' libperf headers
# sees the union perf_event of one built against upstream's (struct
# perf_record_mmap3's file name is a flexible array).
union_size() {
	local t=$1
	cc -I"$t/tools/lib/perf/include" -I"$t/tools/include/uapi" -I"$t/tools/include" \
		-x c -o "$tmp/union-size" - <<-'EOF' && "$tmp/union-size"
	#include <stdio.h>
	#include <perf/event.h>
	int main(void) { printf("%zu\n", sizeof(union perf_event)); return 0; }
	EOF
}
size_new=$(union_size "$PERF_SRC") size_old=$(union_size "$(upstream_src "$PERF_KVER")")
echo "# sizeof(union perf_event): $size_new with the series' libperf, $size_old with upstream's"
check "libperf: union perf_event keeps its size" \
	eval '[ -n "$size_new" ] && [ "$size_new" = "$size_old" ]'

echo "1..$n"
[ "$failed" = 0 ]
