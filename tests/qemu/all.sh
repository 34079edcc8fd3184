# SPDX-License-Identifier: GPL-2.0
# The guest script of `make test`: every selftest, in order, each between
# begin/end markers for tests/qemu/run.sh. Runs in the guest from /tests.
run() {
	name=$1
	shift
	echo "mmap3-test: begin $name"
	"$@"
	echo "mmap3-test: end $name rc=$?"
}

# The patched kernel alone: the ABI without a provider.
run mmap3_abi ./mmap3_abi

insmod /tests/mmap3.ko
run mmap3_records ./mmap3_records
run mmap3_stress ./mmap3_stress
cat /sys/kernel/debug/mmap3/stats
run mmap3_lifecycle ./mmap3_lifecycle

# The debug kernel: anything leaked so far is reported on the console.
if [ -e /sys/kernel/debug/kmemleak ]; then
	echo scan >/sys/kernel/debug/kmemleak
	echo scan >/sys/kernel/debug/kmemleak
	cat /sys/kernel/debug/kmemleak
fi
