# SPDX-License-Identifier: GPL-2.0
# The guest script of `make bench` (scripts/bench.sh): runs in the guest
# from /tests, prints one "bench ..." line per measurement between the
# begin/end markers tests/qemu/run.sh expects. bench.conf (written by
# scripts/bench.sh) sets the counts; KERNEL is "patched" (this file) or
# "upstream" (bench-upstream.sh, which sources this one).
#
# Every round runs every configuration once, in an order that rotates from
# round to round (ABCD BCDA ...), so that a slow moment of the host hits
# each configuration alike; the report takes medians over rounds.
. ./bench.conf
KERNEL=${KERNEL:-patched}
B=./mmap3_bench
FILE=/mnt/bid20.elf	# an ELF file on the ext2 disk: its pages can be dropped

# rotate N WORD...: the words, rotated left by N.
rotate() {
	n=$(($1 % ($# - 1)))
	shift
	while [ "$n" -gt 0 ]; do
		set -- "$@" "$1"
		shift
		n=$((n - 1))
	done
	echo "$@"
}

# module cache|nocache: (re)load mmap3.ko with its cache on or off.
module() {
	rmmod mmap3 2>/dev/null
	if [ "$1" = cache ]; then
		insmod /tests/mmap3.ko
	else
		insmod /tests/mmap3.ko cache_entries=0
	fi || fail=1
	export BENCH_TAG="kernel=$KERNEL round=$r module=$1"
}

# The measurements that depend on the module's cache: under $1 (cache or
# nocache) with the configurations $2.
patched_block() {
	module "$1"
	for c in $(rotate "$r" $2); do
		$B map "$c" $FILE "$MAP_ITERS" || fail=1
	done
	for c in $(rotate "$r" $2); do
		$B map "$c" $FILE "$COLD_ITERS" cold || fail=1
	done
	for c in $(rotate "$r" $2); do
		$B exec "$c" /tests/tiny "$EXEC_ITERS" "$TINY_BUILD_ID" || fail=1
	done
	for c in $(rotate "$r" $2); do
		[ "$c" = none ] || [ "$c" = mmap2 ] && continue
		$B cover "$c" /mnt warm || fail=1
		$B cover "$c" /mnt cold || fail=1
	done
}

echo "mmap3-test: begin bench-$KERNEL"
fail=0
start=$(date +%s)
echo "# $KERNEL kernel: $(uname -r), $(nproc) CPUs; clock source $(cat /sys/devices/system/clocksource/clocksource0/current_clocksource)"
echo "# bench.conf: ROUNDS=$ROUNDS MAP_ITERS=$MAP_ITERS COLD_ITERS=$COLD_ITERS EXEC_ITERS=$EXEC_ITERS REF_ITERS=$REF_ITERS"
export BENCH_TAG="kernel=$KERNEL round=0 module=none"
$B resident $FILE || fail=1

r=1
while [ "$r" -le "$ROUNDS" ]; do
	if [ "$KERNEL" = patched ]; then
		# The module's two states alternate too: cache first in odd rounds.
		if [ $((r % 2)) = 1 ]; then
			patched_block cache "none mmap2 mmap2bid mmap3"
			patched_block nocache "mmap3"
		else
			patched_block nocache "mmap3"
			patched_block cache "none mmap2 mmap2bid mmap3"
		fi
		rmmod mmap3
	else
		export BENCH_TAG="kernel=$KERNEL round=$r module=none"
		for c in $(rotate "$r" none mmap2 mmap2bid); do
			$B map "$c" $FILE "$MAP_ITERS" || fail=1
		done
		[ "$r" = 1 ] && { $B cover mmap2bid /mnt warm; $B cover mmap2bid /mnt cold; }
	fi
	# The host's speed, to compare the two boots (item 4).
	$B ref "$REF_ITERS" || fail=1
	echo "# round $r done at $(($(date +%s) - start)) s"
	r=$((r + 1))
done
echo "mmap3-test: end bench-$KERNEL rc=$fail"
