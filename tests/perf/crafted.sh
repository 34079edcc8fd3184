#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# perf.data files with PERF_RECORD_MMAP3 records made on the host, read by
# the patched perf built with AddressSanitizer (scripts/perf.sh --asan):
#
#   tests/perf/crafted.sh
#
#  - the session of issue 16 on the host: two programs of one source
#    (tests/perf/spin.c: alpha, beta; same layout, different build-ids)
#    run one after the other from one path, rewritten in place in
#    between, recorded with --buildid-mmap (the host kernel puts the
#    build-ids in MMAP2 records) and turned into MMAP3 records with the
#    file's device and inode numbers (mmap3-perf-data.py --stat-ids): two
#    MMAP3 records for one path and inode with different build-ids, and
#    perf report must put each run's samples in its own function (a DSO
#    per build-id), with both binaries in a private build-id cache;
#  - the same file with one MMAP3 record damaged in each way of
#    mmap3-perf-data.py --mangle, and without attr.mmap3 (--no-attr):
#    perf script, report (-D, --stats), buildid-list and inject must not
#    crash nor make ASan report anything, and must say what they skipped
#    or found wrong; a status this perf does not know (200) is shown as
#    its number wherever perf shows a status;
#  - a record of that file with the status IO_ERROR or SKIPPED: perf
#    report --stats must count the statuses, perf report must name the
#    map in a warning;
#  - perf inject of the first file: -b and --buildid-all must put both
#    build-ids in the header's table; --mmap2-buildid-all must write MMAP2
#    records with them that upstream's perf (MMAP3_KERNEL=upstream
#    scripts/perf.sh) reads and resolves, and, for an IO_ERROR or SKIPPED
#    record, without a build-id, which the patched perf reads back with
#    its status (HEADER_MMAP3_STATUS; tests/perf/convert.sh tests it);
#  - alpha's record made PENDING, the kernel's way of saying that it had
#    not read the build-id at mapping time, with its answer, a
#    PERF_RECORD_MMAP3_BUILD_ID record, after it (mmap3-perf-data.py
#    --pending answered): perf must give the map alpha's build-id (each
#    run in its own function, as with the build-id in the record), in
#    that file, a big-endian copy and a big-endian pipe, and perf inject
#    --convert-mmap3 (file and pipe) must write alpha's MMAP2 record with
#    it, which upstream's perf reads without an unknown event; so too
#    with the answer stored before the record (early), which perf report
#    reads in time order and perf inject keeps for the record; the same
#    PENDING record without its answer (unanswered), with the answer of
#    another mapping (other) or one that says PENDING itself (notfinal)
#    keeps no build-id and the status PENDING, its samples in no other
#    binary when $p is gone; an answer without a PENDING record, with
#    another build-id (orphan), changes nothing; in a file without
#    attr.mmap3, type 24 is an unknown record.
#
# Prints TAP; exits 1 when a check fails, 4 (skip) when this host cannot
# record.
. "$(dirname "$0")/../../scripts/lib.sh"

. "$MMAP3_ROOT/tests/perf/tap.sh"
perfs_setup crafted

echo "TAP version 13"
in_place_session
"$conv" --stat-ids "$tmp/mmap2.data" "$tmp/mmap3.data" | sed 's/^/# /'

# 1. Two MMAP3 records for one path and inode, two build-ids.
capture script "$asan" script -i "$tmp/mmap3.data" --show-mmap-events --show-task-events
grep -F "]: r-xp $p" "$tmp/script.out" | sed 's/^ */# /'
ids=$(grep -F "]: r-xp $p" "$tmp/script.out" | grep PERF_RECORD_MMAP3 |
	sed -n 's/.* @ [0-9a-fx]* \([0-9a-f]*:[0-9a-f]* [0-9]*\) [0-9]* <\([0-9a-f]*\)> FOUND\].*/\1 \2/p')
check "the file has two MMAP3 records of $p, one inode, build-ids $bid_alpha and $bid_beta" \
	eval '[ "$(echo "$ids" | awk "{ print \$1, \$2 }" | sort -u | wc -l)" = 1 ] &&
	      [ "$(echo "$ids" | awk "{ print \$3 }" | tr "\n" " ")" = "$bid_alpha $bid_beta " ]'
capture report "$asan" report -i "$tmp/mmap3.data" --stdio --sort pid,sym -n
check "perf report (ASan) exits 0, nothing reported" eval '[ "$(rc report)" = 0 ] && sane report'
runs=$(exec_runs "$tmp/script.out")
shares=$(shares "$runs" "$tmp/report.out")
grep -v '^#' "$tmp/report.out" | grep '%' | head -4 | sed 's/^/# /'
check "a DSO per build-id: alpha's run ${shares% *}% in alpha, beta's ${shares#* }% in beta (>= 90%)" \
	awk -v s="$shares" 'BEGIN { split(s, x, " "); exit !(x[1] >= 90 && x[2] >= 90) }'
capture buildids "$asan" buildid-list -i "$tmp/mmap3.data" --with-hits
check "perf buildid-list --with-hits lists both build-ids for $p" \
	eval 'grep -qx "$bid_alpha $p" "$tmp/buildids.out" && grep -qx "$bid_beta $p" "$tmp/buildids.out"'

# 3. perf inject: -b and --buildid-all put the build-ids of the MMAP3
# records in the header table (both binaries of $p); --mmap2-buildid-all
# writes MMAP2 records that upstream's perf reads, each run in its function.
for opt in -b --buildid-all; do
	capture "inject$opt" "$asan" inject "$opt" -i "$tmp/mmap3.data" -o "$tmp/inject$opt.data"
	capture "inject$opt-ids" "$perf" buildid-list -i "$tmp/inject$opt.data"
	check "perf inject $opt: exit 0, the header's build-id table has both binaries of $p" \
		eval '[ "$(rc inject$opt)" = 0 ] && sane inject$opt &&
		      grep -qx "$bid_alpha $p" "$tmp/inject$opt-ids.out" &&
		      grep -qx "$bid_beta $p" "$tmp/inject$opt-ids.out"'
done
capture inject-mmap2 "$asan" inject --mmap2-buildid-all -i "$tmp/mmap3.data" -o "$tmp/mmap2-all.data"
capture old-script "$old" script -i "$tmp/mmap2-all.data" --show-mmap-events
check "perf inject --mmap2-buildid-all: upstream's perf reads MMAP2 records with both build-ids, no unknown event" \
	eval '[ "$(rc inject-mmap2)" = 0 ] && [ "$(rc old-script)" = 0 ] &&
	      ! grep -q "unknown events" "$tmp/old-script.out" &&
	      grep -q "PERF_RECORD_MMAP2 .*<$bid_alpha>\]: r-xp $p\$" "$tmp/old-script.out" &&
	      grep -q "PERF_RECORD_MMAP2 .*<$bid_beta>\]: r-xp $p\$" "$tmp/old-script.out"'
capture old-report "$old" report -i "$tmp/mmap2-all.data" --stdio --sort pid,sym -n
shares=$(shares "$runs" "$tmp/old-report.out")
check "upstream's perf report of it: alpha's run ${shares% *}% in alpha, beta's ${shares#* }% in beta (>= 90%)" \
	awk -v s="$shares" 'BEGIN { split(s, x, " "); exit !(x[1] >= 90 && x[2] >= 90) }'

# 2. Damaged records and a file without attr.mmap3.
# tools NAME FILE: every reader on FILE; they must stay sane.
tools() {
	local name=$1 file=$2 t
	capture "$name-script" "$asan" script -i "$file" --show-mmap-events
	capture "$name-report" "$asan" report -i "$file" --stdio --sort dso,sym
	capture "$name-dump" "$asan" report -i "$file" -D
	capture "$name-stats" "$asan" report -i "$file" --stats
	capture "$name-buildids" "$asan" buildid-list -i "$file" --with-hits
	capture "$name-inject" "$asan" inject -b -i "$file" -o "$tmp/$name-inject.data"
	capture "$name-injectall" "$asan" inject --buildid-all -i "$file" -o "$tmp/$name-injectall.data"
	for t in script report dump stats buildids inject injectall; do
		if ! sane "$name-$t"; then
			grep -m3 -E 'AddressSanitizer|runtime error|SUMMARY|#[0-3] ' "$tmp/$name-$t.out" | sed 's/^/#   /'
			return 1
		fi
	done
}
for kind in short16 short96 nonul bidsize status nofound; do
	"$conv" --stat-ids --mangle "$kind" --mangle-file "/p" "$tmp/mmap2.data" "$tmp/$kind.data" >/dev/null
	check "$kind: script, report, report -D, --stats, buildid-list, inject -b, --buildid-all: no crash, no ASan report" \
		tools "$kind" "$tmp/$kind.data"
	case $kind in
	short16 | short96 | nonul)
		check "$kind: perf report warns about a malformed MMAP3 record, exit 0" \
			eval '[ "$(rc $kind-report)" = 0 ] && grep -q "1 PERF_RECORD_MMAP3 records were malformed" "$tmp/$kind-report.out"'
		;;
	status)
		# A status this perf does not know (200): its number, wherever
		# perf shows a status, and never a build-id.
		check "$kind: perf script shows the unknown status as its number (200), without a build-id" \
			grep -qE "PERF_RECORD_MMAP3 .*<> 200\]: r-xp $p\$" "$tmp/$kind-script.out"
		check "$kind: perf report --stats counts 1 MMAP3 record 200, and its DSO's samples as 200" \
			eval 'grep -qE "^ +200 +1  \(.* of MMAP3\)\$" "$tmp/$kind-stats.out" &&
			      grep -qE "^  200 +[1-9][0-9]*  \( *[0-9.]+%\) +1 +1\$" "$tmp/$kind-stats.out"'
		capture "$kind-withstatus" "$asan" buildid-list -i "$tmp/$kind.data" --with-status
		check "$kind: perf buildid-list --with-status lists $p without a build-id, status 200" \
			eval 'sane $kind-withstatus && grep -qE "^- +200 +$p\$" "$tmp/$kind-withstatus.out"'
		capture "$kind-sort" "$asan" report -i "$tmp/$kind.data" --stdio --sort build_id_status,dso
		check "$kind: perf report --sort build_id_status,dso has samples in $p with status 200" \
			eval 'sane $kind-sort && grep -qE "%  +200 +${p##*/} *\$" "$tmp/$kind-sort.out"'
		capture "$kind-F" "$asan" script -i "$tmp/$kind.data" -F pid,ip,dso,build_id_status
		check "$kind: perf script -F build_id_status gives 200 for samples in $p, FOUND for the others there" \
			eval 'sane $kind-F && awk -v dso="($p)" '\''index($0, dso) { n[$NF]++ }
			      END { exit !(n["200"] && n["FOUND"]) }'\'' "$tmp/$kind-F.out"'
		;;
	*)
		check "$kind: perf script shows the record's status as INVALID, without a build-id" \
			grep -qE "PERF_RECORD_MMAP3 .*<> INVALID\]: r-xp $p\$" "$tmp/$kind-script.out"
		;;
	esac
done
# 4. Statuses: perf report --stats counts them; samples in a map whose
# record says IO_ERROR or SKIPPED are named in a warning.
for kind in ioerror skipped; do
	status=$(echo "$kind" | tr a-z A-Z | sed 's/IOERROR/IO_ERROR/')
	"$conv" --stat-ids --mangle "$kind" --mangle-file "/p" "$tmp/mmap2.data" "$tmp/$kind.data" >/dev/null
	capture "$kind-report" "$asan" report -i "$tmp/$kind.data" --stdio --sort pid,sym
	check "$status: perf report names $p among the maps with samples and no build-id" \
		eval 'sane $kind-report && grep -q "whose PERF_RECORD_MMAP3 has no\$" "$tmp/$kind-report.out" &&
		      grep -qx "#  $p ($status)" "$tmp/$kind-report.out"'
	capture "$kind-stats" "$asan" report -i "$tmp/$kind.data" --stats
	grep -A4 'MMAP3 events' "$tmp/$kind-stats.out" | sed 's/^/# /'
	check "$status: perf report --stats counts 1 MMAP3 record $status, the others FOUND or NO_FILE" \
		eval 'grep -qE "^ +$status +1  \(" "$tmp/$kind-stats.out" &&
		      grep -qE "^ +FOUND +[0-9]+  \(" "$tmp/$kind-stats.out"'
	# No build-id for alpha's run, and none may be given to it: not the
	# one of beta's record (same path and inode), nor the one read from
	# $p now (beta's). With $p gone, its samples stay unresolved and
	# beta's run resolves through beta's build-id; in --mmap2-buildid-all's
	# output alpha's MMAP2 has no build-id.
	mv "$p" "$p.away"
	capture "$kind-gone" "$asan" report -i "$tmp/$kind.data" --stdio --sort pid,sym -n
	mv "$p.away" "$p"
	grep -v '^#' "$tmp/$kind-gone.out" | grep '%' | head -4 | sed 's/^/# /'
	shares=$(shares "$runs" "$tmp/$kind-gone.out")
	check "$status: with $p gone, none of alpha's run in beta, beta's run ${shares#* }% in beta (>= 90%)" \
		eval 'sane $kind-gone && awk -v r="${runs%% *}:p" '\''$1 ~ /%$/ && $3 == r { n++; if ($5 == "beta") b++ }
		      END { exit !(n > 0 && b == 0) }'\'' "$tmp/$kind-gone.out" &&
		      awk -v s="$shares" '\''BEGIN { split(s, x, " "); exit !(x[2] >= 90) }'\'''
	# Upstream's perf reads the MMAP2 records as they are; the patched
	# one reads them as the MMAP3 records they were (HEADER_MMAP3_STATUS).
	capture "$kind-mmap2" "$asan" inject --mmap2-buildid-all -i "$tmp/$kind.data" -o "$tmp/$kind-mmap2.data"
	capture "$kind-mmap2-script" "$old" script -i "$tmp/$kind-mmap2.data" --show-mmap-events
	grep -F "]: r-xp $p" "$tmp/$kind-mmap2-script.out" | sed 's/^ */# /'
	check "$status: inject --mmap2-buildid-all: alpha's MMAP2 without a build-id, beta's with its own (upstream's perf)" \
		eval '[ "$(rc $kind-mmap2)" = 0 ] && sane $kind-mmap2 &&
		      [ "$(grep -F "]: r-xp $p" "$tmp/$kind-mmap2-script.out" | grep -c "PERF_RECORD_MMAP2 .*<")" = 1 ] &&
		      grep -F "]: r-xp $p" "$tmp/$kind-mmap2-script.out" | grep -q "PERF_RECORD_MMAP2 .*<$bid_beta>"'
	capture "$kind-mmap2-new" "$asan" script -i "$tmp/$kind-mmap2.data" --show-mmap-events
	check "$status: the patched perf reads it with alpha's status $status, beta's build-id" \
		eval 'sane $kind-mmap2-new &&
		      grep -F "]: r-xp $p" "$tmp/$kind-mmap2-new.out" | grep -q "PERF_RECORD_MMAP3 .*<> $status\]" &&
		      grep -F "]: r-xp $p" "$tmp/$kind-mmap2-new.out" | grep -q "PERF_RECORD_MMAP3 .*<$bid_beta> FOUND\]"'
done
# 5. PENDING records and their answers (PERF_RECORD_MMAP3_BUILD_ID).
fuzz=$MMAP3_ROOT/tests/perf/mmap3-fuzz.py
for kind in answered early unanswered orphan other notfinal; do
	"$conv" --stat-ids --pending "$kind" --pending-file "/p" "$tmp/mmap2.data" \
		"$tmp/$kind.data" >/dev/null
	check "$kind: script, report, report -D, --stats, buildid-list, inject -b, --buildid-all: no crash, no ASan report" \
		tools "$kind" "$tmp/$kind.data"
done
grep -E "PERF_RECORD_MMAP3 .*$p\$|PERF_RECORD_MMAP3_BUILD_ID" "$tmp/answered-script.out" |
	head -3 | sed 's/^ */# /' || true
check "answered: perf script shows alpha's record PENDING, then its answer with alpha's build-id" \
	eval 'grep -A1 "PERF_RECORD_MMAP3 .*<> PENDING\]: r-xp $p\$" "$tmp/answered-script.out" |
	      grep -q "PERF_RECORD_MMAP3_BUILD_ID .*<$bid_alpha> FOUND\]\$"'
check "answered: perf report --stats counts 1 MMAP3 record PENDING and 1 answer FOUND" \
	eval 'grep -qE "^ +PENDING +1  \(.* of MMAP3\)\$" "$tmp/answered-stats.out" &&
	      grep -qE "^ +FOUND +1  \(100.0% of MMAP3_BUILD_ID\)\$" "$tmp/answered-stats.out"'
# pending_runs NAME FILE: perf report --sort pid,sym -n of FILE (ASan) into
# $tmp/NAME.out; prints the shares of the two runs (shares).
pending_runs() {
	capture "$1" "$asan" report -i "$2" --stdio --sort pid,sym -n
	shares "$runs" "$tmp/$1.out"
}
# both_at_least PCT SHARES: each of the two shares is PCT or more.
both_at_least() { awk -v m="$1" -v s="$2" 'BEGIN { split(s, x, " "); exit !(x[1] >= m && x[2] >= m) }'; }
# all_status NAME STATUS: every sample in $p has STATUS in $tmp/NAME.out
# (perf script -F ...,build_id_status), and there are some.
all_status() {
	awk -v dso="($p)" -v want="$2" 'index($0, dso) { n++; if ($NF != want) bad++ }
		END { exit !(n && !bad) }' "$tmp/$1.out"
}
shares=$(pending_runs answered-report "$tmp/answered.data")
check "answered: alpha's run ${shares% *}% in alpha, beta's ${shares#* }% in beta (>= 90%): the map has alpha's build-id" \
	eval 'sane answered-report && both_at_least 90 "$shares"'
capture answered-F "$asan" script -i "$tmp/answered.data" -F pid,ip,dso,build_id_status
check "answered: perf script -F build_id_status gives FOUND for every sample in $p" \
	eval 'sane answered-F && all_status answered-F FOUND'
capture answered-withstatus "$asan" buildid-list -i "$tmp/answered.data" --with-status
check "answered: perf buildid-list --with-status lists $p with alpha's and beta's build-ids, FOUND, not as PENDING" \
	eval 'sane answered-withstatus &&
	      grep -qE "^$bid_alpha +FOUND +$p\$" "$tmp/answered-withstatus.out" &&
	      grep -qE "^$bid_beta +FOUND +$p\$" "$tmp/answered-withstatus.out" &&
	      ! grep -q PENDING "$tmp/answered-withstatus.out"'
# The other byte order and pipe mode: the answer is read the same way.
"$fuzz" rewrite --big-endian "$tmp/answered.data" "$tmp/answered-be.data" | sed 's/^/# /'
"$fuzz" rewrite --big-endian --pipe "$tmp/answered.data" "$tmp/answered-bepipe.data" >/dev/null
shares=$(pending_runs answered-be "$tmp/answered-be.data")
check "answered, big-endian: alpha's run ${shares% *}% in alpha, beta's ${shares#* }% in beta (>= 90%)" \
	eval 'sane answered-be && both_at_least 90 "$shares"'
capture answered-bepipe "$asan" script -i "$tmp/answered-bepipe.data" -F pid,ip,dso,build_id_status
check "answered, big-endian pipe: perf script -F build_id_status gives FOUND for every sample in $p" \
	eval 'sane answered-bepipe && all_status answered-bepipe FOUND'
# The answer stored before its record (the buffer of another CPU read
# first), 1 ns later: perf report reads it in time order.
shares=$(pending_runs early-report "$tmp/early.data")
check "early: alpha's run ${shares% *}% in alpha, beta's ${shares#* }% in beta (>= 90%)" \
	eval 'sane early-report && both_at_least 90 "$shares"'
# perf inject: the answer in the MMAP2 record (--convert-mmap3), or kept;
# perf inject reads the records in the order of the file: it keeps an
# answer that came before its record for it.
for k in answered early; do
	capture $k-conv "$asan" inject --convert-mmap3 -i "$tmp/$k.data" -o "$tmp/$k-conv.data"
	# capture, with the output apart from the messages.
	if "$asan" inject --convert-mmap3 -i "$tmp/$k.data" -o - >"$tmp/$k-convpipe.data" \
		2>"$tmp/$k-convpipe.out"; then
		echo 0 >"$tmp/$k-convpipe.rc"
	else
		echo $? >"$tmp/$k-convpipe.rc"
	fi
done
for f in answered-conv answered-convpipe early-conv early-convpipe; do
	capture "$f-old" "$old" script -i "$tmp/$f.data" --show-mmap-events
	capture "$f-new" "$asan" script -i "$tmp/$f.data" --show-mmap-events
	grep -F "]: r-xp $p" "$tmp/$f-old.out" | sed 's/^ */# /' || true
	check "${f%%-*}, inject --convert-mmap3 ($f): upstream's perf reads alpha's MMAP2 record with alpha's build-id, no unknown event" \
		eval '[ "$(rc $f)" = 0 ] && sane $f && [ "$(rc $f-old)" = 0 ] &&
		      ! grep -q "unknown events" "$tmp/$f-old.out" &&
		      [ "$(grep -c "PERF_RECORD_MMAP2 .*<$bid_alpha>\]: r-xp $p\$" "$tmp/$f-old.out")" = 1 ]'
	check "${f%%-*}, inject --convert-mmap3 ($f): the patched perf reads alpha's record back FOUND, no answer" \
		eval 'sane $f-new && grep -q "PERF_RECORD_MMAP3 .*<$bid_alpha> FOUND\]: r-xp $p\$" "$tmp/$f-new.out" &&
		      ! grep -q -e PENDING -e MMAP3_BUILD_ID "$tmp/$f-new.out"'
done
shares=$(pending_runs answered-inject-report "$tmp/answered-inject.data")
check "answered, perf inject -b: alpha's run ${shares% *}% in alpha (>= 90%), both build-ids of $p in the header's table" \
	eval '[ "$(rc answered-inject)" = 0 ] && both_at_least 90 "$shares" &&
	      "$perf" buildid-list -i "$tmp/answered-inject.data" >"$tmp/answered-ids.out" &&
	      grep -qx "$bid_alpha $p" "$tmp/answered-ids.out" && grep -qx "$bid_beta $p" "$tmp/answered-ids.out"'
# Without the answer: no build-id, PENDING.
for kind in unanswered other notfinal; do
	capture "$kind-F" "$asan" script -i "$tmp/$kind.data" -F pid,ip,dso,build_id_status
	capture "$kind-withstatus" "$asan" buildid-list -i "$tmp/$kind.data" --with-status
	check "$kind: alpha's samples PENDING (perf script -F), $p listed without a build-id, PENDING" \
		eval 'sane $kind-F && sane $kind-withstatus &&
		      awk -v dso="($p)" '\''index($0, dso) { n[$NF]++ } END { exit !(n["PENDING"] && n["FOUND"]) }'\'' "$tmp/$kind-F.out" &&
		      grep -qE "^- +PENDING +$p\$" "$tmp/$kind-withstatus.out" &&
		      ! grep -q "^$bid_alpha " "$tmp/$kind-withstatus.out"'
	mv "$p" "$p.away"
	capture "$kind-gone" "$asan" report -i "$tmp/$kind.data" --stdio --sort pid,sym -n
	mv "$p.away" "$p"
	check "$kind: with $p gone, none of alpha's run in beta; the '#' header names $p (PENDING)" \
		eval 'sane $kind-gone && awk -v r="${runs%% *}:p" '\''$1 ~ /%$/ && $3 == r { n++; if ($5 == "beta") b++ }
		      END { exit !(n > 0 && b == 0) }'\'' "$tmp/$kind-gone.out" &&
		      grep -qx "#  $p (PENDING)" "$tmp/$kind-gone.out"'
done
check "notfinal: perf script shows the answer that says PENDING as INVALID" \
	grep -q "PERF_RECORD_MMAP3_BUILD_ID .*<> INVALID\]\$" "$tmp/notfinal-script.out"
capture unanswered-conv "$asan" inject --convert-mmap3 -i "$tmp/unanswered.data" -o "$tmp/unanswered-conv.data"
capture unanswered-conv-old "$old" script -i "$tmp/unanswered-conv.data" --show-mmap-events
capture unanswered-conv-new "$asan" script -i "$tmp/unanswered-conv.data" --show-mmap-events
check "unanswered, inject --convert-mmap3: alpha's MMAP2 record without a build-id (upstream's perf), read back PENDING" \
	eval 'sane unanswered-conv && [ "$(rc unanswered-conv-old)" = 0 ] &&
	      [ "$(grep -F "]: r-xp $p" "$tmp/unanswered-conv-old.out" | grep -c "PERF_RECORD_MMAP2 .*<")" = 1 ] &&
	      grep -q "PERF_RECORD_MMAP3 .*<> PENDING\]: r-xp $p\$" "$tmp/unanswered-conv-new.out"'
# An answer without a PENDING record, with a build-id of no binary.
shares=$(pending_runs orphan-report "$tmp/orphan.data")
check "orphan: the answer without a PENDING record is ignored: alpha's run ${shares% *}% in alpha (>= 90%)" \
	eval 'sane orphan-report && grep -q PERF_RECORD_MMAP3_BUILD_ID "$tmp/orphan-script.out" &&
	      both_at_least 90 "$shares"'
"$conv" --stat-ids --no-attr --pending answered --pending-file "/p" "$tmp/mmap2.data" \
	"$tmp/noattr-answer.data" >/dev/null
capture noattr-answer "$asan" report -i "$tmp/noattr-answer.data" --stats
capture noattr-answer-report "$asan" report -i "$tmp/noattr-answer.data" --stdio
nr_mmap3=$(grep -c "PERF_RECORD_MMAP3 " "$tmp/answered-script.out")
check "no attr.mmap3: type 24 is not decoded as MMAP3_BUILD_ID, but counted as unknown ($nr_mmap3 + 1)" \
	eval 'sane noattr-answer && sane noattr-answer-report &&
	      ! grep -q "MMAP3_BUILD_ID events" "$tmp/noattr-answer.out" &&
	      grep -q "Found $((nr_mmap3 + 1)) unknown events" "$tmp/noattr-answer-report.out"'

"$conv" --stat-ids --no-attr "$tmp/mmap2.data" "$tmp/noattr.data" >/dev/null
check "no attr.mmap3: no crash, no ASan report" tools noattr "$tmp/noattr.data"
check "no attr.mmap3: type 23 is not decoded as MMAP3, but counted as unknown" \
	eval '! grep -q PERF_RECORD_MMAP3 "$tmp/noattr-script.out" && grep -q "unknown events" "$tmp/noattr-report.out"'

echo "1..$n"
[ "$failed" = 0 ]
