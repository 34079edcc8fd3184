#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# The series as text, in a few seconds (part of `make test` and of
# `make check-patches`), whatever MMAP3_KVER says: patches/0009, the
# selftests, must be what scripts/selftests-patch.sh makes of tests/kselftest
# today; then checkpatch.pl --strict of 7.3 (the upstream-facing tree) as a
# maintainer runs it, on the kernel series (patches/) and its backport
# (patches/6.12/): any ERROR, WARNING or CHECK fails them; the perf series
# fails on an ERROR (its cover letter justifies the warnings it keeps).
# checkpatch.pl runs at the top of the 7.3 tree, as in a maintainer's tree:
# it seeds its CamelCase check from the tree's include/ and leaves its cache
# of that (.checkpatch-camelcase.*) there, in the current directory, not in
# this repository. Fetches the 7.3 tree when it is not there
# (scripts/kernel-source.sh).
. "$(dirname "$0")/lib.sh"

"$MMAP3_ROOT/scripts/kernel-source.sh" 7.3
tree=$(ksrc 7.3)
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
checkpatch() { (cd "$tree" && scripts/checkpatch.pl "$@"); }

# patches/0009 (the selftests) is generated from tests/kselftest, and
# touches nothing of the kernel image: scripts/selftests-patch.sh checks
# that when it generates it; here it must be what it generates today.
selftests=$SELFTESTS_PATCH
fresh=$scratch/selftests.patch
"$MMAP3_ROOT/scripts/selftests-patch.sh" "$fresh"
if ! diff -u "$selftests" "$fresh" >&2; then
	die "$(basename "$selftests") is not up to date with tests/kselftest (diff above): run scripts/selftests-patch.sh"
fi
log "$(basename "$selftests") is up to date with tests/kselftest"

# Both kernel series, the shared selftests patch once.
mapfile -t kpatches < <({ kseries 7.3; kseries 6.12; } | awk '!seen[$0]++')
mapfile -t ppatches < <(series "$MMAP3_ROOT/patches/perf")

# The selftests' two ENOSYS are what the codes mean there: a system call
# the kernel lacks, and FUSE's "operation not implemented" reply (the cover
# letter says so). 7.3's checkpatch asks for kmalloc_obj(), which 6.12 does
# not have: the backport is exempt (6.12's own checkpatch does not ask).
# Any other finding fails.
log "checkpatch.pl --strict on ${#kpatches[@]} kernel patches (patches/, patches/6.12/)"
for p in "${kpatches[@]}"; do
	ignore=()
	case "$p" in
	*/0009-selftests-*) ignore=(--ignore ENOSYS) ;;
	*/6.12/*) ignore=(--ignore ALLOC_WITH_SIZEOF) ;;
	esac
	checkpatch --strict --quiet --no-tree --show-types "${ignore[@]}" "$p" ||
		die "checkpatch.pl --strict reports problems in ${p#"$MMAP3_ROOT"/} (above)"
done
log "checkpatch.pl --strict on ${#ppatches[@]} perf patches (errors fail)"
out=$(checkpatch --strict --terse --no-tree --show-types "${ppatches[@]}" || true)
printf '%s\n' "$out" | grep -E ': (ERROR|WARNING|CHECK):' >&2 || true
if printf '%s\n' "$out" | grep -q ': ERROR:'; then
	die "checkpatch.pl finds errors in the perf series"
fi
