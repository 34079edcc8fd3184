# SPDX-License-Identifier: GPL-2.0
# The second guest script of `make test`, which boots it with 4 CPUs
# (MMAP3_SMP=4; scripts/test.sh): the concurrency tests of mmap3_records
# and the stress tests, with the module loaded. Runs in the guest from
# /tests, like all.sh.
. ./guest-lib.sh

MMAP3_STRESS_SECONDS=$(cmdline stress)
MMAP3_KERNEL=$(cmdline kernel)
MMAP3_UNLOAD_CYCLES=$(cmdline cycles)
export MMAP3_STRESS_SECONDS MMAP3_KERNEL MMAP3_UNLOAD_CYCLES

load_module

# Every test of mmap3_records whose name says it is about concurrency
# (there is at least one: finding none is a setup error).
tests=$(./mmap3_records -l 2>&1 | awk '$NF ~ /concurren/ { print $NF }')
[ -n "$tests" ] || echo "mmap3-guest: error: no concurrency test in mmap3_records -l"
for t in $tests; do
	run "mmap3_records:$t" ./mmap3_records -t "$t"
done
run mmap3_stress ./mmap3_stress
cat /sys/kernel/debug/mmap3/stats

kmemleak_scan
