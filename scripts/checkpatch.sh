#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# The series as text, in a few seconds (part of `make test` and of
# `make check-patches`), whatever MMAP3_KVER says: checkpatch.pl --strict of
# 7.3 (the upstream-facing tree) as a maintainer runs it, on the kernel
# series (patches/, with its selftests patch 0005 and the provider add-on)
# and its backport (patches/6.12/): any ERROR, WARNING or CHECK fails them;
# the perf series fails on an ERROR (its cover letter justifies the
# warnings it keeps).
# checkpatch.pl runs at the top of the 7.3 tree, as in a maintainer's tree:
# it seeds its CamelCase check from the tree's include/ and leaves its cache
# of that (.checkpatch-camelcase.*) there, in the current directory, not in
# this repository. Fetches the 7.3 tree when it is not there
# (scripts/kernel-source.sh).
. "$(dirname "$0")/lib.sh"

"$MMAP3_ROOT/scripts/kernel-source.sh" 7.3
tree=$(ksrc 7.3)
checkpatch() { (cd "$tree" && scripts/checkpatch.pl "$@"); }

# Both kernel series, each with its selftests patch and add-on.
mapfile -t kpatches < <({ kseries 7.3; kseries 6.12; } | awk '!seen[$0]++')
mapfile -t ppatches < <(series "$MMAP3_ROOT/patches/perf")

# FILE_PATH_CHANGES ("does MAINTAINERS need updating?") is given for every
# patch that adds a file without touching MAINTAINERS: the core patch (0004,
# kernel/events/mmap3.[ch]) and the provider add-on (include/linux/,
# kernel/events/) add files that MAINTAINERS' wildcards already give to
# PERFORMANCE EVENTS SUBSYSTEM, and the selftests patch (0005) a program in
# tools/testing/selftests/perf_events/, which KERNEL SELFTEST FRAMEWORK's
# tools/testing/selftests/ covers, as the directory's other programs were
# added. The 6.12 backport is held to the same rules (6.12.117 has the
# kmalloc_obj() family that 7.3's checkpatch asks for). Any other finding
# fails.
log "checkpatch.pl --strict on ${#kpatches[@]} kernel patches (patches/, patches/6.12/)"
for p in "${kpatches[@]}"; do
	ignore=()
	case "$p" in
	*/patches/0004-* | */patches/provider/* | */patches/6.12/0004-* | \
		*/patches/6.12/provider/* | */0005-selftests-*)
		ignore=(--ignore FILE_PATH_CHANGES) ;;
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
