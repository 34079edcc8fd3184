#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Generate the kernel series' selftests patch from tests/kselftest:
#
#   scripts/selftests-patch.sh [OUT]
#
# writes patches/0009-selftests-perf_events-Add-MMAP3-tests.patch (or OUT),
# against 7.3 and for both series (it applies to 6.12 as it is: the
# perf_events selftests are the same there): tests/kselftest's sources,
# fixtures.py and second provider module (mmap3_provider/) copied as they
# are into tools/testing/selftests/perf_events/ of 7.3's mmap3-base
# ($SELFTESTS_KVER, scripts/lib.sh), whose Makefile gets
# the programs, the fixtures and the module directory, whose config and
# .gitignore get their lines, and whose settings becomes tests/kselftest's.
# tests/kselftest stays the one source: scripts/checkpatch.sh regenerates
# the patch and fails when it differs from the committed one. The patch may
# touch nothing but tools/testing/selftests and MAINTAINERS (it does not
# change the kernel image); this checks that too. Fetches the 7.3 tree when
# it is not there (scripts/kernel-source.sh), and only reads it.
. "$(dirname "$0")/lib.sh"

name=${SELFTESTS_PATCH##*/}
out=${1:-$SELFTESTS_PATCH}
src=$MMAP3_ROOT/tests/kselftest
dir=tools/testing/selftests/perf_events
"$MMAP3_ROOT/scripts/kernel-source.sh" "$SELFTESTS_KVER"
base=$(ksrc "$SELFTESTS_KVER")

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export GIT_AUTHOR_NAME="mmap3 developers" GIT_AUTHOR_EMAIL=mmap3@localhost
export GIT_COMMITTER_NAME="$GIT_AUTHOR_NAME" GIT_COMMITTER_EMAIL="$GIT_AUTHOR_EMAIL"
export GIT_AUTHOR_DATE="Mon, 30 Nov 2026 02:04:27 +0000" GIT_COMMITTER_DATE="Mon, 30 Nov 2026 02:04:27 +0000"
g() { git -C "$tmp" -c core.autocrlf=false -c diff.algorithm=myers "$@"; }

git -C "$base" archive mmap3-base "$dir" MAINTAINERS | tar -x -C "$tmp"
g init -q
g add -A
g commit -q -m base

# The sources, as they are.
progs=$(sed -n 's/^TEST_GEN_PROGS := //p' "$src/Makefile")
[ -n "$progs" ] || die "no TEST_GEN_PROGS in $src/Makefile"
hdrs=$(sed -n 's/^LOCAL_HDRS += //p' "$src/Makefile")
for f in $progs; do cp "$src/$f.c" "$tmp/$dir/"; done
for f in $hdrs fixtures.py; do cp "$src/$f" "$tmp/$dir/"; done
mkdir -p "$tmp/$dir/mmap3_provider"
cp "$src/mmap3_provider/Makefile" "$src/mmap3_provider/mmap3_test_provider.c" \
	"$tmp/$dir/mmap3_provider/"

# The Makefile: mmap3's programs, fixtures and module next to the others.
mk=$tmp/$dir/Makefile
grep -q '^TEST_GEN_PROGS := ' "$mk" && grep -q '^include ../lib.mk$' "$mk" ||
	die "$dir/Makefile of mmap3-base is not as expected"
awk -v progs="$progs" -v hdrs="$hdrs" '
	{ print }
	/^TEST_GEN_PROGS := / {
		print ""
		print "# PERF_RECORD_MMAP3: the tests, the files they map (linked with random"
		print "# known build-ids, see fixtures.py) and a second provider module."
		print "TEST_GEN_PROGS += " progs
		print "TEST_GEN_FILES := fixtures"
		print "TEST_GEN_MODS_DIR := mmap3_provider"
		print "LOCAL_HDRS += " hdrs
		print ""
	}
	END {
		print ""
		print "$(OUTPUT)/fixtures: fixtures.py"
		print "\t./fixtures.py $@"
	}' "$mk" >"$mk.new"
mv "$mk.new" "$mk"

# MAINTAINERS: perf_events' selftests are perf's (they were nobody's).
grep -q '^F:	tools/testing/selftests/perf_events/' "$tmp/MAINTAINERS" &&
	die "MAINTAINERS of mmap3-base lists $dir already"
awk '
	/^PERFORMANCE EVENTS SUBSYSTEM$/ { perf = 1 }
	perf && /^$/ { print "F:\ttools/testing/selftests/perf_events/"; perf = 0 }
	{ print }' "$tmp/MAINTAINERS" >"$tmp/MAINTAINERS.new"
mv "$tmp/MAINTAINERS.new" "$tmp/MAINTAINERS"

# config: what the tests need, once each.
cfg=$tmp/$dir/config
grep -h '^CONFIG_' "$cfg" "$src/config" | awk '!seen[$0]++' | LC_ALL=C sort >"$cfg.new"
mv "$cfg.new" "$cfg"

# .gitignore: the programs and the fixtures.
for f in $progs fixtures/; do echo "$f"; done >>"$tmp/$dir/.gitignore"

# settings: tests/kselftest's (a timeout for the slowest program).
grep -qx 'timeout=120' "$tmp/$dir/settings" || die "$dir/settings of mmap3-base is not as expected"
grep -qx 'timeout=[0-9][0-9]*' "$src/settings" || die "$src/settings: no timeout=N"
cp "$src/settings" "$tmp/$dir/settings"

g add -A
g commit -q -F - <<'EOF'
selftests/perf_events: Add MMAP3 tests

Add selftests for PERF_RECORD_MMAP3 and its provider API, in
kselftest_harness.h style. Every record is checked against the ABI: a
known status, never PERF_MMAP3_BUILD_ID_UNKNOWN, a build-id exactly when
the status is FOUND, zeroes past it and in __reserved. Build-ids are
compared with those the test files were linked with: fixtures.py links
them with random --build-id values at build time and writes a MANIFEST,
cross-checked with readelf -n. It also makes the small file system images
mmap3_cache mounts (with mke2fs, mksquashfs, mkfs.erofs and mkfs.btrfs;
an image whose tool is missing is left out, and its test skips).

  mmap3_abi        attr.mmap3 opens, with or without a provider module;
                   mmap, mmap2 and build_id with it give -EINVAL; MMAP2
                   records are unchanged.
  mmap3_records    every field equal to MMAP2's; every status, from the
                   page cache and from the disk after drop_caches and
                   MADV_PAGEOUT (where MMAP2's build_id is missing); a
                   mapping of every kind; attr.mmap_data with two events;
                   records before the first user sample after exec;
                   concurrent mappers.
  mmap3_scope      MMAP3 records in MMAP2's order (mprotect() over two
                   files, exec); the provider works only for mappings an
                   mmap3 event records; inherited events under a fork
                   storm; SIGKILL between mmap() and the return to user
                   space.
  mmap3_files      the build-id is the one the file holds when it is
                   mapped: rewrites through shared mappings, a write racing
                   the read, size changes, inode numbers reused or on two
                   devices, memfd, shm; the module's read is invisible to
                   inotify, fanotify, O_DIRECT, and FUSE servers (the
                   built-in provider's, build_id_parse_file()'s, is seen
                   by inotify and fails on O_DIRECT files: IO_ERROR).
  mmap3_cache      a cached build-id is always the mapped file's own: two
                   images with identical metadata in turn on one loop
                   device (ext2, SquashFS, EROFS), a rewrite after a clock
                   step, btrfs subvolumes and snapshots, bind and overlay
                   mounts.
  mmap3_lifecycle  the provider's module is pinned while events made under
                   it exist; it takes over from the built-in provider and
                   gives the mappings back with an event open, one record
                   per mapping, also while a thread maps cold files during
                   10 loads and unloads; load/unload cycles; a second
                   provider (mmap3_provider/, built with
                   TEST_GEN_MODS_DIR against KDIR) gets -EBUSY; the
                   provider's cache evicts within its size.
  mmap3_stress     processes, threads, exec, hostile files, images swapped
                   on a loop device and event churn for
                   $MMAP3_STRESS_SECONDS (default 20).
  mmap3_fault      with fault injection (fail-nth and failslab), any
                   failed allocation still gives one record per mapping,
                   with the build-id or IO_ERROR, and leaks no file.
  mmap3_order      records deferred for a slow disk: a thread mapping over
                   another thread's deferred mapping comes after it in
                   time, and a task moved to another CPU during the read
                   gives its record to the CPU-wide events of the CPU it
                   mapped on.

The tests run with the kernel's built-in provider and with a module's
(the mmap3 module, which is not part of this series, takes over while
loaded); where the two differ (the module's cache and counters), a test
checks the side it runs on: the built-in provider leaves no counters,
so a cold file's page cache shows whether it was read. They skip
without root, when perf_event_paranoid forbids the events, and without
the devices or debugfs files they use. Where things are can be set: the
fixtures ($MMAP3_FIXTURES, default ./fixtures), a copy of them on a
block device whose page cache the tests drop ($MMAP3_COLD_FIXTURES,
default /mnt), an ext2 image of them for device-mapper disks
($MMAP3_DISK_IMAGE, default the block device holding
$MMAP3_COLD_FIXTURES, attached to a free loop device), the provider
module ($MMAP3_MODULE) and the second one ($MMAP3_TEST_PROVIDER). What
a failed run leaves behind (device-mapper devices, copies) is removed by
the next one.

The perf_events selftests had no MAINTAINERS entry: list them under
PERFORMANCE EVENTS SUBSYSTEM.

Signed-off-by: mmap3 developers <mmap3@localhost>
EOF

# Nothing but tools/testing/selftests, and MAINTAINERS: not the kernel.
others=$(g diff --name-only HEAD~1 HEAD | grep -vx 'tools/testing/selftests/.*\|MAINTAINERS' || true)
[ -z "$others" ] || die "the selftests patch would touch more than tools/testing/selftests: $others"

g format-patch -q -1 --no-signature --start-number 9 --subject-prefix="PATCH 9/9" -o "$tmp/out"
mkdir -p "$(dirname "$out")"
cp "$tmp/out/$name" "$out"
log "wrote $out"
