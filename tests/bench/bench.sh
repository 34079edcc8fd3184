# SPDX-License-Identifier: GPL-2.0
# The guest script of `make bench` (scripts/bench.sh): runs in the guest
# from /tests and prints one "bench ..." line per measurement, between the
# begin/end markers tests/qemu/run.sh expects. bench.conf (written by
# scripts/bench.sh) sets the counts. KERNEL is "patched" here, "upstream"
# in bench-upstream.sh (the unpatched kernel: no module, no MMAP3).
# mmap3_bench interleaves the configurations itself (see its comment); the
# items are those of the report (scripts/bench_report.py).
. ./bench.conf
KERNEL=${KERNEL:-patched}
FILE=/mnt/bid20.elf	# an ELF file on the ext2 disk: its pages can be dropped
fail=0

# step ITEM ARG...: mmap3_bench ARG..., its lines tagged with the report's item.
step() {
	item=$1
	shift
	echo "# $(($(date +%s) - start)) s: $*"
	BENCH_TAG="kernel=$KERNEL item=$item" ./mmap3_bench "$@" || fail=1
}

echo "mmap3-test: begin bench-$KERNEL"
start=$(date +%s)
echo "# $KERNEL kernel: Linux $(uname -r), $(nproc) CPU(s), clock source $(cat /sys/devices/system/clocksource/clocksource0/current_clocksource)"
echo "# bench.conf: $(grep -v '^#' bench.conf | tr '\n' ' ')"
step 2 resident $FILE

# 4. The same in both kernels, the module loaded in the patched one, no
# MMAP3 event: ref is a user-space loop, the host's speed in each boot.
[ "$KERNEL" = patched ] && insmod /tests/mmap3.ko
step 4 map $FILE warm "$MAP_ITERS" "$CYCLES" none mmap2 mmap2bid ref
if [ "$KERNEL" = patched ]; then
	# 1. warm
	step 1 map $FILE warm "$MAP_ITERS" "$CYCLES" none mmap2 mmap2bid mmap3 mmap3-nc
	# 2. cold
	step 2 map $FILE cold "$COLD_ITERS" "$CYCLES" none mmap2 mmap2bid mmap3 mmap3-nc
	# 3. exec
	step 3 exec /tests/tiny "$TINY_BUILD_ID" "$EXEC_ITERS" "$EXEC_CYCLES" none mmap2 mmap2bid mmap3 mmap3-nc
	# 5. coverage: cold first, while the cache does not know the files
	step 5 cover /mnt cold mmap2bid mmap3 mmap3-nc
	step 5 cover /mnt warm mmap2bid mmap3 mmap3-nc
	rmmod mmap3 || fail=1
else
	step 5 cover /mnt cold mmap2bid
	step 5 cover /mnt warm mmap2bid
fi
echo "# $(($(date +%s) - start)) s: done"
echo "mmap3-test: end bench-$KERNEL rc=$fail"
