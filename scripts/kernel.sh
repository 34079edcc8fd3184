#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Build the patched, Rust-enabled kernel into the cache ($MMAP3_KVER picks
# the version, $MMAP3_KERNEL the variant, see scripts/lib.sh):
#   1. unpack Debian's linux-source-$MMAP3_KVER into $KSRC, a git repository
#      whose first commit is tagged mmap3-base (scripts/kernel-source.sh);
#   2. apply the version's kernel series (patches/*.patch for 7.3,
#      patches/6.12/*.patch for 6.12) with git am on branch mmap3; the perf
#      series (patches/perf/) is not applied here, so that changing it does
#      not rebuild the kernel: scripts/perf.sh builds perf in a worktree of
#      its own;
#   3. configure O=$KOBJ from tinyconfig + the variant's fragments, LLVM=1;
#   4. build bzImage and modules.
# Each step is skipped when its inputs have not changed (the stamp files hold
# the hash of what went into them), so a second run costs a second.
#
#   scripts/kernel.sh [--source]
#
# --source: steps 1 and 2 only (and the Debian packages and toolchain of
# scripts/deps.sh). After it, the build of one variant writes nothing that
# the build of another reads: .ci/run builds the debug kernel so, in the
# background, while make test builds and tests the others.
. "$(dirname "$0")/lib.sh"
case "${1:-}" in
--source | "") ;;
*) die "usage: scripts/kernel.sh [--source]" ;;
esac

"$MMAP3_ROOT/scripts/deps.sh"

# 1. Unpack.
"$MMAP3_ROOT/scripts/kernel-source.sh" "$MMAP3_KVER"
kver=$(cat "$KSRC/.git/mmap3-version")

# 2. Apply the series.
shopt -s nullglob
mapfile -t patches < <(image_series "$MMAP3_KVER")
phash=$(hash_of "${patches[@]}" /dev/null)
if [ "$(cat "$KSRC/.git/mmap3-patches" 2>/dev/null)" != "$phash" ]; then
	log "applying ${#patches[@]} patches from ${KPATCHES#"$MMAP3_ROOT"/}/ to mmap3-base of $KSRC"
	git -C "$KSRC" am --abort >/dev/null 2>&1 || true
	git -C "$KSRC" checkout -q -f -B mmap3 mmap3-base
	git -C "$KSRC" clean -q -fdx
	if [ ${#patches[@]} -gt 0 ]; then
		git -C "$KSRC" -c user.name=mmap3 -c user.email=mmap3@localhost \
			am -q --whitespace=nowarn "${patches[@]}" ||
			die "${KPATCHES#"$MMAP3_ROOT"/}/ does not apply to mmap3-base (see git -C $KSRC am --show-current-patch)"
	fi
	echo "$phash" >"$KSRC/.git/mmap3-patches"
fi

# The upstream kernel is built from a worktree of the base, without the series.
src=$KSRC
if [ "$MMAP3_KERNEL" = upstream ]; then
	src=$UPSTREAM_SRC
	phash=none
	upstream_worktree
fi
[ "${1:-}" != --source ] || exit 0

# 3 + 4. Configure and build.
key=$(hash_of "${KCONFIG_FRAGMENTS[@]}" "$0")-$phash-$kver
if [ "$(cat "$KOBJ/.mmap3-key" 2>/dev/null)" = "$key" ]; then
	exit 0
fi
kmake() { make -s -C "$src" O="$KOBJ" LLVM=1 -j"$JOBS" "$@"; }
mkdir -p "$KOBJ"
kmake rustavailable >/dev/null || die "the Rust toolchain does not suit this kernel (make LLVM=1 rustavailable)"
log "configuring the $MMAP3_KERNEL kernel: tinyconfig + ${KCONFIG_FRAGMENTS[*]#"$MMAP3_ROOT"/}"
kmake tinyconfig >/dev/null
"$src/scripts/kconfig/merge_config.sh" -m -O "$KOBJ" "$KOBJ/.config" "${KCONFIG_FRAGMENTS[@]}" >/dev/null
kmake olddefconfig >/dev/null
# Every option the fragments ask for must have survived olddefconfig (a
# later fragment overrides an earlier one).
declare -A want
while IFS= read -r line; do
	case "$line" in CONFIG_*) ;; *) continue ;; esac
	want[${line%%=*}]=${line#*=}
done < <(cat "${KCONFIG_FRAGMENTS[@]}")
for opt in "${!want[@]}"; do
	val=${want[$opt]}
	if [ "$val" = n ]; then
		! grep -q "^$opt=" "$KOBJ/.config" || die "$opt should be off"
	elif ! grep -qx "$opt=$val" "$KOBJ/.config"; then
		die "$opt=$val did not make it into .config (missing dependency?)"
	fi
done
log "building the $MMAP3_KERNEL kernel (LLVM=1, -j$JOBS; 10 to 15 minutes on 2 cores the first time)"
start=$SECONDS
kmake bzImage modules headers
echo "$key" >"$KOBJ/.mmap3-key"
log "$MMAP3_KERNEL kernel built in $((SECONDS - start)) s: $KOBJ/arch/x86/boot/bzImage"
