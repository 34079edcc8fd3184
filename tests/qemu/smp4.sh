# SPDX-License-Identifier: GPL-2.0
# The second guest script of `make test`, which boots it with 4 CPUs
# (MMAP3_SMP=4; scripts/test.sh): the concurrency tests of mmap3_records
# and the stress tests, with the module loaded. Runs in the guest from
# /tests, like all.sh.
run() {
	name=$1
	shift
	echo "mmap3-test: begin $name"
	"$@"
	echo "mmap3-test: end $name rc=$?"
}

cmdline() {
	sed -n "s/.*mmap3\.$1=\([^ ]*\).*/\1/p" /proc/cmdline
}

MMAP3_STRESS_SECONDS=$(cmdline stress)
MMAP3_KERNEL=$(cmdline kernel)
MMAP3_UNLOAD_CYCLES=$(cmdline cycles)
export MMAP3_STRESS_SECONDS MMAP3_KERNEL MMAP3_UNLOAD_CYCLES

grep -q '^mmap3 ' /proc/modules || insmod /tests/mmap3.ko

# Every test of mmap3_records whose name says it is about concurrency
# (there is at least one: finding none is a setup error).
tests=$(./mmap3_records -l 2>&1 | awk '$NF ~ /concurren/ { print $NF }')
[ -n "$tests" ] || echo "mmap3-guest: error: no concurrency test in mmap3_records -l"
for t in $tests; do
	run "mmap3_records:$t" ./mmap3_records -t "$t"
done
run mmap3_stress ./mmap3_stress
cat /sys/kernel/debug/mmap3/stats

# The debug kernel: anything leaked so far is reported. kmemleak reports
# only objects older than 5 s: let the last ones age first. A scan that
# fails (kmemleak turned itself off) fails the run.
if [ -e /sys/kernel/debug/kmemleak ]; then
	sleep 6
	if echo scan >/sys/kernel/debug/kmemleak && echo scan >/sys/kernel/debug/kmemleak; then
		echo "# kmemleak: scanned twice after 6 s; reports follow, if any"
		cat /sys/kernel/debug/kmemleak
	else
		echo "mmap3-guest: error: the kmemleak scan failed"
	fi
fi
