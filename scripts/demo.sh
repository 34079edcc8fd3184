#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# `make demo`: build what is needed (first run: packages, kernel, module),
# boot the patched kernel in QEMU with the mmap3 module, run programs from a
# cold block device, and show the build-ids MMAP3 and upstream's
# MMAP2+build_id report for their mappings, next to readelf -n; then boot
# the same Linux without the series, and show the module's trace event
# mmap3:build_id, read with ftrace and perf, give the build-id of a cold
# program that upstream's MMAP2 record has none for.
. "$(dirname "$0")/lib.sh"

"$MMAP3_ROOT/scripts/kernel.sh"
"$MMAP3_ROOT/scripts/module.sh"
"$MMAP3_ROOT/scripts/perf.sh"
MMAP3_KERNEL=upstream "$MMAP3_ROOT/scripts/perf.sh"	# its --buildid-mmap, for comparison
read -r _ failed _ < <("$MMAP3_ROOT/scripts/guest.sh" demo.sh 600 | tail -n 1)
echo
grep -v '^mmap3-' "$(cat "$MMAP3_WORK/last-run")/tests.log" | tr -d '\r'
# The same Linux without the series, as a distribution ships it: the
# module's trace event (demo/event.sh).
MMAP3_KERNEL=upstream "$MMAP3_ROOT/scripts/kernel.sh"
MMAP3_KERNEL=upstream "$MMAP3_ROOT/scripts/module.sh"
read -r _ failed_event _ < <(MMAP3_KERNEL=upstream "$MMAP3_ROOT/scripts/guest.sh" demo-event.sh 600 | tail -n 1)
echo
grep -v '^mmap3-' "$(cat "$MMAP3_WORK/last-run")/tests.log" | tr -d '\r'
[ "$failed" = 0 ] && [ "$failed_event" = 0 ]
