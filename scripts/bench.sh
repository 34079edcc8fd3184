#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# `make bench`: what MMAP3 costs against MMAP2 and upstream's build-ids.
#   1. the patched test kernel, the module, perf (scripts/perf.sh) and the
#      unpatched kernel (MMAP3_KERNEL=upstream: mmap3-base without the
#      series; all cached);
#   2. stage the guest (scripts/guest.sh --stage) plus the benchmark: the
#      programs (tests/bench/*.c), the guest scripts, and bench.img, an ext2
#      image with a static binary, the dynamic workload programs, their
#      loader and libraries (tests/bench/bw.c, libbw.c) and some sources;
#      bench.manifest: the build-id of each of its files (readelf -n);
#   3. boot, MMAP3_BENCH_BOOTS times in turn: the patched kernel on
#      MMAP3_SMP CPUs (default 4) for the warm, tmpfs, threads and cover
#      items; the patched kernel on 1 CPU for exec (the other CPUs' work
#      would land in its timed loop), the warm loop again, the cold items
#      and a sibling's fork() during a pending read (behind dm-delay), the
#      creation and freeing of events, and the real workload under perf
#      record; the unpatched
#      kernel on MMAP3_SMP CPUs for its warm and cover items and the trace
#      event mmap3:build_id (the module built for it: scripts/module.sh
#      with MMAP3_KERNEL=upstream). In the first
#      MMAP3_BENCH_LOSS_BOOTS rounds (default 1), the 1-CPU boot of the
#      patched kernel also runs the items where upstream's build-ids go
#      missing or wrong (memory pressure, processes that exit, a library
#      renamed over; tests/bench/loss.sh), and the unpatched kernel boots
#      once more, on 1 CPU, for its side of them, with upstream's perf
#      (MMAP3_KERNEL=upstream scripts/perf.sh). The guest
#      script is tests/bench/guest-bench.sh (guest-bench-upstream.sh); bench.conf says
#      which items a boot runs. A boot that does not finish within
#      MMAP3_TIMEOUT (default 600 s) is run again, once: QEMU's -icount has
#      stalled a guest waiting on dm-delay (tests/bench/NOTES.md);
#   4. scripts/bench_report.py turns the guests' "bench ..." lines into a
#      markdown report in $MMAP3_CACHE/bench/ (one file per run, kept),
#      printed here too; its last line is "targets: N met, M missed, K ties".
# QEMU runs with -icount shift=0: the guest's clock advances 1 ns per guest
# instruction, so that guest times do not depend on the load of the host
# (MMAP3_BENCH_ICOUNT=0: plain TCG, host time, 4 ms jiffies clock in the
# guest: raise the counts then). Counts (environment, defaults below):
# MMAP3_BENCH_BOOTS, MMAP3_BENCH_CYCLES and MMAP3_BENCH_EXEC_CYCLES (cycles of
# interleaved configurations per boot, see tests/bench/mmap3_bench.c),
# MMAP3_BENCH_{MAP,EXEC}_ITERS (calls per configuration and block),
# MMAP3_BENCH_THREAD_{ITERS,CYCLES}, MMAP3_BENCH_COLD_SAMPLES (per
# configuration, delay, operation and boot; the fork item's samples too),
# MMAP3_BENCH_EVENT_ITERS (events opened and closed per configuration and
# block), MMAP3_BENCH_COLD_DELAYS (ms
# per I/O), MMAP3_BENCH_WORKLOAD_ITERS (iterations of the workload per run,
# 0: none), MMAP3_BENCH_WORKLOAD_BOOTS (how many boots run it),
# MMAP3_BENCH_LOSS_BOOTS (how many rounds run the three items below),
# MMAP3_BENCH_PRESSURE_ITERS (iterations of the workload under memory
# pressure per run, 0: not run), MMAP3_BENCH_PRESSURE_LEAVE_MB (the memory
# the hog leaves available), MMAP3_BENCH_PRESSURE_DATA_MB (the data the
# reader beside it streams), MMAP3_BENCH_EXITED_RUNS (test programs per
# run of the exited item, 0: not run), MMAP3_BENCH_EXITED_ROUNDS (the
# work of each), MMAP3_BENCH_RENAMED_PROCS (processes per group of the
# renamed item, 0: not run), MMAP3_BENCH_RENAMED_ROUNDS (the work of each).
. "$(dirname "$0")/lib.sh"

boots=${MMAP3_BENCH_BOOTS:-5}
cycles=${MMAP3_BENCH_CYCLES:-8}
exec_cycles=${MMAP3_BENCH_EXEC_CYCLES:-16}
map_iters=${MMAP3_BENCH_MAP_ITERS:-1000}
exec_iters=${MMAP3_BENCH_EXEC_ITERS:-50}
thread_iters=${MMAP3_BENCH_THREAD_ITERS:-500}
thread_cycles=${MMAP3_BENCH_THREAD_CYCLES:-2}
cold_samples=${MMAP3_BENCH_COLD_SAMPLES:-6}
event_iters=${MMAP3_BENCH_EVENT_ITERS:-200}
cold_delays=${MMAP3_BENCH_COLD_DELAYS:-2 10}
workload_iters=${MMAP3_BENCH_WORKLOAD_ITERS:-1000}
workload_boots=${MMAP3_BENCH_WORKLOAD_BOOTS:-$boots}
loss_boots=${MMAP3_BENCH_LOSS_BOOTS:-1}
pressure_iters=${MMAP3_BENCH_PRESSURE_ITERS:-300}
pressure_leave=${MMAP3_BENCH_PRESSURE_LEAVE_MB:-16}
pressure_data=${MMAP3_BENCH_PRESSURE_DATA_MB:-32}
exited_runs=${MMAP3_BENCH_EXITED_RUNS:-24}
exited_rounds=${MMAP3_BENCH_EXITED_ROUNDS:-80}
exited_variants=4
renamed_procs=${MMAP3_BENCH_RENAMED_PROCS:-1}
renamed_rounds=${MMAP3_BENCH_RENAMED_ROUNDS:-1000}
# The loss items this run has (tests/bench/loss.sh), by their counts.
loss_items=
[ "$pressure_iters" = 0 ] || loss_items+=" pressure"
[ "$exited_runs" = 0 ] || loss_items+=" exited"
[ "$renamed_procs" = 0 ] || loss_items+=" renamed"
[ "$loss_boots" != 0 ] || loss_items=
loss_items=${loss_items# }
smp=${MMAP3_SMP:-4}
threads="1 2 4"
[ "$smp" -ge 4 ] || threads="1 $smp"
if [ "${MMAP3_BENCH_ICOUNT:-1}" = 1 ]; then
	timing=icount
	export MMAP3_QEMU_OPTS="-icount shift=0,sleep=off"
else
	timing=host
fi
timeout=${MMAP3_TIMEOUT:-600}

start=$SECONDS
# The benchmark is of the test kernel, whatever MMAP3_KERNEL says.
MMAP3_KERNEL=test "$MMAP3_ROOT/scripts/kernel.sh"
MMAP3_KERNEL=upstream "$MMAP3_ROOT/scripts/kernel.sh"
MMAP3_KERNEL=test "$MMAP3_ROOT/scripts/module.sh"
MMAP3_KERNEL=upstream "$MMAP3_ROOT/scripts/module.sh"
if [ "$workload_iters" != 0 ] || [ -n "$loss_items" ]; then
	MMAP3_KERNEL=test "$MMAP3_ROOT/scripts/perf.sh"
fi
# Upstream's perf, for the unpatched kernel's side of the loss items and
# the workload's comparison of the defaults (guest.sh puts it in the guest
# when it is built).
if [ "$workload_iters" != 0 ] || [ -n "$loss_items" ]; then
	MMAP3_KERNEL=upstream "$MMAP3_ROOT/scripts/perf.sh"
fi
MMAP3_KERNEL=test "$MMAP3_ROOT/scripts/guest.sh" --stage

guest=$MMAP3_WORK/guest
bench=$MMAP3_ROOT/tests/bench
build_id() { readelf -n "$1" | sed -n 's/.*Build ID: \([0-9a-f]*\).*/\1/p'; }
"$MMAP3_ROOT/scripts/bench-build.sh" "$guest"
# The benchmark's disk, mounted at /slow in the guest: the dynamic programs
# find their loader and libraries there, not on the initramfs.
disk=$MMAP3_WORK/bench-disk
rm -rf "$disk"
mkdir -p "$disk"/{bin,lib,src}
cp -L /lib64/ld-linux-x86-64.so.2 /lib/x86_64-linux-gnu/libc.so.6 "$disk/lib/"
cp "$guest/tiny" "$disk/bin/tiny"
gcc -O2 -Wall -shared -fPIC -Wl,--build-id=sha1 -o "$disk/lib/libbw.so" "$bench/libbw.c"
# ROUNDS: how much each program works (the share of samples in it).
for tool in true:0 cc:8 as:3 ld:2; do
	gcc -O2 -Wall -DTOOL="\"${tool%%:*}\"" -DROUNDS="${tool##*:}" -Wl,--build-id=sha1 \
		-Wl,--dynamic-linker=/slow/lib/ld-linux-x86-64.so.2 -Wl,-rpath,/slow/lib \
		-o "$disk/bin/bw-${tool%%:*}" "$bench/bw.c" -L"$disk/lib" -lbw
done
# The loss items (tests/bench/loss.sh). exited: test programs of one
# source, each variant its own build-id. renamed: two versions of a
# library, each linked with a build-id of its own, and a program that
# finds it where the item installs it (/tmp/ren/lib).
for ((v = 0; v < exited_variants; v++)); do
	gcc -O2 -Wall -DVARIANT=$v -Wl,--build-id=sha1 \
		-Wl,--dynamic-linker=/slow/lib/ld-linux-x86-64.so.2 -Wl,-rpath,/slow/lib \
		-o "$disk/bin/ex-$v" "$bench/exited.c"
done
for v in 1 2; do
	# 20 bytes: "mmap3-libren-vN" and five zeros.
	id=$(printf 'mmap3-libren-v%s' $v | od -An -tx1 | tr -d ' \n')0000000000
	gcc -O2 -Wall -shared -fPIC -DREN_VERSION=$v -Wl,-soname,libren.so -Wl,--build-id=0x"$id" \
		-o "$disk/lib/libren-$v.so" "$bench/libren.c"
done
mkdir -p "$disk/ren-link"
cp "$disk/lib/libren-1.so" "$disk/ren-link/libren.so"
gcc -O2 -Wall -Wl,--dynamic-linker=/slow/lib/ld-linux-x86-64.so.2 \
	-Wl,-rpath,/tmp/ren/lib:/slow/lib -o "$disk/bin/ren" "$bench/renamed.c" \
	-L"$disk/ren-link" -lren
rm -r "$disk/ren-link"
[ "$(build_id "$disk/lib/libren-1.so")" != "$(build_id "$disk/lib/libren-2.so")" ] ||
	die "the two libren.so have one build-id"
# pressure: the data the reader streams beside the workload, 1 MiB a file.
data_mb=0
if [ "$pressure_iters" != 0 ]; then
	data_mb=$pressure_data
	mkdir -p "$disk/data"
	for ((i = 0; i < data_mb; i++)); do
		awk -v f="$i" 'BEGIN { for (n = 0; n < 32768; n++) printf "mmap3 bench data %6d %7d\n", f, n }' \
			>"$disk/data/$i"
	done
fi
# The workload's sources (not the loss items' programs: item 8 keeps its inputs).
for f in "$bench"/*.c "$MMAP3_ROOT"/src/*.rs; do
	case ${f##*/} in exited.c | renamed.c | libren.c) ;; *) cp "$f" "$disk/src/" ;; esac
done
: >"$guest/bench.manifest"
for f in "$disk"/bin/* "$disk"/lib/*; do
	id=$(build_id "$f")
	[ -n "$id" ] || die "$f: no build-id"
	echo "/slow/${f#"$disk"/} $id" >>"$guest/bench.manifest"
done
mke2fs -q -t ext2 -b 4096 -d "$disk" "$guest/bench.img" $((16 + data_mb * 9 / 8))M >/dev/null
rm -rf "$disk"
# The module as built for the unpatched kernel (the event item).
cp "$MMAP3_WORK/module-upstream$KTAG/mmap3.ko" "$guest/mmap3-unpatched.ko"
cp "$bench/guest-bench.sh" "$bench/guest-bench-upstream.sh" "$bench/workload.sh" "$bench/loss.sh" \
	"$bench/exited.sh" "$bench/renamed.sh" "$guest/"

# conf BOOT ITEMS: the guest's bench.conf for one boot.
conf() {
	cat >"$guest/bench.conf" <<EOF
BOOT=$1
ITEMS="$2"
CYCLES=$cycles
EXEC_CYCLES=$exec_cycles
MAP_ITERS=$map_iters
EXEC_ITERS=$exec_iters
THREADS="$threads"
THREAD_ITERS=$thread_iters
THREAD_CYCLES=$thread_cycles
COLD_SAMPLES=$cold_samples
COLD_DELAYS="$cold_delays"
EVENT_ITERS=$event_iters
WORKLOAD_ITERS=$workload_iters
WORKLOAD_DELAY=2
PRESSURE_ITERS=$pressure_iters
PRESSURE_LEAVE_MB=$pressure_leave
EXITED_RUNS=$exited_runs
EXITED_ROUNDS=$exited_rounds
EXITED_VARIANTS=$exited_variants
RENAMED_PROCS=$renamed_procs
RENAMED_ROUNDS=$renamed_rounds
TIMING=$timing
EOF
}

# boot VARIANT CPUS SCRIPT: boots, fails on a failed run; sets $out to its
# tests.log. A boot that timed out is run again, once.
retries=0
boot() {
	local err=$MMAP3_WORK/bench-boot.err result try
	for try in 1 2; do
		# Its log lines into $err, shown once it ends: a `tee` in a process
		# substitution could still be writing $err when it is read.
		result=$(MMAP3_KERNEL=$1 MMAP3_SMP=$2 "$MMAP3_ROOT/tests/qemu/run.sh" "$3" "$timeout" \
			2>"$err" | tail -n 1)
		cat "$err" >&2
		out=$(sed -n 's/.*test output: \(.*tests\.log\)$/\1/p' "$err" | tail -n 1)
		[ -f "$out" ] || die "no output from the $1 kernel's run"
		read -r _ failed _ <<<"$result"
		[ "$failed" = 0 ] && return
		if [ "$try" = 1 ] && grep -q 'did not finish within' "$err"; then
			log "the $1 kernel's run stalled ($out): running it again"
			retries=$((retries + 1))
			continue
		fi
		die "the benchmark failed on the $1 kernel (see $out)"
	done
}

patched=()
upstream=()
for ((b = 1; b <= boots; b++)); do
	items="warm1 exec builtin-exec cold fork events"
	[ "$workload_iters" != 0 ] && [ "$b" -le "$workload_boots" ] && items="$items workload"
	loss=
	[ "$b" -le "$loss_boots" ] && loss=$loss_items
	t=$SECONDS
	conf "$b" "warm tmpfs threads cover builtin"
	boot test "$smp" guest-bench.sh
	patched+=("$out")
	conf "$b" "$items${loss:+ $loss}"
	boot test 1 guest-bench.sh
	patched+=("$out")
	log "patched kernel, boot $b of $boots ($smp CPUs, then 1 CPU): $((SECONDS - t)) s"
	t=$SECONDS
	conf "$b" "warm cover event"
	boot upstream "$smp" guest-bench-upstream.sh
	upstream+=("$out")
	if [ -n "$loss" ]; then
		conf "$b" "$loss"
		boot upstream 1 guest-bench-upstream.sh
		upstream+=("$out")
	fi
	log "unpatched kernel, boot $b of $boots${loss:+ ($smp CPUs, then 1 CPU)}: $((SECONDS - t)) s"
done

dir=$MMAP3_CACHE/bench
mkdir -p "$dir"
stamp=$(date +%Y%m%d-%H%M%S)
report=$dir/report-$stamp.md
# The cache hit's instructions in the host crate (callgrind counts repeat
# exactly); the report holds it against its target.
log "host: the instructions of a cache hit (buildid/callgrind-hit.sh)"
CARGO_TARGET_DIR="$MMAP3_WORK/buildid-target" "$MMAP3_ROOT/buildid/callgrind-hit.sh" 1000000 \
	>"$dir/callgrind-$stamp.txt" || log "buildid/callgrind-hit.sh failed"
python3 "$MMAP3_ROOT/scripts/bench_report.py" --retries "$retries" --patched "${patched[@]}" \
	--upstream "${upstream[@]}" --callgrind "$dir/callgrind-$stamp.txt" >"$report"
cat "$report"
echo
log "report: $report; make bench took $((SECONDS - start)) s"
