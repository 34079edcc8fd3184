#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Where the instructions of one mapping go, per configuration: boots the
# test kernel on one CPU with QEMU's gdbstub, runs mmap3_bench's warm
# mapping loop once per configuration (tests/bench/guest-profile.sh) and has gdb
# single-step perf_event_mmap() for one mapping of each
# (tests/bench/trace.py), from its call to its return.
#
#   scripts/profile.sh [CFG@ext2|CFG@tmpfs ...]
#
# CFG is one of mmap3_bench's (none, mmap2, mmap2bid, mmap3, mmap3-nc, event);
# the default compares them all on ext2, and MMAP2+build_id with MMAP3 on
# tmpfs (never cached: parsed at every mapping). Writes the report into
# $MMAP3_CACHE/profile/ and prints its totals: for each run the instructions
# of the call and the same without the allocators' slow paths, which come
# and go with the allocators' state (a kmalloc() that needs a new slab).
# Under TCG, gdb's single steps see every guest instruction and no
# interrupt (QEMU masks them while stepping), so a run's count repeats
# from boot to boot but for the allocators: an exact complement to
# make bench, whose -icount times are instruction counts over whole loops.
# PROF_AT=SUBSTRING adds, for the functions whose names hold it, the steps
# at each of their addresses (tests/bench/trace.py). PROF_FN=FUNCTION
# steps another function: do_syscall_64 (the whole mmap() system call at
# MAP_AT, exit work included), or one whose first argument is MAP_AT
# (ksys_mmap_pgoff: the mmap() call; __vm_munmap: the munmap()).
# PROF_SMP=N boots the guest on N CPUs (default 1; make bench's warm items
# run on 4). PROF_CALLS=N steps N calls in a row and gives each one's
# totals and their mean: whether the allocators' slow paths come now and
# then or at every call depends on their state. Installs gdb (apt-get)
# when it is missing.
. "$(dirname "$0")/lib.sh"

runs=("$@")
[ ${#runs[@]} -gt 0 ] || runs=(none@ext2 mmap2@ext2 mmap2bid@ext2 mmap3@ext2 mmap3-nc@ext2
	mmap2bid@tmpfs mmap3@tmpfs)
labels=()
for run in "${runs[@]}"; do
	cfg=${run%@*}
	fs=${run#*@}
	case "$cfg" in none | mmap2 | mmap2bid | mmap3 | mmap3-nc | event) ;; *) fs= ;; esac
	case "$fs" in
	ext2 | tmpfs) ;;
	*) die "unknown run '$run': CFG@ext2 or CFG@tmpfs, CFG one of none mmap2 mmap2bid mmap3 mmap3-nc event" ;;
	esac
	labels+=("$((${#labels[@]} + 1)):$run")
done
if ! command -v gdb >/dev/null; then
	log "installing gdb (apt-get)"
	export DEBIAN_FRONTEND=noninteractive
	apt-get update -q >/dev/null
	apt-get install -y -q --no-install-recommends gdb >/dev/null
fi

export MMAP3_KERNEL=test
"$MMAP3_ROOT/scripts/kernel.sh"
"$MMAP3_ROOT/scripts/module.sh"
"$MMAP3_ROOT/scripts/guest.sh" --stage
guest=$MMAP3_WORK/guest
"$MMAP3_ROOT/scripts/bench-build.sh" "$guest"
cp "$MMAP3_ROOT/tests/bench/guest-profile.sh" "$guest/"
# mmap3_bench's warm loop maps the file 16 times, then ITERS times timed:
# from the second timed mapping, PROF_CALLS of them (default 1) are stepped.
calls=${PROF_CALLS:-1}
[[ "$calls" =~ ^[1-9][0-9]*$ ]] || die "PROF_CALLS=$calls: a number of calls, 1 or more"
iters=$((2 + calls))
printf 'ITERS=%s\nRUNS="%s"\n' "$iters" "${labels[*]}" >"$guest/profile.conf"

port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
before=$(cat "$MMAP3_WORK/last-run" 2>/dev/null || true)
MMAP3_SMP=${PROF_SMP:-1} MMAP3_QEMU_OPTS="-gdb tcp:127.0.0.1:$port" \
	"$MMAP3_ROOT/tests/qemu/run.sh" guest-profile.sh $((1200 * calls)) >"$MMAP3_WORK/profile-run.out" 2>&1 &
qemu=$!
# run.sh names its log directory before it boots.
for _ in $(seq 100); do
	logs=$(cat "$MMAP3_WORK/last-run" 2>/dev/null || true)
	[ -n "$logs" ] && [ "$logs" != "$before" ] && break
	sleep 0.2
done
[ -n "$logs" ] && [ "$logs" != "$before" ] || die "tests/qemu/run.sh did not start"
mkdir -p "$MMAP3_CACHE/profile"
out=$MMAP3_CACHE/profile/profile-$(date +%Y%m%d-%H%M%S).txt
log "stepping through $calls mapping(s) per run (${labels[*]}), about 10 s each per call"
PROF_LOG=$logs/tests.log PROF_PORT=$port PROF_RUNS="${labels[*]}" PROF_HITS=$((16 + iters)) \
	PROF_HIT=18 PROF_CALLS=$calls PROF_OUT=$out timeout $((1200 * calls)) gdb -batch -nx -x "$MMAP3_ROOT/tests/bench/trace.py" \
	>"$MMAP3_WORK/profile-gdb.out" 2>&1 || {
	kill "$qemu" 2>/dev/null || true
	die "gdb failed: $MMAP3_WORK/profile-gdb.out"
}
wait "$qemu" || die "the guest run failed: $MMAP3_WORK/profile-run.out"
grep '^run ' "$out"
log "report: $out"
