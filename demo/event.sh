# SPDX-License-Identifier: GPL-2.0
# The guest script of make demo's second boot: Linux without the series, as
# a distribution ships it, with the module loaded. A program whose build-id
# note sits 2 MiB into the file (farnote.elf), run from the cold disk:
# upstream's perf record --buildid-mmap gets no build-id for it in its
# MMAP2 record; the trace event mmap3:build_id gives it, read with ftrace,
# with perf record -e mmap3:build_id and with the bpftrace one-liner of
# examples/bpf/README.md, next to what readelf -n said on the host.
insmod /tests/mmap3.ko
T=/sys/kernel/tracing
[ -d $T/events ] || mount -t tracefs tracefs $T
export PATH=/tests/perf:$PATH HOME=/tmp/perf-home
mkdir -p "$HOME"
bin=/mnt/farnote.elf
want=$(sed -n 's/^farnote.elf \([0-9a-f]*\) .*/\1/p' fixtures/MANIFEST)
# build_id LINES: the build_id= of the event lines of $bin.
build_id() {
	grep "file=$bin\$" | sed -n 's/.* build_id=\([^ ]*\) .*/\1/p' | head -1
}
cold() {
	sync
	echo 3 >/proc/sys/vm/drop_caches
}

echo "mmap3-test: begin event"
echo "Linux $(uname -r), without the series; the module serves the trace event mmap3:build_id."
echo
echo "\$ echo 1 >$T/events/mmap3/build_id/enable; $bin; cat $T/trace"
cold
echo >$T/trace
echo 1 >$T/events/mmap3/build_id/enable
"$bin"
echo 0 >$T/events/mmap3/build_id/enable
grep "file=$bin\$" $T/trace | sed 's/^ *//'
ftrace=$(build_id <$T/trace)

echo
echo "\$ perf record -e mmap3:build_id -a -- $bin; perf script -F trace:pid,tid,trace"
cold
perf record -q -e mmap3:build_id -a -o /tmp/event.data -- "$bin" 2>/dev/null
perf script -i /tmp/event.data -F trace:pid,tid,trace 2>/dev/null >/tmp/event.script
grep "file=$bin\$" /tmp/event.script | sed 's/^ *//'
perf_event=$(build_id </tmp/event.script)

echo
echo "\$ $(cat bpftrace/oneliner)"
# The wrapper named bpftrace execs bpftrace ($! is its pid); it reports
# from when it has attached: a canary process says when.
PATH=/tests/bpftrace:$PATH sh -c "exec $(cat bpftrace/oneliner)" >/tmp/bt.out 2>/dev/null &
bt=$!
i=0
while [ $i -lt 60 ] && ! grep -q "^pid=$canary " /tmp/bt.out 2>/dev/null; do
	/bin/busybox true &
	canary=$!
	wait $canary
	sleep 1
	i=$((i + 1))
done
cold
"$bin"
sleep 1
kill -INT $bt
wait $bt
grep " file=$bin\$" /tmp/bt.out
bpftrace=$(grep " file=$bin\$" /tmp/bt.out | sed -n 's/.* build_id=\([^ ]*\) .*/\1/p' | sed 's/\\x//g' | head -1)

echo
echo "\$ perf record --buildid-mmap -e task-clock -- $bin; perf script --show-mmap-events (upstream's perf)"
cold
perf-upstream record -q --buildid-mmap -e task-clock -o /tmp/mmap2.data -- "$bin" 2>/dev/null
perf-upstream script -i /tmp/mmap2.data --show-mmap-events 2>/dev/null | grep -F "$bin" |
	grep MMAP | sed 's/^ *//'
mmap2=$(perf-upstream buildid-list -i /tmp/mmap2.data --with-hits 2>/dev/null |
	awk -v b="$bin" '$2 == b { print $1 }')

echo
printf '%-16s %-42s %s\n' "$bin" "readelf -n (host)" "$want"
printf '%-16s %-42s %s\n' "" "ftrace mmap3:build_id" "${ftrace:--}"
printf '%-16s %-42s %s\n' "" "perf -e mmap3:build_id" "${perf_event:--}"
printf '%-16s %-42s %s\n' "" "bpftrace mmap3:build_id" "${bpftrace:--}"
printf '%-16s %-42s %s\n' "" "upstream MMAP2 --buildid-mmap" "${mmap2:--}"
[ "$ftrace" = "$want" ] && [ "$perf_event" = "$want" ] && [ "$bpftrace" = "$want" ]
echo "mmap3-test: end event rc=$?"
