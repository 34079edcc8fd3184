#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# `make test-event`: the trace event mmap3:build_id on a kernel without the
# series, as on a distribution kernel ($MMAP3_KVER's, 7.3 by default):
#   1. the kernel without the series (MMAP3_KERNEL=upstream scripts/kernel.sh,
#      the baseline of make bench; cached),
#   2. the module for it (scripts/module.sh: CLIPPY=1, rustfmt; and by dkms,
#      scripts/dkms-test.sh, with depmod's check of its symbols), and perf
#      (scripts/perf.sh, the one perf of both kernels, and upstream's, the
#      reader of perf inject --convert-mmap3's output; cached),
#   3. tests/qemu/event.sh (ftrace; perf record -e mmap3:build_id;
#      examples/bpf/'s libbpf program and its bpftrace one-liner) and the
#      event's selftest (tests/event/) in QEMU with 4 CPUs (scripts/guest.sh
#      event.sh).
# make test runs it for 7.3; 6.12 is `make test-event MMAP3_KVER=6.12`.
# Ends with "N passed, N failed, N skipped"; exits non-zero on a failure.
export MMAP3_KERNEL=upstream
. "$(dirname "$0")/lib.sh"

if ! "$MMAP3_ROOT/scripts/kernel.sh" || ! "$MMAP3_ROOT/scripts/module.sh" ||
	! "$MMAP3_ROOT/scripts/dkms-test.sh"; then
	log "the kernel without the series, or the module for it (by hand or by dkms), did not build"
	echo "0 passed, 1 failed, 0 skipped"
	exit 1
fi
# Not a failed step of its own: without perf, event.sh's perf section
# reports a skip, which fails the run (tests/qemu/expected-skips); without
# upstream's perf, its check of perf inject --convert-mmap3's output fails.
MMAP3_KERNEL=test "$MMAP3_ROOT/scripts/perf.sh" || log "perf did not build"
"$MMAP3_ROOT/scripts/perf.sh" || log "upstream's perf did not build"
read -r p f s < <(MMAP3_SMP=4 "$MMAP3_ROOT/scripts/guest.sh" event.sh | tail -n 1)
echo "${p:-0} passed, ${f:-1} failed, ${s:-0} skipped"
[ "${f:-1}" = 0 ]
