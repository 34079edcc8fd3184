# SPDX-License-Identifier: GPL-2.0
# Guest script: perf with MMAP3 against the patched kernel and the module.
# Runs in the guest from /tests, with scripts/perf.sh's guest copy
# ($PERF_BUILD/guest, see scripts/lib.sh) in /tests/perf and mmap3.ko in /tests;
# prints the begin/end markers and TAP lines of tests/qemu/run.sh, e.g.:
#
#   cp -a "$PERF_BUILD/guest" "$MMAP3_WORK/guest/perf"
#   cp tests/perf/guest-perf.sh "$MMAP3_WORK/guest/perf.sh"
#   tests/qemu/run.sh perf.sh
#
# (or source it from all.sh after the selftests). perf finds its libraries
# in /tests/perf/lib through its RUNPATH; libc and the loader are the
# guest's.
export PATH=/tests/perf:$PATH

# tap NAME CMD...: one TAP line for a command that exits 0 (pass), 2
# (skip: perf test's convention) or anything else (fail).
tap() {
	name=$1
	shift
	echo "mmap3-test: begin $name"
	"$@"
	rc=$?
	case $rc in
	0) echo "ok 1 - $name" ;;
	2) echo "ok 1 - $name # SKIP"; rc=4 ;;
	*) echo "not ok 1 - $name (exit $rc)" ;;
	esac
	echo "mmap3-test: end $name rc=$rc"
}

# Without the module, perf record --mmap3 must stop and name the module.
no_module() {
	out=$(perf record --mmap3 -o /tmp/perf-nomodule.data -- true 2>&1)
	rc=$?
	echo "$out" | sed 's/^/# /'
	rm -f /tmp/perf-nomodule.data
	[ "$rc" != 0 ] && echo "$out" | grep -q 'mmap3 module'
}

# With the module: what the perf test checks, then report and buildid-list
# on a recording of perf itself.
with_module() {
	data=/tmp/perf-mmap3.data
	if ! perf record --mmap3 -e task-clock -o "$data" -- perf test -w noploop 1 \
		>/tmp/perf-record.out 2>&1; then
		# e.g. "Failed to create wakeup eventfd": CONFIG_EVENTFD is off.
		sed 's/^/# /' /tmp/perf-record.out
		return 1
	fi
	perf script -i "$data" --show-mmap-events 2>/dev/null | grep PERF_RECORD_MMAP3 | sed 's/^/# /'
	bid=$(perf buildid-list -i /tests/perf/perf)
	perf buildid-list -i "$data" --with-hits | sed 's/^/# /'
	perf buildid-list -i "$data" --with-hits | grep -q "^$bid " || return 1
	top=$(perf report -i "$data" --stdio --sort sym 2>/dev/null | grep -v '^#' | grep -m1 '%')
	echo "# top symbol: $top"
	echo "$top" | grep -q noploop
}

if grep -q '^mmap3 ' /proc/modules; then
	echo "# mmap3 already loaded: skipping the test without the module"
else
	tap perf_mmap3_no_module no_module
	insmod /tests/mmap3.ko
fi
tap perf_record_mmap3_sh sh /tests/perf/tests/record_mmap3.sh
tap perf_mmap3_report with_module
