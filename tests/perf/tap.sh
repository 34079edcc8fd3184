# SPDX-License-Identifier: GPL-2.0
# TAP helpers of the host perf tests (old-perf.sh, crafted.sh,
# host-shell.sh); sourced after $tmp, a scratch directory, is set.
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
