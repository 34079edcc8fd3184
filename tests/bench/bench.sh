# SPDX-License-Identifier: GPL-2.0
# The guest script of `make bench` (scripts/bench.sh): runs in the guest
# from /tests and prints one "bench ..." line per measurement, between the
# begin/end markers tests/qemu/run.sh expects. bench.conf (written by
# scripts/bench.sh) sets the counts. KERNEL is "patched" here, "upstream"
# in bench-upstream.sh (the unpatched kernel: no module, no MMAP3).
# mmap3_bench interleaves the configurations itself (see its comment).
. ./bench.conf
KERNEL=${KERNEL:-patched}
FILE=/mnt/bid20.elf	# an ELF file on the ext2 disk: its pages can be dropped
fail=0

step() {
	echo "# $(($(date +%s) - start)) s: $*"
	./mmap3_bench "$@" || fail=1
}

echo "mmap3-test: begin bench-$KERNEL"
start=$(date +%s)
echo "# $KERNEL kernel: Linux $(uname -r), $(nproc) CPU(s), clock source $(cat /sys/devices/system/clocksource/clocksource0/current_clocksource)"
echo "# bench.conf: $(grep -v '^#' bench.conf | tr '\n' ' ')"
export BENCH_TAG="kernel=$KERNEL"
step resident $FILE

if [ "$KERNEL" = patched ]; then
	insmod /tests/mmap3.ko
	# 1. and 4.: warm; ref: the host's speed, for item 4.
	step map $FILE warm "$MAP_ITERS" "$BLOCKS" none mmap2 mmap2bid mmap3 mmap3-nc ref
	# 2. cold
	step map $FILE cold "$COLD_ITERS" "$BLOCKS" none mmap2 mmap2bid mmap3 mmap3-nc
	# 3. exec
	step exec /tests/tiny "$TINY_BUILD_ID" "$EXEC_ITERS" "$EXEC_BLOCKS" none mmap2 mmap2bid mmap3 mmap3-nc
	# 5. coverage
	step cover /mnt warm mmap2bid mmap3 mmap3-nc
	step cover /mnt cold mmap2bid mmap3 mmap3-nc
	rmmod mmap3 || fail=1
else
	step map $FILE warm "$MAP_ITERS" "$BLOCKS" none mmap2 mmap2bid ref
	step cover /mnt warm mmap2bid
	step cover /mnt cold mmap2bid
fi
echo "# $(($(date +%s) - start)) s: done"
echo "mmap3-test: end bench-$KERNEL rc=$fail"
