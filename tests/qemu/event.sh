# SPDX-License-Identifier: GPL-2.0
# The guest script of the trace event mmap3:build_id (DESIGN.md, "The
# build-id trace event"), for any kernel, with or without the series:
# tracefs read with busybox alone. Loads the module, checks the event's
# format file field by field, that no probe is attached while the event is
# disabled, then runs the fixtures from the cold ext2 disk (after
# drop_caches) and warm, and compares each event with the fixtures'
# MANIFEST: the build-id and status, exactly one event for the program's
# executable mapping, the task's events in mapping order (the program's,
# then the vDSO's); last, rmmod with the event enabled. Then the event's
# selftest (tests/event/mmap3_event.c), and perf reading the event (perf
# record -e mmap3:build_id of cold and warm fixtures, perf script, perf
# evlist) when scripts/guest.sh staged perf. Runs in the guest from /tests.
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

# perf reads the event: perf record -e mmap3:build_id, system-wide, of the
# fixtures run from the cold disk (after drop_caches) and from tmpfs
# ($FX), then perf script and perf evlist of the recording; each run's
# executable mapping has exactly one event, with MANIFEST's build-id and
# status, the sample's pid and tid, the printed line's tokens in
# DESIGN.md's order, and the fields by DESIGN.md's names. With the perf of
# scripts/perf.sh that scripts/guest.sh stages in /tests/perf (libtraceevent
# reads the event's format): skipped when there is none, a skip that fails
# the run (tests/qemu/run.sh; make test and make test-event build perf).
PERF_DIR=/tests/perf
gperf() { HOME=/tmp/perf-home "$PERF_DIR/perf" "$@"; }
perf_tests() {
echo "TAP version 13"
n=0 rc=0
if [ ! -x $PERF_DIR/perf ]; then
	echo "ok 1 perf record -e mmap3:build_id # SKIP perf is not staged (scripts/perf.sh)"
	echo "1..1"
	return 0
fi
mkdir -p /tmp/perf-home
[ -d $T/events ] || mount -t tracefs tracefs $T
grep -q '^mmap3 ' /proc/modules || insmod /tests/mmap3.ko
tap $? "the module is loaded"

# The runs: "<where> <name> <pid>" on the workload's stdout.
cat >/tmp/perf-workload.sh <<'WORKLOAD'
for f in exec20.elf latenote.elf farnote.elf nobid.elf; do
	/mnt/$f &
	echo "/mnt $f $!"
	wait
done
for f in bid20.elf exec20.elf; do
	/tests/fixtures/$f &
	echo "/tests/fixtures $f $!"
	wait
done
WORKLOAD
data=/tmp/mmap3-event.data
sync
echo 3 > /proc/sys/vm/drop_caches
before=$(sed -n 's/^deferred //p' /sys/kernel/debug/mmap3/stats)
gperf record -e mmap3:build_id -a -N -o $data -- sh /tmp/perf-workload.sh \
	>/tmp/perf-runs 2>/tmp/perf-record.err
tap $? "perf record -e mmap3:build_id -a of $(wc -l < /tmp/perf-runs) fixture runs"
after=$(sed -n 's/^deferred //p' /sys/kernel/debug/mmap3/stats)
sed 's/^/# /' /tmp/perf-record.err
# The notes past the first page (latenote, farnote) were not in the page
# cache at mapping time: their events come from the deferred read.
[ "$((after - before))" -ge 2 ]
tap $? "cold: lookups deferred to the read during the recording ($before -> $after)"

# A system-wide perf record adds a dummy event for the side-band records.
gperf evlist -i $data 2>&1 | grep -v '^#' >/tmp/perf-evlist
grep -qx mmap3:build_id /tmp/perf-evlist
tap $? "perf evlist: $(tr '\n' ' ' </tmp/perf-evlist)"
want=pid,tid,addr,len,pgoff,maj,min,ino,ino_generation,prot,flags,build_id_size,build_id_status,build_id,time,filename
got=$(gperf evlist -i $data --trace-fields 2>&1 | sed -n 's/.*trace_fields: *//p' | tr -d ' ')
[ "$got" = "$want" ]
tap $? "perf evlist --trace-fields: the fields of DESIGN.md by name"
[ "$got" = "$want" ] || { echo "# want: $want"; echo "# got:  $got"; }

gperf script -i $data -F trace:pid,tid,trace >/tmp/perf-script 2>/tmp/perf-script.err
tap $? "perf script -F trace:pid,tid,trace: $(wc -l < /tmp/perf-script) events"
sed 's/^/# /' /tmp/perf-script.err
head -12 /tmp/perf-script | sed 's/^/# /'
# The tokens of the printed line, in DESIGN.md's order, on every line.
tokens="pid tid addr len pgoff dev ino gen prot flags status build_id time file"
bad=$(awk -v want="$tokens" '{
	t = ""
	for (i = 2; i <= NF; i++) { split($i, a, "="); t = t (t == "" ? "" : " ") a[1] }
	if (t != want) print
}' /tmp/perf-script | head -3)
[ -s /tmp/perf-script ] && [ -z "$bad" ]
tap $? "perf script: the printed line's tokens in DESIGN.md's order"
[ -z "$bad" ] || printf '# %s\n' "$bad"

while read -r where prog pid; do
	lines=$(grep " pid=$pid tid=$pid " /tmp/perf-script | grep " file=$where/$prog\$")
	count=$(printf '%s\n' "$lines" | grep -c .)
	[ "$count" = 1 ]
	tap $? "perf: $where/$prog: exactly one event for its executable mapping (pid $pid: $count)"
	line=$(printf '%s\n' "$lines" | head -1)
	set -- $(manifest "$prog")
	want_id=$1 want_status=$2
	[ "$want_id" = none ] && want_id=-
	got_id=$(field build_id "$line")
	got_status=$(field status "$line")
	sample=$(printf '%s\n' "$line" | awk '{ print $1 }')
	[ "$got_id" = "$want_id" ] && [ "$got_status" = "$want_status" ] && [ "$sample" = "$pid/$pid" ]
	tap $? "perf: $where/$prog: build_id=$got_id status=$got_status, sample $sample (MANIFEST: $want_id $want_status)"
done </tmp/perf-runs
[ "$rc" = 0 ] || sed 's/^/# /' /tmp/perf-script

rmmod mmap3
tap $? "rmmod mmap3"
echo "1..$n"
return $rc
}

run mmap3_event_perf perf_tests
