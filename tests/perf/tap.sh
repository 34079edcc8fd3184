# SPDX-License-Identifier: GPL-2.0
# TAP helpers of the host perf tests (old-perf.sh, crafted.sh, convert.sh,
# host-shell.sh); sourced after scripts/lib.sh. $tmp is a scratch
# directory: the sourcing script's, or perfs_setup's.
n=0 failed=0
ok() { n=$((n + 1)); echo "ok $n - $*"; }
not_ok() { n=$((n + 1)); failed=$((failed + 1)); echo "not ok $n - $*"; }
check() { local what=$1; shift; if "$@"; then ok "$what"; else not_ok "$what"; fi; }
# run NAME CMD...: output in $tmp/NAME.out, exit code in $tmp/NAME.rc;
# never fails.
run() {
	local name=$1
	shift
	set +e
	"$@" >"$tmp/$name.out" 2>&1
	echo $? >"$tmp/$name.rc"
	set -e
}
rc() { cat "$tmp/$1.rc"; }

# perfs_setup NAME: the three perfs of the host tests, built when missing:
# the series' ($perf), the same with ASan ($asan, whose errors exit 99)
# and an unpatched one ($old); $conv, the converter of tests/perf; a
# scratch $tmp (/tmp/mmap3-NAME.*, removed at exit) holding $HOME.
perfs_setup() {
	"$MMAP3_ROOT/scripts/perf.sh"
	"$MMAP3_ROOT/scripts/perf.sh" --asan
	MMAP3_KERNEL=upstream "$MMAP3_ROOT/scripts/perf.sh"
	perf=$PERF_BUILD/perf
	asan=$PERF_ASAN_BUILD/perf
	old=$PERF_UPSTREAM_BUILD/perf
	conv=$MMAP3_ROOT/tests/perf/mmap3-perf-data.py
	tmp=$(mktemp -d "/tmp/mmap3-$1.XXXXXX")
	trap 'rm -rf "$tmp"' EXIT
	export HOME=$tmp/home
	mkdir -p "$HOME"
	# Leaks at exit are not what the tests look for.
	export ASAN_OPTIONS=detect_leaks=0:exitcode=99
}

# sane NAME: no signal (129..159), no ASan exit (99) or report.
sane() {
	local r
	r=$(rc "$1")
	[ "$r" != 99 ] && { [ "$r" -le 128 ] || [ "$r" -ge 160 ]; } &&
		! grep -qE 'AddressSanitizer|runtime error|Segmentation fault|Aborted' "$tmp/$1.out"
}
