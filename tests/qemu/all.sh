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

# Before the module is loaded: the ABI as the patched kernel alone gives it.
run mmap3_abi ./mmap3_abi
run module_smoke sh ./module_smoke.sh
