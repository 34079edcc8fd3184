#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# perf inject --convert-mmap3 on the host, of recordings of MMAP2 records
# and the trace event mmap3:build_id (what perf record --mmap3 writes on a
# kernel without MMAP3, with the mmap3 module loaded):
#
#   tests/perf/event-convert.sh
#
# Three programs run under perf record --no-buildid-mmap -e task-clock -e
# sched:sched_process_exec on the host (tests/perf/spin.c as $tmp/alpha
# and $tmp/beta, and as $tmp/nobid linked without a build-id), with the
# shell, its interpreter and libc; tests/perf/mmap3-event-data.py makes of
# the tracepoint mmap3:build_id, with one event per executable mapping:
#  - warm: each event before its MMAP2 record, as the module emits it when
#    the file is in the page cache;
#  - cold: each event after its MMAP2 record and the task's next ones (the
#    program's, the vDSO's), as after the read on the way back to user
#    space; beta's events IO_ERROR;
#  - mismatch: cold, with alpha's events for another inode and beta's for
#    another thread: perf gives their mappings no build-id nor status in
#    the input, and their MMAP2 records must get none.
# For each, the patched perf built with ASan converts it to a file, to a
# pipe, and from a pipe (the same recording in pipe mode, made by
# mmap3-event-data.py --pipe) to a pipe and a file:
#  - upstream's perf (MMAP3_KERNEL=upstream scripts/perf.sh) reads each
#    output, and every MMAP2 record of a file carries the build-id that
#    the patched perf gives the file in the input when its status is
#    FOUND (alpha's and beta's as readelf -n gives them), none otherwise;
#  - the patched perf reads each output as it reads the input: perf
#    buildid-list --with-status, the statuses of the samples in files
#    (perf script -F build_id_status), perf report --stats' table; the
#    event's samples are gone;
#  - perf inject without --convert-mmap3 to a pipe keeps the event, with
#    the format of the file (not this host's tracepoint of the same ID);
#  - perf inject -b, -B, --mmap2-buildid-all and --buildid-all of the
#    input, file and pipe, exit 0, and ASan reports nothing anywhere.
#
# Prints TAP; exits 1 when a check fails, 4 (skip) when this host cannot
# record (perf_event_paranoid, no tracefs).
. "$(dirname "$0")/../../scripts/lib.sh"

. "$MMAP3_ROOT/tests/perf/tap.sh"
perfs_setup event-convert
gen=$MMAP3_ROOT/tests/perf/mmap3-event-data.py
# ok0 NAME: exit 0 and sane.
ok0() { [ "$(rc "$1")" = 0 ] && sane "$1"; }
# runpipe NAME CMD...: as run, but the output (a pipe's stream) in
# $tmp/NAME.pipe, stderr in $tmp/NAME.out.
runpipe() {
	local name=$1
	shift
	set +e
	"$@" >"$tmp/$name.pipe" 2>"$tmp/$name.out"
	echo $? >"$tmp/$name.rc"
	set -e
}

echo "TAP version 13"
for fn in alpha beta; do
	gcc -O1 -static -DSPIN_FN="$fn" -o "$tmp/$fn" "$MMAP3_ROOT/tests/perf/spin.c"
done
gcc -O1 -static -DSPIN_FN=nobid -Wl,--build-id=none -o "$tmp/nobid" "$MMAP3_ROOT/tests/perf/spin.c"
bid_alpha=$(readelf -n "$tmp/alpha" | sed -n 's/.*Build ID: *//p')
bid_beta=$(readelf -n "$tmp/beta" | sed -n 's/.*Build ID: *//p')
# As host_record: on one CPU, so that the records come in the order they
# were made.
cpu=$(taskset -cp $$ | sed 's/.*: *//; s/[-,].*//')
if ! taskset -c "$cpu" "$perf" record --no-buildid-mmap --no-buildid -N -e task-clock \
	-e sched:sched_process_exec -o "$tmp/mmap2.data" -- \
	sh -c "$tmp/alpha 0.2; $tmp/nobid 0.2; $tmp/beta 0.2" >"$tmp/record.out" 2>&1; then
	sed 's/^/# /' "$tmp/record.out" | head -5
	echo "1..0 # SKIP cannot record a tracepoint on this host (perf_event_paranoid=$(cat /proc/sys/kernel/perf_event_paranoid))"
	exit 4
fi

# files LIST: the lines of files (not [kernel.kallsyms], ...) of a
# buildid-list --with-status output.
files() { awk '$3 ~ /^\//' "$1"; }
# ids PATH SCRIPT: the build-ids of PATH's MMAP2 records in SCRIPT (perf
# script --show-mmap-events), "-" for one without; each once.
ids() {
	awk -v p="$1" '/PERF_RECORD_MMAP2/ && $NF == p {
		if (match($0, /<[0-9a-f]+>/)) print substr($0, RSTART + 1, RLENGTH - 2); else print "-" }' "$2" |
		sort -u | tr '\n' ' '
}
# check_ids NAME: every file of $tmp/$v.list (the input's buildid-list
# --with-status) and the three programs have in upstream's perf script of
# output NAME ($tmp/NAME.out) their build-id when FOUND there, else none
# (a program without a build-id or status is not listed); alpha's and
# beta's are readelf's.
check_ids() {
	local id status path want got bad=0 nr=0
	while read -r id status path; do
		want=-
		[ "$status" = FOUND ] && want=$id
		case $path in
		"$tmp/alpha") [ "$want" = - ] || [ "$want" = "$bid_alpha" ] || bad=1 ;;
		"$tmp/beta") [ "$want" = - ] || [ "$want" = "$bid_beta" ] || bad=1 ;;
		esac
		got=$(ids "$path" "$tmp/$1.out")
		if [ "$got" != "$want " ]; then
			echo "#   $path: ${got:-no MMAP2 record }(want $want, $status)"
			bad=1
		fi
		nr=$((nr + 1))
	done < <(files "$tmp/$v.list"
		 for f in alpha nobid beta; do
			grep -q " $tmp/$f\$" "$tmp/$v.list" || echo "- - $tmp/$f"
		 done)
	[ "$bad" = 0 ] && [ "$nr" -ge 6 ]
}
# same_as_input NAME FILE|-: the patched perf reads FILE (or the pipe
# $tmp/NAME.pipe) as the input: the files' buildid-list --with-status, the
# statuses of the samples in files, for a file report --stats' table (perf
# report --stats of a pipe with a tracepoint stops at its tracing data, with
# or without this series); no event sample.
same_as_input() {
	local name=$1 f=$2 in=()
	[ "$f" = - ] && in=(-i -) || in=(-i "$f")
	capture "$name-list" "$asan" buildid-list --with-status "${in[@]}" <"${tmp}/$name.pipe"
	capture "$name-script" "$asan" script "${in[@]}" -F event,comm,ip,dso,build_id_status \
		<"${tmp}/$name.pipe"
	if [ "$f" = - ]; then
		: >"$tmp/$name-stats.out"
		echo 0 >"$tmp/$name-stats.rc"
	else
		capture "$name-stats" "$asan" report --stats "${in[@]}"
	fi
	sane "$name-list" && sane "$name-script" && sane "$name-stats" &&
		cmp -s <(files "$tmp/$v.list") <(files "$tmp/$name-list.out") &&
		cmp -s <(grep '(/' "$tmp/$v-script.out" | grep -v 'mmap3:build_id:') \
			<(grep '(/' "$tmp/$name-script.out") &&
		! grep -q 'mmap3:build_id:' "$tmp/$name-script.out" &&
		{ [ "$f" = - ] || cmp -s <(sed -n '/per build-id status/,$p' "$tmp/$v-stats.out") \
			<(sed -n '/per build-id status/,$p' "$tmp/$name-stats.out"); } ||
		{ diff <(files "$tmp/$v.list") <(files "$tmp/$name-list.out") | head -6 | sed 's/^/#   /'; false; }
}

for v in warm cold mismatch; do
	case $v in
	warm) opts=(--order warm) ;;
	cold) opts=(--order cold --status "IO_ERROR:$tmp/beta") ;;
	mismatch) opts=(--order cold --mangle "ino:$tmp/alpha" --mangle "tid:$tmp/beta") ;;
	esac
	"$gen" "${opts[@]}" "$tmp/mmap2.data" "$tmp/$v.data" | grep -e "$tmp" | sed 's/^/# /'
	"$gen" --pipe "${opts[@]}" "$tmp/mmap2.data" "$tmp/$v-in.pipe" >/dev/null
	capture "$v-list" "$asan" buildid-list --with-status -i "$tmp/$v.data"
	cp "$tmp/$v-list.out" "$tmp/$v.list"
	capture "$v-script" "$asan" script -i "$tmp/$v.data" -F event,comm,ip,dso,build_id_status
	capture "$v-stats" "$asan" report --stats -i "$tmp/$v.data"
	case $v in
	warm) want="FOUND NO_BUILD_ID FOUND" ;;
	cold) want="FOUND NO_BUILD_ID IO_ERROR" ;;
	mismatch) want="none NO_BUILD_ID none" ;;
	esac
	got=$(for f in alpha nobid beta; do
		awk -v p="$tmp/$f" '$3 == p { s = $2 } END { print s ? s : "none" }' "$tmp/$v.list"
	      done | tr '\n' ' ')
	check "$v: the input, read by the patched perf: alpha, nobid, beta $got(want $want)" \
		eval 'sane $v-list && sane $v-script && sane $v-stats && [ "$got" = "$want " ] &&
		      grep -q "mmap3:build_id:" "$tmp/$v-script.out"'

	# To a file, to a pipe; the input as a pipe, to a pipe and a file.
	capture "$v-file" "$asan" inject --convert-mmap3 -i "$tmp/$v.data" -o "$tmp/$v-file.data"
	runpipe "$v-topipe" "$asan" inject --convert-mmap3 -i "$tmp/$v.data" -o -
	runpipe "$v-p2p" "$asan" inject --convert-mmap3 -i - -o - <"$tmp/$v-in.pipe"
	capture "$v-p2f" "$asan" inject --convert-mmap3 -i - -o "$tmp/$v-p2f.data" <"$tmp/$v-in.pipe"
	check "$v: perf inject --convert-mmap3 to a file, to a pipe, from a pipe to a pipe and to a file (ASan)" \
		eval 'ok0 $v-file && ok0 $v-topipe && ok0 $v-p2p && ok0 $v-p2f'
	# Plain perf inject to a pipe: the event's samples with the format of
	# the file, not of this host's tracepoint of that ID.
	runpipe "$v-plain" "$asan" inject -i "$tmp/$v.data" -o -
	capture "$v-plain-script" "$asan" script -i - <"$tmp/$v-plain.pipe"
	check "$v: perf inject -o - without --convert-mmap3 keeps the event and its format" \
		eval 'ok0 $v-plain && ok0 $v-plain-script &&
		      [ "$(grep -c "mmap3:build_id: pid=" "$tmp/$v-plain-script.out")" = \
			"$(grep -c "mmap3:build_id:" "$tmp/$v-script.out")" ]'

	for o in file topipe p2p p2f; do
		case $o in
		file | p2f) capture "$v-$o-up" "$old" script -i "$tmp/$v-$o.data" --show-mmap-events ;;
		*) capture "$v-$o-up" "$old" script -i - --show-mmap-events <"$tmp/$v-$o.pipe" ;;
		esac
		check "$v, $o: upstream's perf sees each file's build-id in its MMAP2 records when FOUND, else none" \
			eval '[ "$(rc $v-$o-up)" = 0 ] && check_ids $v-$o-up'
	done
	: >"$tmp/$v-file.pipe" && : >"$tmp/$v-p2f.pipe"
	for o in file p2f; do
		check "$v, $o: the patched perf reads the output as the input (ASan)" \
			same_as_input "$v-$o" "$tmp/$v-$o.data"
	done
	for o in topipe p2p; do
		check "$v, $o: the patched perf reads the output as the input (ASan)" \
			same_as_input "$v-$o" -
	done

	bad=
	for opt in -b -B --mmap2-buildid-all --buildid-all; do
		capture "$v-opt" "$asan" inject "$opt" -i "$tmp/$v.data" -o "$tmp/$v-opt.data"
		ok0 "$v-opt" || bad+=" $opt"
		runpipe "$v-optp" "$asan" inject "$opt" -i - -o - <"$tmp/$v-in.pipe"
		ok0 "$v-optp" || bad+=" $opt(pipe)"
		capture "$v-optr" "$asan" report -i "$tmp/$v-opt.data" --stdio
		ok0 "$v-optr" || bad+=" $opt(report)"
	done
	check "$v: perf inject -b, -B, --mmap2-buildid-all, --buildid-all, file and pipe: exit 0, ASan quiet${bad:+ (not:$bad)}" \
		test -z "$bad"
done

echo "1..$n"
[ "$failed" = 0 ]
