# SPDX-License-Identifier: GPL-2.0
# The guest script of `make bench` (scripts/bench.sh): runs in the guest
# from /tests and prints one "bench ..." line per measurement, between the
# begin/end markers tests/qemu/run.sh expects. bench.conf (written by
# scripts/bench.sh before each boot) sets the counts, the boot's number
# and whether this boot runs the real workload. KERNEL is "patched" here,
# "upstream" in guest-bench-upstream.sh (the unpatched kernel: no MMAP3; the
# module, built for it, only in the event item). mmap3_bench interleaves
# the configurations itself (see its comment); the items are those of the report (scripts/bench_report.py),
# what each shows and cannot show is in tests/bench/NOTES.md. The items
# where upstream's build-ids go missing or wrong (pressure, exited,
# renamed) are in loss.sh, for both kernels.
. ./bench.conf
. ./guest-lib.sh
. ./loss.sh
KERNEL=${KERNEL:-patched}
FILE=/mnt/bid20.elf	# an ELF file on the ext2 disk (loop0)
SLOW=/slow		# /tests/bench.img: ext2 behind dm-delay (loop1)
fail=0
# The build-ids of the programs the items map, as readelf read them.
TINY_BUILD_ID=$(manifest_id /slow/bin/tiny)
BW_TRUE_BUILD_ID=$(manifest_id /slow/bin/bw-true)
LIBC_BUILD_ID=$(manifest_id /slow/lib/libc.so.6)

# want ITEM: whether this boot runs ITEM (bench.conf's ITEMS).
want() {
	case " $ITEMS " in *" $1 "*) return 0 ;; *) return 1 ;; esac
}

# step ITEM ARG...: mmap3_bench ARG..., its lines tagged with the report's item.
step() {
	item=$1
	shift
	echo "# $(($(date +%s) - start)) s: $*"
	BENCH_TAG="kernel=$KERNEL boot=$BOOT item=$item${TAG:+ $TAG}" ./mmap3_bench "$@" || fail=1
}

echo "mmap3-test: begin bench-$KERNEL"
start=$(date +%s)
echo "# $KERNEL kernel: Linux $(uname -r), $(nproc) CPU(s), clock source $(cat /sys/devices/system/clocksource/clocksource0/current_clocksource)"
echo "# bench.conf: $(grep -v '^#' bench.conf | tr '\n' ' ')"
step resident resident $FILE
ref=
[ "$TIMING" = host ] && ref=ref

if [ "$KERNEL" = upstream ]; then
	# The series' cost to MMAP2 users: the same loop as the patched
	# kernel's "warm" item, without the series.
	want warm && step warm map $FILE warm "$MAP_ITERS" "$CYCLES" none mmap2 mmap2bid $ref
	want cover && step cover cover /mnt cold mmap2bid
	want cover && step cover cover /mnt warm mmap2bid
	# event: the module without the series serving the trace event
	# mmap3:build_id (its own build for this kernel): the warm loop
	# without the module (bare), with it and the event disabled (idle),
	# and read as perf record reads it (event), beside MMAP2+build_id;
	# then the fixtures cold and warm through the event.
	if want event; then
		[ -d /sys/kernel/tracing/events ] || mount -t tracefs tracefs /sys/kernel/tracing
		export MMAP3_MODULE=/tests/mmap3-unpatched.ko
		step event map $FILE warm "$MAP_ITERS" "$CYCLES" bare idle mmap2 mmap2bid event $ref
		step cover cover /mnt cold event
		step cover cover /mnt warm event
		rmmod mmap3 || fail=1
	fi
	if want pressure || want exited || want renamed; then
		./mmap3_bench disk up /tests/bench.img $SLOW || fail=1
		loss_items
		umount $SLOW
	fi
	echo "# $(($(date +%s) - start)) s: done"
	echo "mmap3-test: end bench-$KERNEL rc=$fail"
	exit 0
fi

./mmap3_bench disk up /tests/bench.img $SLOW || fail=1
# builtin: the series alone, its built-in provider (no module), beside
# MMAP2+build_id: the warm loop, 4 tasks and the fixtures cold and warm
# (the 4-CPU boot), exec (builtin-exec, the 1-CPU boot).
if want builtin; then
	step builtin map $FILE warm "$MAP_ITERS" "$CYCLES" none mmap2 mmap2bid builtin $ref
	[ "$(nproc)" -ge 4 ] &&
		step builtin-threads threads $FILE "$THREAD_ITERS" "$THREAD_CYCLES" 4 none mmap2bid builtin
	step cover cover /mnt cold builtin
	step cover cover /mnt warm builtin
fi
want builtin-exec &&
	step builtin-exec exec $SLOW/bin/tiny "$TINY_BUILD_ID" "$EXEC_ITERS" "$EXEC_CYCLES" none mmap2 mmap2bid builtin
insmod /tests/mmap3.ko || fail=1
cp $FILE /tmp/bid20.elf

# warm: mmap+munmap of a file on ext2 (the module answers from its cache)
want warm && step warm map $FILE warm "$MAP_ITERS" "$CYCLES" none mmap2 mmap2bid mmap3 mmap3-nc $ref
# warm1: the same loop in the 1-CPU guest (no target: tests/bench/NOTES.md)
want warm1 && step warm1 map $FILE warm "$MAP_ITERS" "$CYCLES" none mmap2 mmap2bid mmap3 mmap3-nc $ref
# tmpfs: the same file on tmpfs (parsed from the page cache every time)
want tmpfs && step tmpfs map /tmp/bid20.elf warm "$MAP_ITERS" "$CYCLES" none mmap2 mmap2bid mmap3
# exec: fork+exec+wait of a static binary on ext2, then on tmpfs
want exec && step exec exec $SLOW/bin/tiny "$TINY_BUILD_ID" "$EXEC_ITERS" "$EXEC_CYCLES" none mmap2 mmap2bid mmap3
want exec && step exec-tmpfs exec /tests/tiny "$TINY_BUILD_ID" "$EXEC_ITERS" "$EXEC_CYCLES" none mmap2 mmap2bid mmap3
# threads: 1, 2 and 4 tasks mapping at once, system-wide event
want threads || THREADS=
for t in $THREADS; do
	[ "$t" -le "$(nproc)" ] || { echo "# threads: $t tasks > $(nproc) CPUs"; fail=1; continue; }
	step threads threads $FILE "$THREAD_ITERS" "$THREAD_CYCLES" "$t" none mmap2bid mmap3
done
# cold: first exec / first mmap with nothing cached, the disk slowed down.
# MMAP3 with cache_entries=0: every lookup is a first one.
want cold || COLD_DELAYS=
for ms in $COLD_DELAYS; do
	./mmap3_bench disk delay "$ms" || fail=1
	TAG="delay=$ms" step cold cold exec $SLOW/bin/bw-true "$BW_TRUE_BUILD_ID" "$COLD_SAMPLES" none mmap2bid mmap3-nc
	TAG="delay=$ms" step cold cold map-bare $SLOW/lib/libc.so.6 "$LIBC_BUILD_ID" "$COLD_SAMPLES" none mmap2bid mmap3-nc
	TAG="delay=$ms" step cold cold map-hdr $SLOW/lib/libc.so.6 "$LIBC_BUILD_ID" "$COLD_SAMPLES" none mmap2bid mmap3-nc
done
# fork: a thread maps a file nothing of which is cached (the series:
# PENDING, read on its way back to user space), its sibling forks 2 ms
# later; the fork() is timed (10 ms a read)
if want fork; then
	./mmap3_bench disk delay 10 || fail=1
	step fork fork $SLOW/lib/libc.so.6 "$LIBC_BUILD_ID" 2000 "$COLD_SAMPLES" none mmap2bid builtin mmap3-nc
fi
./mmap3_bench disk delay 0 || fail=1
# events: perf_event_open() and close() of each listener
want events && step events events "$EVENT_ITERS" "$CYCLES" mmap2 mmap2bid builtin mmap3
# fork and events leave the module unloaded when builtin came last
grep -q '^mmap3 ' /proc/modules || insmod /tests/mmap3.ko || fail=1
# cover: every fixture, cold first, while the cache does not know the files
want cover && step cover cover /mnt cold mmap2bid mmap3 mmap3-nc
want cover && step cover cover /mnt warm mmap2bid mmap3 mmap3-nc

# workload: a build-like shell loop of dynamic programs from the slow disk,
# cold at the start, under perf record -a.
if want workload; then
	./mmap3_bench disk delay "$WORKLOAD_DELAY" || fail=1
	# No ASLR here: QEMU then reuses its translations of ld.so and libc
	# from one exec to the next (the same guest instructions, half the
	# host time).
	echo 0 >/proc/sys/kernel/randomize_va_space
	# upstream: the unpatched perf (7.3's, without the series) in its
	# default, on this kernel with the module, as the series' perf's
	# default (buildid-mmap) is measured against it. Both run from paths
	# of the same length: the path and argv[0] are on the new process's
	# stack, and their length moves every buffer on perf's stack, which
	# changes how many instructions its start takes (tests/bench/NOTES.md).
	mkdir -p /tmp/perf-s /tmp/perf-u
	ln -sf /tests/perf/perf /tmp/perf-s/perf
	ln -sf /tests/perf/perf-upstream /tmp/perf-u/perf
	# The same reason the other way round: with ASLR off and the guest
	# clock counting instructions, every boot would be a replica of the
	# first, its layout's luck frozen into all five. An environment whose
	# size depends on the boot (BOOT x 400 bytes, in every run of the
	# boot) puts each boot's stacks at other page offsets, so that the
	# spread across boots holds what layout alone moves.
	MMAP3_BENCH_LAYOUT=$(head -c $((BOOT * 400)) /dev/zero | tr '\0' x)
	export MMAP3_BENCH_LAYOUT
	# The two defaults the target compares run twice each, in the order
	# ABBA: the run in a later place is slower or faster by up to 1.6 ms
	# whichever perf it is (tests/bench/NOTES.md), and in a fixed order
	# that went to one perf. run= tells the report the two apart.
	round=0
	for mode in none plain buildid-mmap upstream upstream buildid-mmap mmap3; do
		round=$((round + 1))
		rmmod mmap3 && insmod /tests/mmap3.ko || fail=1
		rm -f /tmp/perf.data
		sync
		echo 3 >/proc/sys/vm/drop_caches
		case $mode in
		none) cmd="sh ./workload.sh $WORKLOAD_ITERS" ;;
		plain) cmd="/tmp/perf-s/perf record -a --no-buildid-mmap -e cpu-clock -c 2000000 -o /tmp/perf.data -- sh ./workload.sh $WORKLOAD_ITERS" ;;
		upstream) cmd="/tmp/perf-u/perf record -a --buildid-mmap -e cpu-clock -c 2000000 -o /tmp/perf.data -- sh ./workload.sh $WORKLOAD_ITERS" ;;
		*) cmd="/tmp/perf-s/perf record -a --$mode -e cpu-clock -c 2000000 -o /tmp/perf.data -- sh ./workload.sh $WORKLOAD_ITERS" ;;
		esac
		echo "# $(($(date +%s) - start)) s: workload $mode: $cmd"
		tag="kernel=$KERNEL boot=$BOOT item=workload mode=$mode run=$round"
		BENCH_TAG=$tag ./mmap3_bench run $cmd >/tmp/workload.out 2>&1 || fail=1
		grep '^bench ' /tmp/workload.out
		grep -v '^bench ' /tmp/workload.out | grep -i 'perf record\|lost\|warn\|error' | sed 's/^/# /'
		[ "$mode" = none ] && continue
		BENCH_TAG=$tag ./perfdata /tmp/perf.data /tests/bench.manifest || fail=1
	done
	unset MMAP3_BENCH_LAYOUT
	echo 2 >/proc/sys/kernel/randomize_va_space
	./mmap3_bench disk delay 0 || fail=1
fi
# pressure, exited, renamed: the share of right build-ids (loss.sh)
loss_items
cat /sys/kernel/debug/mmap3/stats | sed 's/^/# stats: /'
umount $SLOW
rmmod mmap3 || fail=1
echo "# $(($(date +%s) - start)) s: done"
echo "mmap3-test: end bench-$KERNEL rc=$fail"
