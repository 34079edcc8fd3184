#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# `make demo`: build what is needed (first run: packages, kernel, module),
# boot the patched kernel in QEMU with the mmap3 module, run programs from a
# cold block device, and show the build-ids MMAP3 and upstream's
# MMAP2+build_id report for their mappings, next to readelf -n.
. "$(dirname "$0")/lib.sh"

"$MMAP3_ROOT/scripts/kernel.sh"
"$MMAP3_ROOT/scripts/module.sh"
"$MMAP3_ROOT/scripts/perf.sh"
MMAP3_KERNEL=upstream "$MMAP3_ROOT/scripts/perf.sh"	# its --buildid-mmap, for comparison
read -r _ failed _ < <("$MMAP3_ROOT/scripts/guest.sh" demo.sh 600 | tail -n 1)
echo
grep -v '^mmap3-' "$(cat "$MMAP3_WORK/last-run")/tests.log" | tr -d '\r'
[ "$failed" = 0 ]
