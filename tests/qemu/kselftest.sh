# SPDX-License-Identifier: GPL-2.0
# The selftests the way a kernel developer runs them: the perf_events
# target of the series' selftests patch (patches/0005), installed on the
# host with `make -C tools/testing/selftests TARGETS=perf_events install`
# (scripts/kselftest-install.sh; the guest has no make), run here with the
# installed run_kselftest.sh, as `make run_tests` runs them: the series'
# program, mmap3, first with the kernel's built-in lookup, then the whole
# target with the mmap3 module ($MMAP3_MODULE, default /tests/mmap3.ko)
# loaded, when there is one.
#
# mmap3 writes the files it maps in $MMAP3_TEST_DIR: a directory on the
# guest's ext2 disk (/mnt, tests/qemu/init), whose page cache can be
# dropped, so that its cold tests run (on the initramfs, tmpfs, they
# would skip).
#
# run_kselftest.sh nests each program's TAP under "# ". It is un-nested
# here, one begin/end section per program, so that tests/qemu/run.sh counts
# every test and checks every skip ("kselftest:<program>: <test>", or
# "kselftest-builtin:" for the pass without the module, in
# tests/qemu/expected-skips*); the runner's own line for each program is
# kept as a comment, and a program it reports as failed (a timeout, a
# crash) fails the section.
MMAP3_MODULE=${MMAP3_MODULE:-/tests/mmap3.ko}
export MMAP3_TEST_DIR=/mnt/kselftest-mmap3
if [ ! -x /tests/kselftest/run_kselftest.sh ]; then
	echo "mmap3-guest: error: no /tests/kselftest/run_kselftest.sh (scripts/kselftest-install.sh)"
	exit 1
fi
if ! grep -qs ' /mnt ext2 ' /proc/mounts || ! mkdir -p "$MMAP3_TEST_DIR"; then
	echo "mmap3-guest: error: no ext2 disk at /mnt for $MMAP3_TEST_DIR"
	exit 1
fi
# Every program of the target, as `make run_tests` runs the collection:
# the series' (perf_events:mmap3) and the kernel's own (sigtrap_threads,
# remove_on_exec, watermark_signal, mmap), a guard for the core patch.
tests=$(grep '^perf_events:' /tests/kselftest/kselftest-list.txt 2>/dev/null)
if ! printf '%s\n' "$tests" | grep -qx 'perf_events:mmap3'; then
	echo "mmap3-guest: error: no perf_events:mmap3 in /tests/kselftest/kselftest-list.txt"
	exit 1
fi
# remove_on_exec counts PERF_COUNT_HW_INSTRUCTIONS: without a hardware PMU
# (QEMU's TCG has none) every one of its perf_event_open() calls fails. It
# is left out then, as a skip (tests/qemu/expected-skips).
if [ ! -e /sys/bus/event_source/devices/cpu ]; then
	tests=$(printf '%s\n' "$tests" | grep -vx 'perf_events:remove_on_exec')
	echo "mmap3-test: begin kselftest:remove_on_exec"
	echo "1..1"
	echo "ok 1 remove_on_exec # SKIP no hardware PMU (/sys/bus/event_source/devices/cpu): it counts instructions"
	echo "mmap3-test: end kselftest:remove_on_exec rc=4"
fi

# kselftests SECTION TEST...: run_kselftest.sh -t TEST..., un-nested into
# sections named SECTION:<program>.
kselftests() {
	section=$1
	shift
	(cd /tests/kselftest && ./run_kselftest.sh "$@" 2>&1) | awk -v section="$section" '
	/^# selftests: perf_events: / {
		prog = $4; inner = 0
		print "mmap3-test: begin " section ":" prog; fflush(); next
	}
	prog != "" && /^(not )?ok [0-9]+ selftests: perf_events: / {
		rc = $1 == "not" ? 1 : 0
		if ($0 ~ /# SKIP/) {
			rc = 4
			if (!inner)
				print "ok 1 (the whole program) # SKIP"
		}
		print "# run_kselftest.sh: " $0
		print "mmap3-test: end " section ":" prog " rc=" rc
		prog = ""; fflush(); next
	}
	prog != "" && /^# (not )?ok [0-9]+ / { sub(/^# /, ""); inner++ }
	{ print; fflush() }'
}

# mmap3 with the kernel's built-in lookup, then the whole target with the
# module loaded; without a module, the kernel's own programs alone.
kselftests kselftest-builtin -t perf_events:mmap3
if [ -e "$MMAP3_MODULE" ]; then
	insmod "$MMAP3_MODULE" || echo "mmap3-guest: error: insmod $MMAP3_MODULE failed"
else
	echo "# no module at $MMAP3_MODULE: mmap3 ran with the built-in lookup only"
	tests=$(printf '%s\n' "$tests" | grep -vx 'perf_events:mmap3')
fi
kselftests kselftest $(echo "$tests" | sed 's/^/-t /')
rm -rf "$MMAP3_TEST_DIR"
