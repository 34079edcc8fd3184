#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# `make check-patches`: the series as a maintainer would check it.
#   1. scripts/checkpatch.pl --strict on every patch (any ERROR, WARNING or
#      CHECK fails);
#   2. git am of patches/ onto a clean worktree of mmap3-base, building the
#      kernel (same config as the test kernel, LLVM=1) after each patch.
# The build directory is kept in the cache, so a second run is incremental.
. "$(dirname "$0")/lib.sh"

"$MMAP3_ROOT/scripts/kernel.sh"	# the tree, the base tag and the config

patches=()
for p in "$MMAP3_ROOT"/patches/*.patch; do
	case "$p" in */0000-cover-letter.patch) ;; *) patches+=("$p") ;; esac
done

log "checkpatch.pl --strict on ${#patches[@]} patches"
"$KSRC/scripts/checkpatch.pl" --strict --quiet --no-tree --show-types "${patches[@]}" ||
	die "checkpatch.pl --strict reports problems (above)"

wt=$MMAP3_CACHE/check-patches/src
obj=$MMAP3_CACHE/check-patches/build
git -C "$KSRC" worktree remove --force "$wt" >/dev/null 2>&1 || rm -rf "$wt"
git -C "$KSRC" worktree prune
mkdir -p "$(dirname "$wt")" "$obj"
git -C "$KSRC" worktree add -q --detach "$wt" mmap3-base
cp "$KOBJ/.config" "$obj/.config"
n=0
for p in "${patches[@]}"; do
	n=$((n + 1))
	git -C "$wt" -c user.name=mmap3 -c user.email=mmap3@localhost am -q "$p" ||
		die "patch $n does not apply: $(basename "$p")"
	log "[$n/${#patches[@]}] building with $(basename "$p")"
	make -s -C "$wt" O="$obj" LLVM=1 -j"$JOBS" olddefconfig >/dev/null
	make -s -C "$wt" O="$obj" LLVM=1 -j"$JOBS" bzImage modules 2>"$obj/build.log" ||
		{ tail -20 "$obj/build.log" >&2; die "the kernel does not build with patch $n"; }
done
git -C "$KSRC" worktree remove --force "$wt"
log "all ${#patches[@]} patches apply to mmap3-base, build one by one, and pass checkpatch --strict"
