#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# `make bench`: what MMAP3 costs against MMAP2 and upstream's build-ids.
#   1. the patched test kernel, the module, and the unpatched kernel
#      (MMAP3_KERNEL=upstream: mmap3-base without the series; all cached);
#   2. stage the guest (scripts/guest.sh --stage) plus the benchmark
#      (tests/bench/mmap3_bench.c, tests/bench/tiny.c, the guest scripts);
#   3. boot the patched kernel once (tests/bench/bench.sh), then the
#      unpatched kernel once (bench-upstream.sh);
#   4. scripts/bench_report.py turns the guest's "bench ..." lines into a
#      markdown report in $MMAP3_CACHE/bench/, printed here too.
# QEMU runs with -icount shift=0: the guest's clock advances 1 ns per guest
# instruction, so that guest times do not depend on the load of the host
# (MMAP3_BENCH_ICOUNT=0: plain TCG, host time, 4 ms jiffies clock in the
# guest: raise the counts then). Counts (environment): MMAP3_BENCH_CYCLES,
# MMAP3_BENCH_EXEC_CYCLES (cycles of interleaved configurations, see
# tests/bench/mmap3_bench.c), MMAP3_BENCH_{MAP,COLD,EXEC}_ITERS (calls per
# configuration and block).
. "$(dirname "$0")/lib.sh"

cycles=${MMAP3_BENCH_CYCLES:-8}
exec_cycles=${MMAP3_BENCH_EXEC_CYCLES:-8}
map_iters=${MMAP3_BENCH_MAP_ITERS:-2000}
cold_iters=${MMAP3_BENCH_COLD_ITERS:-2000}
exec_iters=${MMAP3_BENCH_EXEC_ITERS:-25}
if [ "${MMAP3_BENCH_ICOUNT:-1}" = 1 ]; then
	timing=icount
	export MMAP3_QEMU_OPTS="-icount shift=0,sleep=on"
else
	timing=host
fi
timeout=${MMAP3_TIMEOUT:-900}

start=$SECONDS
# The benchmark is of the test kernel, whatever MMAP3_KERNEL says.
MMAP3_KERNEL=test "$MMAP3_ROOT/scripts/kernel.sh"
MMAP3_KERNEL=upstream "$MMAP3_ROOT/scripts/kernel.sh"
MMAP3_KERNEL=test "$MMAP3_ROOT/scripts/module.sh"
MMAP3_KERNEL=test "$MMAP3_ROOT/scripts/guest.sh" --stage

guest=$MMAP3_WORK/guest
kobj=$MMAP3_CACHE/kernel-build
log "building the benchmark"
gcc -O2 -Wall -static -isystem "$kobj/usr/include" -o "$guest/mmap3_bench" \
	"$MMAP3_ROOT/tests/bench/mmap3_bench.c"
gcc -O2 -Wall -nostdlib -static -Wl,--build-id=sha1 -o "$guest/tiny" \
	"$MMAP3_ROOT/tests/bench/tiny.c"
tiny_id=$(readelf -n "$guest/tiny" | sed -n 's/.*Build ID: \([0-9a-f]*\).*/\1/p')
[ -n "$tiny_id" ] || die "tests/bench/tiny.c: no build-id"
cp "$MMAP3_ROOT/tests/bench/bench.sh" "$MMAP3_ROOT/tests/bench/bench-upstream.sh" "$guest/"
cat >"$guest/bench.conf" <<EOF
CYCLES=$cycles
EXEC_CYCLES=$exec_cycles
MAP_ITERS=$map_iters
COLD_ITERS=$cold_iters
EXEC_ITERS=$exec_iters
TIMING=$timing
TINY_BUILD_ID=$tiny_id
EOF

# boot VARIANT SCRIPT: boots, fails on a failed run; sets $out to its tests.log.
boot() {
	local err=$MMAP3_WORK/bench-boot.err result
	result=$(MMAP3_KERNEL=$1 "$MMAP3_ROOT/tests/qemu/run.sh" "$2" "$timeout" \
		2> >(tee "$err" >&2) | tail -n 1)
	wait # for tee
	out=$(sed -n 's/.*test output: \(.*tests\.log\)$/\1/p' "$err" | tail -n 1)
	[ -f "$out" ] || die "no output from the $1 kernel's run"
	read -r _ failed _ <<<"$result"
	[ "$failed" = 0 ] || die "the benchmark failed on the $1 kernel (see $out)"
}

t=$SECONDS
boot test bench.sh
patched=$out
log "patched kernel: $((SECONDS - t)) s"
t=$SECONDS
boot upstream bench-upstream.sh
upstream=$out
log "unpatched kernel: $((SECONDS - t)) s"

dir=$MMAP3_CACHE/bench
mkdir -p "$dir"
report=$dir/report-$(date +%Y%m%d-%H%M%S).md
python3 "$MMAP3_ROOT/scripts/bench_report.py" "$patched" "$upstream" >"$report"
cat "$report"
echo
log "report: $report (raw lines: $patched, $upstream); make bench took $((SECONDS - start)) s"
