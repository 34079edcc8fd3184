# SPDX-License-Identifier: GPL-2.0
# Functions of the guest scripts (all.sh, smp4.sh, event.sh and the
# benchmark's, tests/bench/guest-*.sh); sourced in the guest from /tests,
# by busybox sh.

# run NAME CMD...: one test binary between the begin/end markers that
# tests/qemu/run.sh reads.
run() {
	name=$1
	shift
	echo "mmap3-test: begin $name"
	"$@"
	echo "mmap3-test: end $name rc=$?"
}

# cmdline KEY: the value of mmap3.KEY= on the kernel command line
# (tests/qemu/run.sh passes the runner's settings so).
cmdline() {
	sed -n "s/.*mmap3\.$1=\([^ ]*\).*/\1/p" /proc/cmdline
}

# How the guest scripts load the module, as its user does: modprobe
# where it is installed under /lib/modules and listed by depmod (the DKMS
# build of scripts/debian-test.sh dkms), else insmod of the module staged
# in /tests.
if grep -qs '/mmap3\.ko:' "/lib/modules/$(uname -r)/modules.dep"; then
	MMAP3_LOAD="modprobe mmap3"
else
	MMAP3_LOAD="insmod /tests/mmap3.ko"
fi

# The module ($MMAP3_LOAD), unless it is loaded; a failure is a setup
# error, which fails the run.
load_module() {
	grep -q '^mmap3 ' /proc/modules || $MMAP3_LOAD ||
		echo "mmap3-guest: error: $MMAP3_LOAD failed"
}

# The debug kernel: anything leaked so far is reported. kmemleak reports
# only objects older than 5 s: let the last ones age first. A scan that
# fails (kmemleak turned itself off) fails the run.
kmemleak_scan() {
	[ -e /sys/kernel/debug/kmemleak ] || return 0
	sleep 6
	if echo scan >/sys/kernel/debug/kmemleak && echo scan >/sys/kernel/debug/kmemleak; then
		echo "# kmemleak: scanned twice after 6 s; reports follow, if any"
		cat /sys/kernel/debug/kmemleak
	else
		echo "mmap3-guest: error: the kmemleak scan failed"
	fi
}

# running PID: whether PID is alive (a zombie is not).
running() {
	case $(awk '{ print $3 }' "/proc/$1/stat" 2>/dev/null) in
	"" | Z | X) return 1 ;;
	esac
}

# manifest_id PATH: the build-id of PATH in /tests/bench.manifest
# (readelf's, on the host: scripts/bench.sh).
manifest_id() { sed -n "s#^$1 ##p" /tests/bench.manifest; }
