# SPDX-License-Identifier: GPL-2.0
# The guest script of the trace event mmap3:build_id (DESIGN.md, "The
# build-id trace event"), for any kernel, with or without the series:
# tracefs read with busybox alone. Loads the module, checks the event's
# format file field by field, that no probe is attached while the event is
# disabled, then runs the fixtures from the cold ext2 disk (after
# drop_caches) and warm, and compares each event with the fixtures'
# MANIFEST: the build-id and status, exactly one event for the program's
# executable mapping, the task's events in mapping order (the program's,
# then the vDSO's); last, rmmod with the event enabled. Runs in the guest
# from /tests.
. ./guest-lib.sh

T=/sys/kernel/tracing
EV=$T/events/mmap3/build_id
FX=/tests/fixtures

n=0
rc=0
tap() {
	n=$((n + 1))
	if [ "$1" = 0 ]; then
		echo "ok $n $2"
	else
		echo "not ok $n $2"
		rc=1
	fi
}

# probes: the probes attached to perf_event_mmap() (fprobe: the function
# tracer's list; kprobe: the kprobes list).
probes() {
	{
		cat $T/enabled_functions 2>/dev/null
		cat /sys/kernel/debug/kprobes/list 2>/dev/null
	} | grep -c 'perf_event_mmap'
}

# manifest NAME: "<build-id or none> <status>" of a fixture.
manifest() {
	awk -v f="$1" '$1 == f { print $2, $3 }' $FX/MANIFEST
}

# field NAME LINE: the value of NAME= in an event line.
field() {
	printf '%s\n' "$2" | sed -n "s/.* $1=\([^ ]*\).*/\1/p"
}

# run_prog PATH: runs PATH in the background (so $! is its pid) and waits;
# prints the pid.
run_prog() {
	"$1" &
	pid=$!
	wait $pid
	echo $pid
}

# check_run WHERE NAME PID: the events of PID (from $T/trace, saved in
# /tmp/trace) are its program's executable mapping, then the vDSO's, in
# that order and time; the program's has MANIFEST's build-id and status.
check_run() {
	# Not "name": guest-lib.sh's run() keeps the section's name in it.
	where=$1 prog=$2 pid=$3
	lines=$(grep "mmap3:build_id\|build_id:" /tmp/trace | grep " pid=$pid tid=$pid ")
	count=$(printf '%s\n' "$lines" | grep -c "file=$where/$prog\$")
	[ "$count" = 1 ]
	tap $? "$where/$prog: exactly one event for its executable mapping (pid $pid: $count)"
	line=$(printf '%s\n' "$lines" | grep "file=$where/$prog\$" | head -1)
	set -- $(manifest "$prog")
	want_id=$1 want_status=$2
	[ "$want_id" = none ] && want_id=-
	got_id=$(field build_id "$line")
	got_status=$(field status "$line")
	[ "$got_id" = "$want_id" ] && [ "$got_status" = "$want_status" ]
	tap $? "$where/$prog: build_id=$got_id status=$got_status (MANIFEST: $want_id $want_status)"
	[ "$rc" = 0 ] || printf '# %s\n' "$lines"
	# Mapping order: the program, then the vDSO (exec maps it last), in
	# the trace as in time.
	order=$(printf '%s\n' "$lines" | sed -n 's/.* time=\([0-9]*\) file=\(.*\)$/\1 \2/p')
	first=$(printf '%s\n' "$order" | head -1 | cut -d' ' -f2)
	sorted=$(printf '%s\n' "$order" | sort -n -k1,1 | cut -d' ' -f2 | tr '\n' ' ')
	inorder=$(printf '%s\n' "$order" | cut -d' ' -f2 | tr '\n' ' ')
	vdso=$(printf '%s\n' "$order" | grep -c ' \[vdso\]$')
	[ "$first" = "$where/$prog" ] && [ "$vdso" = 1 ] && [ "$sorted" = "$inorder" ]
	tap $? "$where/$prog: the task's events in mapping order: $inorder"
}

event_tests() {
echo "TAP version 13"
[ -d $T/events ] || mount -t tracefs tracefs $T

insmod /tests/mmap3.ko
tap $? "insmod mmap3.ko"
dmesg | grep 'mmap3' | tail -3 | sed 's/^/# /'
[ -d $EV ]
tap $? "the event exists: $EV"

# The format file, field by field, in DESIGN.md's order.
want="u32 pid;u32 tid;u64 addr;u64 len;u64 pgoff;u32 maj;u32 min;u64 ino;u64 ino_generation;u32 prot;u32 flags;u8 build_id_size;u8 build_id_status;u8 build_id[20];u64 time;__data_loc char[] filename;"
got=$(sed -n '/^$/,$p' $EV/format | sed -n 's/^[[:space:]]*field:\([^;]*;\).*/\1/p' | tr -d '\n')
[ "$got" = "$want" ]
tap $? "format: the fields, names and types of DESIGN.md"
[ "$got" = "$want" ] || { echo "# want: $want"; echo "# got:  $got"; }
grep -q '^print fmt: "pid=%u tid=%u addr=0x%llx len=0x%llx pgoff=0x%llx dev=%u:%u ino=%llu gen=%llu prot=0x%x flags=0x%x status=%s build_id=%s time=%llu file=%s"' $EV/format
tap $? "format: the printed line's tokens, in order"

[ "$(probes)" = 0 ]
tap $? "no probe on perf_event_mmap() while the event is disabled"

echo > $T/trace
echo 1 > $EV/enable
tap $? "enable the event"
[ "$(probes)" -ge 1 ]
tap $? "a probe on perf_event_mmap() while it is enabled"

# Cold: the page cache dropped, the programs run from the ext2 disk.
sync
echo 3 > /proc/sys/vm/drop_caches
deferred() { sed -n 's/^deferred //p' /sys/kernel/debug/mmap3/stats; }
before=$(deferred)
cold=""
for f in exec20.elf latenote.elf farnote.elf nobid.elf; do
	cold="$cold $f:$(run_prog /mnt/$f)"
done
after=$(deferred)
# exec reads the first page: the notes past it (latenote, farnote) at least
# are not in the page cache at mapping time.
[ "$((after - before))" -ge 2 ]
tap $? "cold: the lookups of the notes past the first page were deferred to the read ($before -> $after)"
# Warm: the same files, now in the page cache, and the tmpfs copies.
warm=""
for f in exec20.elf latenote.elf farnote.elf bid16.elf nobid.elf; do
	warm="$warm $f:$(run_prog /mnt/$f)"
done
tmp=""
for f in bid20.elf; do
	tmp="$tmp $f:$(run_prog $FX/$f)"
done
echo 0 > $EV/enable
cat $T/trace > /tmp/trace
sed -n '/build_id/p' /tmp/trace | head -20 | sed 's/^/# /'

for r in $cold; do check_run /mnt "${r%%:*}" "${r##*:}"; done
for r in $warm; do check_run /mnt "${r%%:*}" "${r##*:}"; done
for r in $tmp; do check_run $FX "${r%%:*}" "${r##*:}"; done

[ "$(probes)" = 0 ]
tap $? "no probe on perf_event_mmap() once the event is disabled again"

# Events of every task: a dynamic program maps its interpreter and libc.
echo > $T/trace
echo 1 > $EV/enable
pid=$(run_prog /mnt/dynamic.elf)
echo 0 > $EV/enable
lines=$(grep " pid=$pid tid=$pid " $T/trace)
ok=0
for lib in ld-linux-x86-64.so.2 libc.so.6; do
	line=$(printf '%s\n' "$lines" | grep "/$lib\$" | head -1)
	set -- $(manifest "$lib")
	[ "$(field build_id "$line")" = "$1" ] && [ "$(field status "$line")" = "$2" ] || ok=1
done
[ "$(printf '%s\n' "$lines" | grep -c "file=/mnt/dynamic.elf\$")" = 1 ] || ok=1
tap $ok "dynamic.elf: its own, the interpreter's and libc's events with MANIFEST's build-ids"
[ "$ok" = 0 ] || printf '# %s\n' "$lines"

# rmmod while the event is enabled, with a program running meanwhile.
echo 1 > $EV/enable
/mnt/exec20.elf &
rmmod mmap3
tap $? "rmmod with the event enabled"
wait
[ ! -d $T/events/mmap3 ] && [ "$(probes)" = 0 ]
tap $? "the event and its probe are gone after rmmod"
insmod /tests/mmap3.ko && echo 1 > $EV/enable
tap $? "insmod again, enable again"
echo 3 > /proc/sys/vm/drop_caches
echo > $T/trace
pid=$(run_prog /mnt/bid20.elf)
line=$(grep " pid=$pid tid=$pid .*file=/mnt/bid20.elf\$" $T/trace)
set -- $(manifest bid20.elf)
[ "$(field build_id "$line")" = "$1" ]
tap $? "cold bid20.elf after the reload: build_id=$(field build_id "$line")"
rmmod mmap3
tap $? "rmmod with the event enabled, again"
echo "1..$n"
return $rc
}

run mmap3_event event_tests
# The event's selftest (tests/event/mmap3_event.c): against MMAP2, two
# threads and MAP_FIXED, an exit during a deferred read.
insmod /tests/mmap3.ko
MMAP3_FIXTURES=/tests/fixtures run mmap3_event_selftest /tests/mmap3_event
rmmod mmap3

# perf record --mmap3 (issue 39): with the series, MMAP3 records; without
# it, MMAP2 records and this trace event, which perf reads as the MMAP3
# records it stands in for. Either way perf buildid-list --with-status
# gives each fixture MANIFEST's build-id and status, perf script the
# status of its samples, and a file mapped with MAP_FIXED over another
# one at the same address never gets the other's build-id. Needs the
# guest perf (scripts/perf.sh) in /tests/perf.
PERF=/tests/perf/perf
PD=/tmp/perf-mmap3-event

# perf_bid_lines PATH FILE: buildid-list --with-status's lines of PATH.
perf_bid_lines() {
	awk -v p="$1" '$3 == p' "$2"
}

# perf_check_fixture WHERE NAME LIST: NAME's lines in LIST, the output of
# buildid-list --with-status, say MANIFEST's build-id and status, once.
perf_check_fixture() {
	lines=$(perf_bid_lines "$1/$2" "$3")
	set -- "$1" "$2" "$3" $(manifest "$2")
	want_id=$4 want_status=$5
	[ "$want_id" = none ] && want_id=-
	[ "$(printf '%s\n' "$lines" | grep -c .)" = 1 ] &&
		[ "$(printf '%s\n' "$lines" | awk '{ print $1, $2 }')" = "$want_id $want_status" ]
	tap $? "perf buildid-list --with-status: $1/$2: $(echo $lines) (MANIFEST: $want_id $want_status)"
}

perf_mmap3_event_tests() {
	n=0
	rc=0
	echo "TAP version 13"
	export HOME=/tmp
	rm -rf $PD && mkdir -p $PD
	grep -q '^mmap3 ' /proc/modules || insmod /tests/mmap3.ko
	tap $? "insmod mmap3.ko"
	kernel=$(cmdline kernel)

	# Cold: the programs from the ext2 disk after drop_caches (their
	# notes past the first page are read after the mapping), one from
	# tmpfs, and a dynamic one (its interpreter and libc).
	sync
	echo 3 > /proc/sys/vm/drop_caches
	$PERF record --mmap3 -N -e task-clock -o $PD/cold.data -- sh -c \
		'for f in exec20.elf latenote.elf farnote.elf nobid.elf bid16.elf dynamic.elf; do /mnt/$f; done; /tests/fixtures/bid20.elf' \
		>$PD/record.out 2>&1
	tap $? "perf record --mmap3 (kernel: $kernel)"
	sed 's/^/# /' $PD/record.out
	fallback=$(grep -c 'recording MMAP2 events and the mmap3:build_id trace event instead' $PD/record.out)
	if [ "$kernel" = upstream ]; then
		[ "$fallback" = 1 ]
		tap $? "without the series: one line says it records MMAP2 and the trace event ($fallback)"
	else
		[ "$fallback" = 0 ] && $PERF evlist -v -i $PD/cold.data 2>/dev/null | grep -q 'mmap3: 1'
		tap $? "with the series: MMAP3 records (attr.mmap3), no fallback"
	fi

	$PERF buildid-list --with-status -i $PD/cold.data >$PD/list 2>$PD/list.err
	tap $? "perf buildid-list --with-status"
	sed 's/^/# /' $PD/list
	for f in exec20.elf latenote.elf farnote.elf nobid.elf bid16.elf dynamic.elf; do
		perf_check_fixture /mnt $f $PD/list
	done
	perf_check_fixture $FX bid20.elf $PD/list
	ok=0
	for lib in ld-linux-x86-64.so.2 libc.so.6; do
		set -- $(manifest "$lib")
		line=$(grep "/$lib\$" $PD/list)
		[ "$(printf '%s\n' "$line" | awk '{ print $1, $2 }')" = "$1 $2" ] || ok=1
	done
	tap $ok "perf buildid-list --with-status: dynamic.elf's interpreter and libc have MANIFEST's build-ids"

	# The samples in the fixtures: each with its file's status.
	$PERF script -i $PD/cold.data -F comm,ip,dso,build_id_status >$PD/script 2>$PD/script.err
	tap $? "perf script -F comm,ip,dso,build_id_status"
	nr=0
	ok=0
	for f in exec20.elf latenote.elf farnote.elf nobid.elf bid16.elf dynamic.elf; do
		set -- $(manifest "$f")
		all=$(grep -c "(/mnt/$f)" $PD/script)
		good=$(grep "(/mnt/$f)" $PD/script | grep -c " $2\$")
		echo "# /mnt/$f: $all samples, $good $2"
		nr=$((nr + all))
		[ "$all" = "$good" ] || ok=1
	done
	[ "$nr" -gt 0 ] && [ "$ok" = 0 ]
	tap $? "perf script: the $nr samples in the fixtures have their files' statuses"
	[ "$ok" = 0 ] || head -20 $PD/script | sed 's/^/# /'

	$PERF report --stats -i $PD/cold.data >$PD/stats 2>&1
	grep -q 'Samples and DSOs per build-id status' $PD/stats && grep -q '^  FOUND ' $PD/stats
	tap $? "perf report --stats: the samples and DSOs per build-id status"
	sed -n '/per build-id status/,$p' $PD/stats | sed 's/^/# /'

	# perf report: no entry for the trace event, the fixtures resolved.
	$PERF report --stdio -i $PD/cold.data --sort dso >$PD/report 2>&1
	! grep -q "of event 'mmap3:build_id'" $PD/report && grep -q 'exec20.elf' $PD/report
	tap $? "perf report: the fixtures' samples, no entry for mmap3:build_id"

	# MAP_FIXED: farnote.elf (cold: its event comes from the read) at an
	# address, then nobid.elf (warm) over it by another thread.
	sync
	echo 3 > /proc/sys/vm/drop_caches
	cat /mnt/nobid.elf >/dev/null
	$PERF record --mmap3 -N -e task-clock -o $PD/fixed.data -- \
		/tests/perf/mapfixed /mnt/farnote.elf /mnt/nobid.elf >$PD/fixed.out 2>&1
	tap $? "perf record --mmap3 of two files mapped at one address"
	sed 's/^/# /' $PD/fixed.out
	$PERF buildid-list --with-status -i $PD/fixed.data >$PD/fixed.list 2>&1
	sed 's/^/# /' $PD/fixed.list
	set -- $(manifest farnote.elf)
	far=$1
	lines=$(perf_bid_lines /mnt/nobid.elf $PD/fixed.list)
	[ "$(printf '%s\n' "$lines" | awk '{ print $1, $2 }')" = "- NO_BUILD_ID" ] &&
		! grep -q "^$far .*/mnt/nobid.elf\$" $PD/fixed.list
	tap $? "MAP_FIXED: nobid.elf has its own status, not farnote.elf's build-id"
	lines=$(perf_bid_lines /mnt/farnote.elf $PD/fixed.list)
	[ -z "$lines" ] || [ "$(printf '%s\n' "$lines" | awk '{ print $1, $2 }')" = "$far FOUND" ]
	tap $? "MAP_FIXED: farnote.elf has its build-id or none: ${lines:-none}"

	# Pipe mode.
	sync
	echo 3 > /proc/sys/vm/drop_caches
	$PERF record --mmap3 -N -e task-clock -o - -- /mnt/latenote.elf 2>$PD/pipe.err |
		$PERF buildid-list --with-status -i - >$PD/pipe.list 2>&1
	sed 's/^/# /' $PD/pipe.err $PD/pipe.list
	perf_check_fixture /mnt latenote.elf $PD/pipe.list

	rmmod mmap3
	echo "1..$n"
	return $rc
}

[ -x $PERF ] && run perf_mmap3_event perf_mmap3_event_tests
