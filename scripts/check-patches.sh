#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# `make check-patches`: both series as a maintainer would check them.
#   1. scripts/checkpatch.sh: patches/0004 is up to date with tests/kselftest,
#      and checkpatch.pl --strict on every patch;
#   2. git am of patches/, then patches/perf/, onto a clean worktree of
#      mmap3-base, building the kernel (same config as the test kernel,
#      LLVM=1) after each kernel patch and perf after each perf patch.
# The worktree and the build directory are this checkout's
# ($MMAP3_WORK/check-patches); the build directory is kept, so a second run
# is incremental. scripts/kernel.sh is run for the tree, the base tag and the
# config; it applies the kernel series only (perf is built by
# scripts/perf.sh from a worktree of its own).
. "$(dirname "$0")/lib.sh"

"$MMAP3_ROOT/scripts/kernel.sh"	# the tree, the base tag and the config

"$MMAP3_ROOT/scripts/checkpatch.sh"

mapfile -t kpatches < <(series "$MMAP3_ROOT/patches")
mapfile -t ppatches < <(series "$MMAP3_ROOT/patches/perf")
patches=("${kpatches[@]}" "${ppatches[@]}")

wt=$MMAP3_WORK/check-patches/src
obj=$MMAP3_WORK/check-patches/build
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
log "all ${#patches[@]} patches apply to mmap3-base and build one by one; checkpatch --strict: above"
