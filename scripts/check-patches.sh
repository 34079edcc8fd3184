#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# `make check-patches`: the series as a maintainer would check them.
#   1. scripts/checkpatch.sh: checkpatch.pl --strict on every patch of both
#      kernel series (with the selftests patch 0005 and the provider add-on)
#      and the perf series;
#   2. git am of the kernel series of $MMAP3_KVER (patches/ for 7.3,
#      patches/6.12/ and the selftests patch for 6.12) onto a clean worktree
#      of its mmap3-base, building the kernel (same config as the test
#      kernel, LLVM=1) after each patch; then, when $MMAP3_KVER is the
#      version the perf series is written against ($PERF_KVER), the perf
#      series, building perf after each patch.
# The worktree and the build directory are this checkout's
# ($MMAP3_WORK/check-patches, -7.3 for 7.3); the build directory is kept, so
# a second run is incremental. scripts/kernel.sh is run for the tree, the
# base tag and the config; it applies the kernel series only (perf is built
# by scripts/perf.sh from a worktree of its own).
. "$(dirname "$0")/lib.sh"

"$MMAP3_ROOT/scripts/kernel.sh"	# the tree, the base tag and the config

"$MMAP3_ROOT/scripts/checkpatch.sh"

mapfile -t kpatches < <(kseries "$MMAP3_KVER")
ppatches=()
if [ "$MMAP3_KVER" = "$PERF_KVER" ]; then
	mapfile -t ppatches < <(series "$MMAP3_ROOT/patches/perf")
else
	log "the perf series is against $PERF_KVER: only the kernel series is applied to $MMAP3_KVER"
fi
patches=("${kpatches[@]}" "${ppatches[@]}")

wt=$MMAP3_WORK/check-patches$KTAG/src
obj=$MMAP3_WORK/check-patches$KTAG/build
git -C "$KSRC" worktree remove --force "$wt" >/dev/null 2>&1 || rm -rf "$wt"
git -C "$KSRC" worktree prune
mkdir -p "$(dirname "$wt")" "$obj/perf"
git -C "$KSRC" worktree add -q --detach "$wt" mmap3-base
cp "$KOBJ/.config" "$obj/.config"
n=0
for p in "${patches[@]}"; do
	n=$((n + 1))
	git -C "$wt" -c user.name=mmap3 -c user.email=mmap3@localhost am -q "$p" ||
		die "patch $n does not apply: $(basename "$p")"
	log "[$n/${#patches[@]}] building with $(basename "$p")"
	if [ "$n" -le "${#kpatches[@]}" ]; then
		make -s -C "$wt" O="$obj" LLVM=1 -j"$JOBS" olddefconfig >/dev/null
		make -s -C "$wt" O="$obj" LLVM=1 -j"$JOBS" bzImage modules 2>"$obj/build.log" ||
			{ tail -20 "$obj/build.log" >&2; die "the kernel does not build with patch $n"; }
	else
		make -s -C "$wt/tools/perf" O="$obj/perf" -j"$JOBS" "${PERF_MAKE_FLAGS[@]}" \
			>"$obj/perf-build.log" 2>&1 ||
			{ tail -20 "$obj/perf-build.log" >&2; die "perf does not build with patch $n"; }
	fi
done
git -C "$KSRC" worktree remove --force "$wt"
log "all ${#patches[@]} patches apply to mmap3-base of $KSRC and build one by one; checkpatch --strict: above"
