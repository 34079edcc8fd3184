#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Both series as text, in a few seconds (part of `make test` and of
# `make check-patches`): patches/0004, the selftests, must be what
# scripts/selftests-patch.sh makes of tests/kselftest today; then
# checkpatch.pl --strict as a maintainer runs it: any ERROR, WARNING or
# CHECK fails the kernel series; the perf series fails on an ERROR (its
# cover letter justifies the warnings it keeps). Needs the kernel tree
# (scripts/kernel.sh) for checkpatch.pl itself.
. "$(dirname "$0")/lib.sh"

[ -x "$KSRC/scripts/checkpatch.pl" ] || die "no $KSRC/scripts/checkpatch.pl: run scripts/kernel.sh"
# patches/0004 (the selftests) is generated from tests/kselftest, and
# touches nothing of the kernel image: scripts/selftests-patch.sh checks
# that when it generates it; here it must be what it generates today.
selftests=$MMAP3_ROOT/patches/0004-selftests-perf_events-Add-MMAP3-tests.patch
fresh=$(mktemp)
"$MMAP3_ROOT/scripts/selftests-patch.sh" "$fresh"
if ! diff -u "$selftests" "$fresh" >&2; then
	rm -f "$fresh"
	die "$(basename "$selftests") is not up to date with tests/kselftest (diff above): run scripts/selftests-patch.sh"
fi
rm -f "$fresh"
log "$(basename "$selftests") is up to date with tests/kselftest"

mapfile -t kpatches < <(series "$MMAP3_ROOT/patches")
mapfile -t ppatches < <(series "$MMAP3_ROOT/patches/perf")

# The selftests' two ENOSYS are what the codes mean there: a system call
# the kernel lacks, and FUSE's "operation not implemented" reply (the cover
# letter says so); any other finding fails.
log "checkpatch.pl --strict on ${#kpatches[@]} kernel patches"
for p in "${kpatches[@]}"; do
	ignore=()
	case "$p" in */0004-selftests-*) ignore=(--ignore ENOSYS) ;; esac
	"$KSRC/scripts/checkpatch.pl" --strict --quiet --no-tree --show-types "${ignore[@]}" "$p" ||
		die "checkpatch.pl --strict reports problems in $(basename "$p") (above)"
done
log "checkpatch.pl --strict on ${#ppatches[@]} perf patches (errors fail)"
out=$("$KSRC/scripts/checkpatch.pl" --strict --terse --no-tree --show-types "${ppatches[@]}" || true)
printf '%s\n' "$out" | grep -E ': (ERROR|WARNING|CHECK):' >&2 || true
if printf '%s\n' "$out" | grep -q ': ERROR:'; then
	die "checkpatch.pl finds errors in the perf series"
fi
