#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# checkpatch.pl --strict on both series, as a maintainer runs it (a few
# seconds; part of `make test` and of `make check-patches`): any ERROR,
# WARNING or CHECK fails the kernel series; the perf series fails on an
# ERROR (its cover letter justifies the warnings it keeps). Needs the
# kernel tree (scripts/kernel.sh) for checkpatch.pl itself.
. "$(dirname "$0")/lib.sh"

[ -x "$KSRC/scripts/checkpatch.pl" ] || die "no $KSRC/scripts/checkpatch.pl: run scripts/kernel.sh"
mapfile -t kpatches < <(series "$MMAP3_ROOT/patches")
mapfile -t ppatches < <(series "$MMAP3_ROOT/patches/perf")

log "checkpatch.pl --strict on ${#kpatches[@]} kernel patches"
"$KSRC/scripts/checkpatch.pl" --strict --quiet --no-tree --show-types "${kpatches[@]}" ||
	die "checkpatch.pl --strict reports problems (above)"
log "checkpatch.pl --strict on ${#ppatches[@]} perf patches (errors fail)"
out=$("$KSRC/scripts/checkpatch.pl" --strict --terse --no-tree --show-types "${ppatches[@]}" || true)
printf '%s\n' "$out" | grep -E ': (ERROR|WARNING|CHECK):' >&2 || true
if printf '%s\n' "$out" | grep -q ': ERROR:'; then
	die "checkpatch.pl finds errors in the perf series"
fi
