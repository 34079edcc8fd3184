# SPDX-License-Identifier: GPL-2.0
# The guest script of scripts/profile.sh: one mmap3_bench run per entry of
# profile.conf's RUNS ("N:CFG@ext2" maps the ext2 disk's bid20.elf,
# "N:CFG@tmpfs" a copy on tmpfs), each followed by the module's symbols as
# that run loaded it, for tests/bench/trace.py on the host, which
# single-steps one mapping of each run through QEMU's gdbstub.
. ./profile.conf
echo "mmap3-test: begin profile"
cp /mnt/bid20.elf /tmp/bid20.elf
# The configuration "event" opens the trace event mmap3:build_id.
[ -d /sys/kernel/tracing/events ] || mount -t tracefs tracefs /sys/kernel/tracing
# Once before the host attaches: the allocators' and page cache's state
# of a first run is not profiled.
./mmap3_bench map /mnt/bid20.elf warm "$ITERS" 1 mmap2bid >/dev/null
sed 's/^/ksym /' /proc/kallsyms
echo PROF-READY
# The host attaches in this time (the guest stops while it does).
sleep 5
fail=0
for run in $RUNS; do
	cfg=${run#*:}
	cfg=${cfg%@*}
	file=/mnt/bid20.elf
	[ "${run#*@}" = tmpfs ] && file=/tmp/bid20.elf
	./mmap3_bench map $file warm "$ITERS" 1 "$cfg" || fail=1
	echo "PROF-SYMS $run"
	grep '\[mmap3\]' /proc/kallsyms | sed 's/^/ksym /'
done
echo PROF-DONE
echo "mmap3-test: end profile rc=$fail"
