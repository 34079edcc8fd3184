#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Install the perf_events selftests of the kernel series the kselftest way:
#
#   scripts/kselftest-install.sh DEST
#
# takes tools/testing/selftests of mmap3-base, applies the series'
# selftests patch ($SELFTESTS_PATCH: patches/0005, or patches/6.12/0005
# for 6.12), and runs
#
#   make -C tools/testing/selftests TARGETS=perf_events install INSTALL_PATH=DEST
#
# against the test kernel (its uapi headers, KHDR_INCLUDES, as the series
# no longer touches tools/include/uapi; LLVM=1 as it was built; static
# programs, for the guest's bare root). DEST then holds run_kselftest.sh and
# perf_events/, which the guest runs as `make run_tests` would
# (tests/qemu/kselftest.sh). The tree is a copy in $MMAP3_WORK; the kernel
# tree is only read.
. "$(dirname "$0")/lib.sh"

dest=${1:?usage: scripts/kselftest-install.sh DEST}
tree=$MMAP3_WORK/kselftest-src
patch=$SELFTESTS_PATCH
[ -f "$KOBJ/usr/include/linux/perf_event.h" ] || die "no kernel headers in $KOBJ/usr/include: run scripts/kernel.sh"
[ -f "$patch" ] || die "no selftests patch $patch"

rm -rf "$tree"
mkdir -p "$tree"
git -C "$KSRC" archive mmap3-base tools/testing/selftests scripts/subarch.include |
	tar -x -C "$tree"
(cd "$tree" && git apply "$patch") || die "the selftests patch does not apply to mmap3-base"
rm -rf "$dest"
log "make -C tools/testing/selftests TARGETS=perf_events install (the series' selftests)"
make -s -C "$tree/tools/testing/selftests" TARGETS=perf_events install \
	INSTALL_PATH="$dest" LLVM=1 USERLDFLAGS=-static \
	KHDR_INCLUDES="-isystem $KOBJ/usr/include" >"$MMAP3_WORK/kselftest-install.log" 2>&1 ||
	{ tail -30 "$MMAP3_WORK/kselftest-install.log" >&2; die "kselftest install failed"; }
for f in run_kselftest.sh kselftest-list.txt perf_events/mmap3; do
	[ -e "$dest/$f" ] || die "the kselftest install has no $f"
done
log "installed the perf_events selftests in $dest"
