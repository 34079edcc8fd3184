# SPDX-License-Identifier: GPL-2.0
# The guest script of `make test`: every selftest, in order, each between
# begin/end markers for tests/qemu/run.sh. Runs in the guest from /tests.
. ./guest-lib.sh

MMAP3_STRESS_SECONDS=$(cmdline stress)
MMAP3_KERNEL=$(cmdline kernel)
export MMAP3_STRESS_SECONDS MMAP3_KERNEL

# The mmap3 selftests, each a section named PREFIX<binary>.
suite() {
	for t in records scope files cache fault order stress; do
		run "$1mmap3_$t" "./mmap3_$t"
	done
}

# The patched kernel alone: the ABI, then the suite with the kernel's
# built-in provider (sections builtin:mmap3_*), the module not loaded.
run mmap3_abi ./mmap3_abi
suite builtin:

# perf record --mmap3 without, then with the module (it loads it).
[ -f perf.sh ] && . ./perf.sh

load_module
suite ""
cat /sys/kernel/debug/mmap3/stats
run mmap3_lifecycle ./mmap3_lifecycle

# The module as dkms built and installed it (scripts/dkms-test.sh), in place
# of the one above: it loads with a parameter, has dkms.conf's version, and
# serves an mmap3 event; then the module above is loaded again.
dkms_module() {
	n=0 rc=0
	tap() {
		n=$((n + 1))
		if [ "$1" = 0 ]; then echo "ok $n $2"; else echo "not ok $n $2"; rc=1; fi
	}
	echo "TAP version 13"
	if [ ! -f /tests/mmap3-dkms.ko ]; then
		echo "1..1"
		echo "ok 1 dkms module # SKIP no /tests/mmap3-dkms.ko (scripts/dkms-test.sh)"
		return 4
	fi
	echo "1..6"
	rmmod mmap3
	tap $? "rmmod mmap3 (the module of scripts/module.sh)"
	insmod /tests/mmap3-dkms.ko cache_entries=64
	tap $? "insmod mmap3-dkms.ko cache_entries=64"
	[ -d /sys/module/mmap3 ] &&
		[ "$(cat /sys/module/mmap3/version)" = "$(cat /tests/mmap3-dkms.version)" ]
	tap $? "/sys/module/mmap3/version is dkms.conf's $(cat /tests/mmap3-dkms.version)"
	[ "$(cat /sys/module/mmap3/parameters/cache_entries)" = 64 ] &&
		grep -qx 'capacity 64' /sys/kernel/debug/mmap3/stats
	tap $? "cache_entries=64 in /sys/module/mmap3/parameters and in the stats"
	out=$(./mmap3_records -r records.same_fields_as_mmap2 2>&1)
	printf '%s\n' "$out" | grep -qx 'ok 1 records.same_fields_as_mmap2'
	tap $? "an mmap3 event opens and records a mapping (mmap3_records -r records.same_fields_as_mmap2)"
	[ "$rc" = 0 ] || printf '%s\n' "$out" | sed 's/^/# /'
	rmmod mmap3 && insmod /tests/mmap3.ko && [ -d /sys/module/mmap3 ]
	tap $? "rmmod mmap3-dkms, insmod mmap3.ko again"
	return $rc
}
run mmap3_dkms dkms_module

kmemleak_scan
