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
# selftest (tests/event/mmap3_event.c); perf reading the event (perf
# record -e mmap3:build_id of cold and warm fixtures, perf script, perf
# evlist) when scripts/guest.sh staged perf; the BPF example
# (examples/bpf/, bpf_tests) against MANIFEST, ftrace's lines and
# /proc/PID/maps; the README's bpftrace one-liner (bpftrace_tests)
# against MANIFEST and ftrace's lines; and perf record --mmap3, which on a
# kernel without the series records MMAP2 and this event, and perf inject
# --convert-mmap3 of its recordings for readers that know neither
# (perf_mmap3_event_tests). Runs in the guest from /tests.
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

# run_progs DIR NAME...: runs each DIR/NAME in turn (run_prog); prints
# " NAME:PID" for each, what the checks below take.
run_progs() {
	dir=$1
	shift
	for f in "$@"; do
		printf ' %s:%s' "$f" "$(run_prog "$dir/$f")"
	done
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

$MMAP3_LOAD
tap $? "$MMAP3_LOAD"
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
cold=$(run_progs /mnt exec20.elf latenote.elf farnote.elf nobid.elf)
after=$(deferred)
# exec reads the first page: the notes past it (latenote, farnote) at least
# are not in the page cache at mapping time.
[ "$((after - before))" -ge 2 ]
tap $? "cold: the lookups of the notes past the first page were deferred to the read ($before -> $after)"
# Warm: the same files, now in the page cache, and the tmpfs copies.
warm=$(run_progs /mnt exec20.elf latenote.elf farnote.elf bid16.elf nobid.elf)
tmp=$(run_progs $FX bid20.elf)
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
$MMAP3_LOAD && echo 1 > $EV/enable
tap $? "$MMAP3_LOAD again, enable again"
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
$MMAP3_LOAD
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
grep -q '^mmap3 ' /proc/modules || $MMAP3_LOAD
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

# The BPF example (examples/bpf/mmap3_build_id), a libbpf consumer of the
# event: its errors without the module and unprivileged; then, with the
# module loaded and the ftrace event enabled beside it, one run over all
# tasks and one with -p PID -n 2, while fixtures run cold from /mnt, warm
# and from tmpfs. Each fixture run has exactly one line for its executable
# mapping, with MANIFEST's build-id and status, and the address range,
# pgoff, build-id, status and time of ftrace's line of the same mapping; a
# running busybox's line has the range and pgoff of its /proc/PID/maps.
BPF=/tests/mmap3_build_id

# wait_attached FILE: waits for the example's "#" line in FILE (it prints
# it once attached), up to 60 s; fails after that.
wait_attached() {
	i=0
	while ! grep -q '^# pid tid' "$1" 2>/dev/null; do
		i=$((i + 1))
		[ $i -le 600 ] || return 1
		usleep 100000
	done
}

# bpf_line PID FILE: the example's lines (/tmp/bpf.out) of PID's mappings
# of FILE.
bpf_line() {
	awk -v p="$1" -v f="$2" '$1 == p && $2 == p && $8 == f' /tmp/bpf.out
}

# bpf_check WHERE NAME PID: the example's line of NAME's executable
# mapping, one, with MANIFEST's build-id and status and the values of
# ftrace's line of that mapping (/tmp/trace).
bpf_check() {
	where=$1 prog=$2 pid=$3
	lines=$(bpf_line "$pid" "$where/$prog")
	count=$(printf '%s\n' "$lines" | grep -c .)
	[ "$count" = 1 ]
	tap $? "bpf $where/$prog: exactly one line for its executable mapping (pid $pid: $count)"
	set -- $(manifest "$prog")
	want_id=$1 want_status=$2
	[ "$want_id" = none ] && want_id=-
	# pid tid start-end pgoff build_id status time file
	set -- $lines
	[ "$5" = "$want_id" ] && [ "$6" = "$want_status" ]
	tap $? "bpf $where/$prog: build_id=$5 status=$6 (MANIFEST: $want_id $want_status)"
	got="$3 $4 $5 $6 $7"
	tr=$(grep " pid=$pid tid=$pid .*file=$where/$prog\$" /tmp/trace | head -1)
	addr=$(field addr "$tr") len=$(field len "$tr") pgoff=$(field pgoff "$tr")
	want=$(printf '%08x-%08x %08x' $((addr)) $((addr + len)) $((pgoff)))
	want="$want $(field build_id "$tr") $(field status "$tr") $(field time "$tr")"
	[ -n "$tr" ] && [ "$got" = "$want" ]
	tap $? "bpf $where/$prog: range, pgoff, build-id, status, time as ftrace's: $got"
	[ "$got" = "$want" ] || echo "# ftrace: $tr"
}

bpf_tests() {
n=0
rc=0
echo "TAP version 13"
if [ ! -x $BPF ]; then
	echo "ok 1 mmap3_build_id # SKIP the example was not staged (scripts/guest.sh)"
	echo "1..1"
	return 0
fi
[ -d $T/events ] || mount -t tracefs tracefs $T
! grep -q '^mmap3 ' /proc/modules || rmmod mmap3

# Without the event: a message that says to load the module, exit 1.
$BPF -n 1 >/tmp/bpf.out 2>/tmp/bpf.err
r=$?
[ "$r" = 1 ] && grep -q 'insmod mmap3.ko' /tmp/bpf.err && [ ! -s /tmp/bpf.out ]
tap $? "without the module: exit $r, $(cat /tmp/bpf.err)"

$MMAP3_LOAD
tap $? "$MMAP3_LOAD"
# Unprivileged (runas drops root and its capabilities): exit 1, why.
/tests/runas 1000 $BPF -n 1 >/tmp/bpf.out 2>/tmp/bpf.err
r=$?
[ "$r" = 1 ] && grep -q 'not permitted' /tmp/bpf.err && [ ! -s /tmp/bpf.out ]
tap $? "unprivileged: exit $r, $(cat /tmp/bpf.err)"

# All tasks, beside ftrace's event.
echo > $T/trace
echo 1 > $EV/enable
$BPF >/tmp/bpf.out 2>/tmp/bpf.err &
all=$!
wait_attached /tmp/bpf.out
tap $? "attached over all tasks (pid $all)"
# -p PID -n 2 on a subshell that execs exec20.elf once the example is
# attached (the pid is known before the exec): its program, its vDSO.
mkfifo /tmp/go
(read -r _ </tmp/go; exec /mnt/exec20.elf) &
fpid=$!
timeout 120 $BPF -p $fpid -n 2 >/tmp/bpf.pid 2>/tmp/bpf.pid.err &
one=$!
wait_attached /tmp/bpf.pid
tap $? "attached with -p $fpid -n 2 (pid $one)"

# Cold, then warm, then tmpfs, as event_tests.
sync
echo 3 > /proc/sys/vm/drop_caches
echo go >/tmp/go
wait $fpid
cold=$(run_progs /mnt latenote.elf farnote.elf nobid.elf)
warm=$(run_progs /mnt exec20.elf latenote.elf bid16.elf dynamic.elf)
tmp=$(run_progs $FX bid20.elf)
# A busybox that runs while /proc/PID/maps is read.
/bin/busybox sleep 30 &
spid=$!
i=0
while [ "$(tr '\0' ' ' </proc/$spid/cmdline)" != "/bin/busybox sleep 30 " ] && [ $i -lt 600 ]; do
	i=$((i + 1))
	usleep 10000
done
maps=$(grep ' r-xp .* /bin/busybox$' /proc/$spid/maps)
# -n 2: the example stops by itself.
wait $one
r=$?
[ "$r" = 0 ]
tap $? "-p $fpid -n 2: exited by itself, rc $r"
kill -INT $all
wait $all
r=$?
[ "$r" = 0 ]
tap $? "over all tasks: exit 0 at SIGINT (rc $r)"
kill $spid
wait $spid
echo 0 > $EV/enable
cat $T/trace > /tmp/trace
[ ! -s /tmp/bpf.err ] && [ ! -s /tmp/bpf.pid.err ]
tap $? "nothing on stderr (no event lost)"
cat /tmp/bpf.err /tmp/bpf.pid.err | sed 's/^/# stderr: /'
grep -v '^#' /tmp/bpf.out | grep -v ' /bin/busybox$' | head -20 | sed 's/^/# /'

bpf_check /mnt exec20.elf $fpid
for r in $cold $warm; do bpf_check /mnt "${r%%:*}" "${r##*:}"; done
for r in $tmp; do bpf_check $FX "${r%%:*}" "${r##*:}"; done

# dynamic.elf: its interpreter's and libc's lines, MANIFEST's build-ids.
pid=$(for r in $warm; do [ "${r%%:*}" = dynamic.elf ] && echo "${r##*:}"; done)
ok=0
for lib in ld-linux-x86-64.so.2 libc.so.6; do
	set -- $(manifest "$lib")
	line=$(awk -v p="$pid" -v l="/$lib" '$1 == p && substr($8, length($8) - length(l) + 1) == l' /tmp/bpf.out | head -1)
	set -- $1 $2 $line
	[ "$7" = "$1" ] && [ "$8" = "$2" ] || ok=1
done
tap $ok "bpf dynamic.elf: the interpreter's and libc's lines with MANIFEST's build-ids"

# busybox: range and pgoff as its /proc/PID/maps says.
set -- $maps
want="$1 $3"
set -- $(bpf_line "$spid" /bin/busybox)
[ -n "$maps" ] && [ "$3 $4" = "$want" ]
tap $? "bpf /bin/busybox (pid $spid): $3 $4 as /proc/$spid/maps: $want"

# -p: only that process, its program then its vDSO.
got=$(grep -v '^#' /tmp/bpf.pid | awk '{ print $1, $2, $8 }' | tr '\n' ' ')
[ "$got" = "$fpid $fpid /mnt/exec20.elf $fpid $fpid [vdso] " ]
tap $? "-p $fpid -n 2: $got"
[ "$(grep -v '^#' /tmp/bpf.out | awk '{ print $1 }' | sort -u | wc -l)" -gt 5 ]
tap $? "over all tasks: lines of many processes"

# The example holds no reference once it is gone.
rmmod mmap3
tap $? "rmmod after the example exited"
echo "1..$n"
return $rc
}

run mmap3_event_perf perf_tests
run mmap3_build_id_bpf bpf_tests

# bpftrace_tests: the bpftrace one-liner of examples/bpf/README.md, as
# written there (/tests/bpftrace/oneliner), with bookworm's bpftrace
# (scripts/guest.sh stages it with its libraries in /tests/bpftrace), while
# fixtures run cold and warm, beside ftrace's event: for each run exactly
# one line for its executable mapping, with MANIFEST's build-id and status
# and ftrace's range, pgoff and time.
BT=/tests/bpftrace

# bt_check WHERE NAME PID: the one-liner's line (/tmp/bt.out) of NAME's
# executable mapping against MANIFEST and ftrace's line (/tmp/trace).
bt_check() {
	where=$1 prog=$2 pid=$3
	lines=$(grep "^pid=$pid tid=$pid .* file=$where/$prog\$" /tmp/bt.out)
	count=$(printf '%s\n' "$lines" | grep -c .)
	[ "$count" = 1 ]
	tap $? "bpftrace $where/$prog: exactly one line for its executable mapping (pid $pid: $count)"
	line=" $lines"
	id=$(field build_id "$line" | sed 's/\\x//g')
	[ -n "$id" ] || id=-
	# status: the number of enum perf_mmap3_build_id_status.
	status=$(field status "$line")
	set -- FOUND NO_FILE NOT_ELF NO_BUILD_ID MALFORMED IO_ERROR SKIPPED
	[ "${status:-0}" -ge 1 ] 2>/dev/null && [ "$status" -le $# ] && eval "status=\${$status}"
	set -- $(manifest "$prog")
	want_id=$1 want_status=$2
	[ "$want_id" = none ] && want_id=-
	[ "$id" = "$want_id" ] && [ "$status" = "$want_status" ]
	tap $? "bpftrace $where/$prog: build_id=$id status=$status (MANIFEST: $want_id $want_status)"
	got="$(field range "$line") $(field pgoff "$line") $(field time "$line")"
	tr=$(grep " pid=$pid tid=$pid .*file=$where/$prog\$" /tmp/trace | head -1)
	addr=$(field addr "$tr") len=$(field len "$tr") pgoff=$(field pgoff "$tr")
	want="$(printf '%x-%x %x' $((addr)) $((addr + len)) $((pgoff))) $(field time "$tr")"
	[ -n "$tr" ] && [ "$got" = "$want" ]
	tap $? "bpftrace $where/$prog: range, pgoff, time as ftrace's: $got"
	[ "$got" = "$want" ] || echo "# ftrace: $tr"
}

# bt_attached: bpftrace prints "Attaching 1 probe..." before it attaches
# (and runs BEGIN before too): waits, up to 60 s, until its output has a
# line of a canary process.
bt_attached() {
	i=0
	while [ $i -lt 120 ] && kill -0 $bt 2>/dev/null; do
		/bin/busybox true &
		cpid=$!
		wait $cpid
		usleep 100000
		grep -q "^pid=$cpid " /tmp/bt.out && return 0
		i=$((i + 1))
		usleep 400000
	done
	return 1
}

bpftrace_tests() {
n=0
rc=0
echo "TAP version 13"
if [ ! -x $BT/bpftrace ] || [ ! -s $BT/oneliner ]; then
	echo "ok 1 bpftrace one-liner # SKIP bpftrace was not staged (scripts/guest.sh)"
	echo "1..1"
	return 0
fi
echo "# $(cat $BT/oneliner)"
[ -d $T/events ] || mount -t tracefs tracefs $T
grep -q '^mmap3 ' /proc/modules || $MMAP3_LOAD
tap $? "the module is loaded"

echo > $T/trace
echo 1 > $EV/enable
# The wrapper named bpftrace execs bpftrace: $! is bpftrace's pid.
PATH=$BT:$PATH sh -c "exec $(cat $BT/oneliner)" >/tmp/bt.out 2>/tmp/bt.err &
bt=$!
bt_attached
tap $? "bpftrace attached (pid $bt): it reports a canary process"
sync
echo 3 > /proc/sys/vm/drop_caches
cold=$(run_progs /mnt exec20.elf latenote.elf farnote.elf nobid.elf)
warm=$(run_progs /mnt exec20.elf bid16.elf)
tmp=$(run_progs $FX bid20.elf)
kill -INT $bt
wait $bt
r=$?
[ "$r" = 0 ]
tap $? "bpftrace: exit 0 at SIGINT (rc $r)"
echo 0 > $EV/enable
cat $T/trace > /tmp/trace
sed 's/^/# stderr: /' /tmp/bt.err
grep '^pid=' /tmp/bt.out | grep -v ' file=/bin/busybox$' | head -8 | sed 's/^/# /'

for r in $cold $warm; do bt_check /mnt "${r%%:*}" "${r##*:}"; done
for r in $tmp; do bt_check $FX "${r%%:*}" "${r##*:}"; done
rmmod mmap3
tap $? "rmmod after bpftrace exited"
echo "1..$n"
return $rc
}

run mmap3_build_id_bpftrace bpftrace_tests

# perf record --mmap3 (issue 39): with the series, MMAP3 records; without
# it, MMAP2 records and this trace event, which perf reads as the MMAP3
# records it stands in for. Either way perf buildid-list --with-status
# gives each fixture MANIFEST's build-id and status, perf script the
# status of its samples, and a file mapped with MAP_FIXED over another
# one at the same address never gets the other's build-id; perf inject
# --convert-mmap3 writes MMAP2 records with those build-ids, which
# upstream's perf and samply's parser read (perf_inject_checks). Needs the
# guest perf (scripts/perf.sh) in /tests/perf, and upstream's perf there
# (MMAP3_KERNEL=upstream scripts/perf.sh) for the converted recordings.
PERF=/tests/perf/perf
UP=/tests/perf/perf-upstream
PD=/tmp/perf-mmap3-event

# perf_bid_lines PATH FILE: buildid-list --with-status's lines of PATH.
perf_bid_lines() {
	awk -v p="$1" '$3 == p' "$2"
}

# mmap_ids PATH SCRIPT: the build-ids of PATH's MMAP2 records in SCRIPT
# (perf script --show-mmap-events), "-" for a record without one; each
# once, space-separated.
mmap_ids() {
	awk -v p="$1" '/PERF_RECORD_MMAP2/ && $NF == p {
		if (match($0, /<[0-9a-f]+>/)) print substr($0, RSTART + 1, RLENGTH - 2); else print "-" }' "$2" |
		sort -u | tr '\n' ' '
}

# samply_ids PATH OUT: the same from the output of samply's parser
# (tests/perf/samply-reader: "mmap2 PID START LEN BUILD_ID|- PATH").
samply_ids() {
	awk -v p="$1" '$1 == "mmap2" && $6 == p { print $5 }' "$2" | sort -u | tr '\n' ' '
}

# perf_check_ids WHAT IDS LIST OUT MIN: each file of LIST (the input's
# buildid-list --with-status) has MMAP2 records in OUT (read with IDS,
# mmap_ids or samply_ids), each with the file's build-id when its status
# is FOUND (MANIFEST's for a fixture, else LIST's) and none otherwise; at
# least MIN files.
perf_check_ids() {
	what=$1 ids=$2 list=$3 out=$4 min=$5
	nr=0
	bad=0
	while read -r id status path; do
		# Kernel DSOs, not mapped files: /proc/kcore, the kernel as perf
		# names it where it reads kcore (Debian's kernel; the test
		# kernels have no PROC_KCORE), and a module perf finds under
		# /lib/modules (the DKMS-installed mmap3.ko of make test-debian).
		case $path in /proc/kcore | /lib/modules/*) continue ;; /*) ;; *) continue ;; esac
		m=$(manifest "$(basename "$path")")
		[ -z "$m" ] || { id=${m% *}; status=${m#* }; }
		want=-
		[ "$status" = FOUND ] && want=$id
		got=$($ids "$path" "$out")
		if [ "$got" != "$want " ]; then
			bad=$((bad + 1))
			echo "# $what: $path: ${got:-no MMAP2 record }(want $want, $status)"
		fi
		nr=$((nr + 1))
	done <"$list"
	[ "$nr" -ge "$min" ] && [ "$bad" = 0 ]
	tap $? "$what: the MMAP2 records of the $nr files have their build-ids (FOUND), the others none ($bad wrong)"
}

# perf_same WHAT A B: files A and B are the same (diff shown if not).
perf_same() {
	cmp -s "$2" "$3"
	tap $? "$1"
	cmp -s "$2" "$3" || diff "$2" "$3" | head -10 | sed 's/^/# /'
}

# perf_inject_checks IN: perf inject --convert-mmap3 of the recording IN
# (the cold one: MMAP2 records and the trace event without the series,
# MMAP3 records with it), to a file and to a pipe. Readers without MMAP3
# or the event, upstream's perf (when scripts/perf.sh built it) and
# samply's parser, see each file's MMAP2 records with its build-id when
# its status is FOUND; the patched perf reads the statuses of the input:
# buildid-list --with-status, the statuses of the samples in files (perf
# script), report --stats' table. -b, -B, --mmap2-buildid-all and
# --buildid-all of IN work too.
perf_inject_checks() {
	in=$1
	$PERF inject --convert-mmap3 -i "$in" -o $PD/conv.data >$PD/conv.err 2>&1
	tap $? "perf inject --convert-mmap3 -o FILE"
	sed 's/^/# /' $PD/conv.err
	$PERF inject --convert-mmap3 -i "$in" -o - >$PD/conv.pipe 2>$PD/convp.err
	tap $? "perf inject --convert-mmap3 -o -"
	sed 's/^/# /' $PD/convp.err

	if [ -x $UP ]; then
		$UP script -i $PD/conv.data --show-mmap-events >$PD/up.script 2>$PD/up.err
		tap $? "upstream's perf script of the output (-o FILE)"
		perf_check_ids "upstream's perf, -o FILE" mmap_ids $PD/list $PD/up.script 9
		$UP script -i - --show-mmap-events <$PD/conv.pipe >$PD/upp.script 2>$PD/upp.err
		tap $? "upstream's perf script of the output (-o -)"
		perf_check_ids "upstream's perf, -o -" mmap_ids $PD/list $PD/upp.script 9
		# What upstream's perf makes of the input's mmap3:build_id
		# samples (the output has none).
		$UP report --stdio -i "$in" --sort dso 2>/dev/null | grep -e '^# Samples' -e '^# Total' |
			sed 's/^/# upstream perf report of the input: /'
	else
		tap 1 "upstream's perf (MMAP3_KERNEL=upstream scripts/perf.sh) is in /tests/perf"
	fi
	/tests/perf/samply-reader $PD/conv.data >$PD/samply.out 2>$PD/samply.err
	tap $? "samply's parser reads the output"
	sed 's/^/# /' $PD/samply.err
	perf_check_ids "samply's parser" samply_ids $PD/list $PD/samply.out 9

	$PERF buildid-list --with-status -i $PD/conv.data >$PD/conv.list 2>$PD/conv.list.err
	perf_same "perf buildid-list --with-status of the output (-o FILE): the input's" $PD/list $PD/conv.list
	# A pipe written from a file has no build-id table (perf inject's,
	# upstream's too): the kernel's (/proc/kcore where perf reads kcore),
	# the module's (/lib/modules/... where perf finds its file) and the
	# vDSO's entries (N/A) are not there; the files' are.
	files='$3 ~ /^\// && $3 != "/proc/kcore" && $3 !~ /^\/lib\/modules\//'
	$PERF buildid-list --with-status -i - <$PD/conv.pipe 2>$PD/convp.list.err |
		awk "$files" >$PD/convp.list
	awk "$files" $PD/list >$PD/files.list
	perf_same "perf buildid-list --with-status of the output (-o -): the input's files" \
		$PD/files.list $PD/convp.list
	$PERF script -i $PD/conv.data -F comm,ip,dso,build_id_status 2>/dev/null | grep '(/' >$PD/conv.script
	grep '(/' $PD/script >$PD/in.script
	[ -s $PD/in.script ]
	perf_same "perf script -F build_id_status of the output: the input's samples in files, the same statuses" \
		$PD/in.script $PD/conv.script
	$PERF report --stats -i $PD/conv.data 2>&1 | sed -n '/per build-id status/,$p' >$PD/conv.stats
	sed -n '/per build-id status/,$p' $PD/stats >$PD/in.stats
	[ -s $PD/in.stats ]
	perf_same "perf report --stats of the output: the input's table of statuses" $PD/in.stats $PD/conv.stats

	bad=0
	for opt in -b -B --mmap2-buildid-all --buildid-all; do
		if ! $PERF inject $opt -i "$in" -o $PD/opt.data >$PD/opt.err 2>&1 ||
		   ! $PERF report -i $PD/opt.data --stdio >/dev/null 2>>$PD/opt.err; then
			bad=1
			echo "# perf inject $opt:"
			sed 's/^/#   /' $PD/opt.err
		fi
	done
	tap $bad "perf inject -b, -B, --mmap2-buildid-all, --buildid-all: exit 0, the output read by perf report"
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
	grep -q '^mmap3 ' /proc/modules || $MMAP3_LOAD
	tap $? "the module is loaded ($MMAP3_LOAD)"
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

	perf_inject_checks $PD/cold.data

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
	# Converted: nobid.elf's MMAP2 record never gets farnote.elf's
	# build-id, farnote.elf's gets its own or none (upstream's perf).
	$PERF inject --convert-mmap3 -i $PD/fixed.data -o $PD/fixed.conv >$PD/fixed.conv.err 2>&1
	tap $? "perf inject --convert-mmap3 of the MAP_FIXED recording"
	if [ -x $UP ]; then
		$UP script -i $PD/fixed.conv --show-mmap-events >$PD/fixed.script 2>/dev/null
		nobid=$(mmap_ids /mnt/nobid.elf $PD/fixed.script)
		farids=$(mmap_ids /mnt/farnote.elf $PD/fixed.script)
		[ "$nobid" = "- " ] && { [ "$farids" = "$far " ] || [ "$farids" = "- " ]; }
		tap $? "MAP_FIXED converted, upstream's perf: nobid.elf: $nobid(none), farnote.elf: $farids($far or none)"
	fi

	# Pipe mode.
	sync
	echo 3 > /proc/sys/vm/drop_caches
	$PERF record --mmap3 -N -e task-clock -o - -- /mnt/latenote.elf 2>$PD/pipe.err |
		tee $PD/pipe.data | $PERF buildid-list --with-status -i - >$PD/pipe.list 2>$PD/pipe.list.err
	sed 's/^/# /' $PD/pipe.err $PD/pipe.list $PD/pipe.list.err
	perf_check_fixture /mnt latenote.elf $PD/pipe.list
	# perf inject --convert-mmap3 of the pipe: to a pipe and to a file.
	$PERF inject --convert-mmap3 -i - -o - <$PD/pipe.data >$PD/conv2.pipe 2>$PD/conv2.err
	tap $? "perf inject --convert-mmap3 -i - -o -"
	$PERF inject --convert-mmap3 -i - -o $PD/conv2.data <$PD/pipe.data >>$PD/conv2.err 2>&1
	tap $? "perf inject --convert-mmap3 -i - -o FILE"
	sed 's/^/# /' $PD/conv2.err
	$PERF buildid-list --with-status -i - <$PD/conv2.pipe >$PD/conv2p.list 2>/dev/null
	perf_same "perf buildid-list --with-status of the output (-i - -o -): the input's" $PD/pipe.list $PD/conv2p.list
	$PERF buildid-list --with-status -i $PD/conv2.data >$PD/conv2.list 2>/dev/null
	perf_same "perf buildid-list --with-status of the output (-i - -o FILE): the input's" $PD/pipe.list $PD/conv2.list
	if [ -x $UP ]; then
		$UP script -i - --show-mmap-events <$PD/conv2.pipe >$PD/up2p.script 2>/dev/null
		perf_check_ids "upstream's perf, -i - -o -" mmap_ids $PD/pipe.list $PD/up2p.script 1
	fi
	/tests/perf/samply-reader $PD/conv2.data >$PD/samply2.out 2>&1
	perf_check_ids "samply's parser, -i - -o FILE" samply_ids $PD/pipe.list $PD/samply2.out 1

	rmmod mmap3
	echo "1..$n"
	return $rc
}

[ -x $PERF ] && run perf_mmap3_event perf_mmap3_event_tests
