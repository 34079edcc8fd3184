#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Boot the test kernel in QEMU and run one guest script.
#
#   tests/qemu/run.sh SCRIPT [TIMEOUT_SECONDS]
#
# Packs an initramfs (busybox, tests/qemu/init, everything in
# $MMAP3_WORK/guest, which holds SCRIPT, and an ext2 image made from
# $MMAP3_WORK/guest/fixtures), boots bzImage with TCG (MMAP3_KVM=1
# for KVM), and reads the guest's output: TAP from the tests on the second
# serial port, the kernel log on the first. Fails when a test fails; when
# a test is skipped that tests/qemu/expected-skips does not list; when the
# guest scripts report a setup error ("mmap3-guest: error: ...": the ext2
# disk does not mount, insmod fails, the kmemleak scan fails); when fewer
# CPUs come up than MMAP3_SMP asks for; when a debug feature the kernel is
# configured with did not come up; when the kernel logs an oops, BUG,
# WARNING, lockdep, KASAN, KCSAN or kmemleak report; or when the guest does
# not finish within TIMEOUT_SECONDS (default: $MMAP3_TIMEOUT, else 900, or
# 1800 on the debug and KCSAN kernels: all.sh took 881 s on the debug
# kernel, its two stress runs 60 s each, against about 210 s on the test
# kernel). Then the guest's watchdog (tests/qemu/init) prints what its tasks
# are doing and stops it, which run.sh shows; QEMU is killed 120 s later if
# the guest has not stopped.
# MMAP3_STRESS_SECONDS (default 5) goes to the guest for the stress test,
# MMAP3_UNLOAD_CYCLES (default: 200 on the debug kernel, else 20) for its
# rmmod race in smp4.sh, and MMAP3_KERNEL, which kernel it is, for its
# floors.
# MMAP3_SMP (default 2): the guest's CPUs; the run fails when fewer come up.
# MMAP3_QEMU_OPTS: more QEMU options (make bench: -icount).
# Prints "<passed> <failed> <skipped>" as its last line on stdout.
. "$(dirname "$0")/../../scripts/lib.sh"

script=${1:?usage: tests/qemu/run.sh SCRIPT [TIMEOUT_SECONDS]}
case "$MMAP3_KERNEL" in debug | kcsan) timeout=1800 ;; *) timeout=900 ;; esac
timeout=${2:-${MMAP3_TIMEOUT:-$timeout}}
tests=$MMAP3_WORK/guest
[ -f "$tests/$script" ] || die "no guest script $tests/$script"
# MMAP3_BZIMAGE and MMAP3_KCONFIG: another kernel and its .config than
# this variant's (scripts/debian-test.sh: Debian's own); MMAP3_GUEST_EXTRA:
# a directory whose files go into the initramfs too (Debian's modules,
# which /init loads from /modules when it finds /modules/order).
bzimage=${MMAP3_BZIMAGE:-$KOBJ/arch/x86/boot/bzImage}
kconfig=${MMAP3_KCONFIG:-$KOBJ/.config}
[ -f "$bzimage" ] || die "no kernel at $bzimage: run scripts/kernel.sh"

logs=$MMAP3_CACHE/logs/$(date +%Y%m%d-%H%M%S)-${script%.sh}
mkdir -p "$logs"
ln -sfn "$logs" "$MMAP3_CACHE/logs/latest"
echo "$logs" >"$MMAP3_WORK/last-run"	# this checkout's, whatever others run
root=$logs/root
mkdir -p "$root"/{bin,dev,proc,sys,tmp,mnt,lib64,lib/x86_64-linux-gnu}
cp /bin/busybox "$root/bin/busybox"
cp "$MMAP3_ROOT/tests/qemu/init" "$root/init"
cp -a "$tests" "$root/tests"
[ -z "${MMAP3_GUEST_EXTRA:-}" ] || cp -a "$MMAP3_GUEST_EXTRA/." "$root/"
# The dynamic loader and libc, for dynamically linked test programs.
for lib in /lib64/ld-linux-x86-64.so.2 /lib/x86_64-linux-gnu/libc.so.6; do
	cp -L "$lib" "$root$lib"
done
# The block-backed copy of the fixtures: its page cache can be dropped.
mke2fs -q -t ext2 -b 4096 -d "$tests/fixtures" "$root/disk.img" 16M >/dev/null
(cd "$root" && find . | cpio -o -H newc --quiet | gzip -1) >"$logs/initramfs.cpio.gz"
rm -rf "$root"

smp=${MMAP3_SMP:-2}
cycles=${MMAP3_UNLOAD_CYCLES:-20}
[ "$MMAP3_KERNEL" = debug ] && cycles=${MMAP3_UNLOAD_CYCLES:-200}
accel=tcg
[ "${MMAP3_KVM:-0}" = 1 ] && accel=kvm
boot() {
	log "booting the guest ($accel, $smp CPUs) for $script; logs in $logs"
	set +e
	timeout --foreground $((timeout + 120)) qemu-system-x86_64 -accel "$accel" -m 1G -smp "$smp" \
		-kernel "$bzimage" -initrd "$logs/initramfs.cpio.gz" \
		-append "console=ttyS0 panic=-1 mmap3.run=$script mmap3.timeout=$timeout mmap3.stress=${MMAP3_STRESS_SECONDS:-5} mmap3.kernel=$MMAP3_KERNEL mmap3.cycles=$cycles" \
		-display none -monitor none -no-reboot \
		-serial "file:$logs/console.log" -serial "file:$logs/tests.log" \
		${MMAP3_QEMU_OPTS:-} </dev/null >"$logs/qemu.log" 2>&1
	qemu_rc=$?
	set -e
}
boot
rm -f "$logs/initramfs.cpio.gz"

# Results, one test binary at a time (begin/end markers from the script),
# counted by scripts/tap.awk. A skip fails unless tests/qemu/expected-skips
# (any kernel) or tests/qemu/expected-skips.$MMAP3_KERNEL (this kernel)
# lists it ("binary: test").
expected=$(cat "$MMAP3_ROOT/tests/qemu/expected-skips" \
	"$MMAP3_ROOT/tests/qemu/expected-skips.$MMAP3_KERNEL" 2>/dev/null |
	grep -v '^#' | grep . || true)
result=$(awk -v expected="$expected" -f "$MMAP3_ROOT/scripts/tap.awk" "$logs/tests.log")
read -r passed failed skipped <<<"$result"

# KCSAN reports data races anywhere in the kernel: those whose stacks have
# no frame of the module ([mmap3]) or of the perf core (perf_*) are kept
# apart (listed, not failing the run); a race in our code fails it like
# any other report.
awk -v elsewhere="$logs/kcsan-elsewhere.log" '
	{ sub(/\r$/, "") }
	/^\[[ 0-9.]*\] =+$/ {
		if (!blk) { blk = 1; buf = $0 "\n"; next }
		buf = buf $0 "\n"; blk = 0
		if (buf ~ /BUG: KCSAN:/ && buf !~ /\[mmap3\]| perf_[a-z0-9_]*\+0x/)
			printf "%s", buf > elsewhere
		else
			printf "%s", buf
		next
	}
	blk { buf = buf $0 "\n"; next }
	{ print }
	END { if (blk) printf "%s", buf }' "$logs/console.log" >"$logs/console-ours.log"
if [ -s "$logs/kcsan-elsewhere.log" ]; then
	log "KCSAN: $(grep -c 'BUG: KCSAN' "$logs/kcsan-elsewhere.log") data race(s) outside the perf core and the module, not counted: $logs/kcsan-elsewhere.log"
	grep 'BUG: KCSAN' "$logs/kcsan-elsewhere.log" | sed 's/^/  /' >&2
fi
splats=$(grep -nE 'Oops|BUG:|WARNING:|Kernel panic|KASAN|UBSAN|kmemleak: [0-9]+ new suspected|possible (recursive|circular) locking|inconsistent lock state|suspicious RCU usage|general protection fault|Call Trace:' "$logs/console-ours.log" || true)
splats+=$(grep -n 'unreferenced object' "$logs/tests.log" || true)
if [ -n "$splats" ]; then
	log "the kernel logged errors (full log: $logs/console.log):"
	printf '%s\n' "$splats" | head -20 >&2
	failed=$((failed + 1))
fi
errors=$(sed -n 's/\r$//; s/^mmap3-guest: error: //p' "$logs/tests.log")
if [ -n "$errors" ]; then
	log "the guest reported setup errors:"
	printf '  %s\n' "$errors" >&2
	failed=$((failed + 1))
fi
# Each debug feature the kernel has must have come up: its boot banner, or
# what tests/qemu/init found.
while read -r opt banner; do
	grep -q "^$opt=y" "$kconfig" || continue
	if ! grep -q "$banner" "$logs/console.log" "$logs/tests.log"; then
		log "$opt is configured but did not come up (no \"$banner\" in the logs)"
		failed=$((failed + 1))
	fi
done <<'EOF'
CONFIG_KASAN KernelAddressSanitizer initialized
CONFIG_PROVE_LOCKING Lock dependency validator
CONFIG_PROVE_RCU RCU lockdep checking is enabled
CONFIG_DEBUG_KMEMLEAK kmemleak: Kernel memory leak detector initialized
CONFIG_KCSAN kcsan: enabled early
CONFIG_DEBUG_OBJECTS mmap3-guest: up debug_objects
CONFIG_FAILSLAB mmap3-guest: up failslab
CONFIG_FAIL_FUNCTION mmap3-guest: up fail_function
EOF
cpus=$(sed -n 's/^mmap3-guest: cpus \([0-9]*\).*/\1/p' "$logs/tests.log")
if [ "${cpus:-0}" != "$smp" ]; then
	log "the guest has ${cpus:-no} online CPUs, not the $smp it was started with"
	failed=$((failed + 1))
fi
hang=$(sed -n 's/\r$//; s/^mmap3-guest: hang: //p' "$logs/tests.log")
if [ "$qemu_rc" = 124 ] || [ -n "$hang" ]; then
	log "the guest did not finish within $timeout s (log: $logs/console.log)"
	# What /init's watchdog found: the memory, the tasks that are not
	# kernel threads and any in state D, with their kernel stacks.
	printf '%s\n' "$hang" | awk '
		BEGIN { show = 1 }
		/^task / { show = $3 == "(user)" || $5 == "D" }
		/^task / || /^  / { if (show) print "  " $0; next }
		{ print "  " $0 }' >&2
	[ -n "$hang" ] ||
		log "its watchdog printed nothing: the guest was not running at all (QEMU stopped, or the kernel with interrupts off)"
	failed=$((failed + 1))
elif ! grep -q '^mmap3-guest: done' "$logs/tests.log"; then
	log "the guest stopped before the end of $script (qemu exit $qemu_rc; log: $logs/console.log)"
	tail -5 "$logs/console.log" >&2
	failed=$((failed + 1))
fi
log "kernel log: $logs/console.log; test output: $logs/tests.log"
echo "$passed $failed $skipped"
