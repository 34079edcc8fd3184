#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# perf inject --convert-mmap3 on the host: MMAP3 records written as MMAP2
# ones for readers without MMAP3 support, the statuses kept in the header
# feature HEADER_MMAP3_STATUS for perf.
#
#   tests/perf/convert.sh
#
# The session of issue 16 (tests/perf/spin.c: alpha, then beta, run from
# one path rewritten in place) recorded with --buildid-mmap, turned into
# MMAP3 records with the file's device and inode numbers and alpha's run
# made IO_ERROR (tests/perf/mmap3-perf-data.py --stat-ids --mangle ioerror,
# as crafted.sh does), then converted by the patched perf built with ASan:
#  - an independent reader (tests/perf/mmap3-status-data.py stat) sees
#    MMAP2 records only, as many as the input's MMAP3 records, in the
#    build-id form exactly for FOUND ones, and one entry each;
#  - upstream's perf (MMAP3_KERNEL=upstream scripts/perf.sh) reads it
#    without an unknown record and gives the FOUND records' build-ids;
#  - hotspot's perfparser, which does not know MMAP3, reads it as it
#    reads perf's MMAP2 recording of the same session;
#  - the patched perf reads the MMAP3 records back: perf script's mapping
#    lines, report --stats' status counts, report, buildid-list are the
#    input's; so too after inject of the output (plain, -b, --buildid-all,
#    --mmap2-buildid-all) and in pipe mode (file to pipe, pipe to pipe,
#    pipe to file);
#  - perf inject reads no mapped file: with the program replaced by
#    another after recording, the build-ids are still the recorded ones;
#  - a pipe recorded by upstream's perf, whose last feature record has the
#    number of HEADER_MMAP3_STATUS, reads as before;
#  - a small file made from the output (mmap3-status-data.py minimal) reads
#    the same little- and big-endian, as a file and a pipe; its feature
#    damaged (truncated, a huge count, a bad entry size, keys that do not
#    grow, an entry that is not its record's, an unknown status, an entry
#    past the last record) is refused or applied entry by entry, with a
#    warning, never read past, and makes ASan report nothing.
#
# Prints TAP; exits 1 when a check fails, 4 (skip) when this host cannot
# record.
. "$(dirname "$0")/../../scripts/lib.sh"

. "$MMAP3_ROOT/tests/perf/tap.sh"
perfs_setup convert
stat=$MMAP3_ROOT/tests/perf/mmap3-status-data.py
# ok0 NAME: exit 0 and sane.
ok0() { [ "$(rc "$1")" = 0 ] && sane "$1"; }
# mappings NAME PERF FILE|-: the mapping lines of perf script, in
# $tmp/NAME.map (stdin for -: $tmp/NAME.in).
mappings() {
	local name=$1 p=$2 f=$3
	if [ "$f" = - ]; then
		capture "$name" "$p" script -i - --show-mmap-events <"$tmp/$name.in"
	else
		capture "$name" "$p" script -i "$f" --show-mmap-events
	fi
	grep 'PERF_RECORD_MMAP' "$tmp/$name.out" >"$tmp/$name.map" || true
}
# statuses NAME FILE: the MMAP3 records and status counts of report --stats.
statuses() {
	capture "$1" "$asan" report -i "$2" --stats
	sed -n -e 's/^ *MMAP3 events: *\([0-9]*\) .*/MMAP3 \1/p' -e '/of MMAP3)$/p' \
		"$tmp/$1.out" >"$tmp/$1.st"
}
# same NAME FILE: FILE reads as the input with the patched perf.
same() {
	mappings "$1-map" "$asan" "$2"
	statuses "$1-st" "$2"
	ok0 "$1-map" && cmp -s "$tmp/in-map.map" "$tmp/$1-map.map" &&
		cmp -s "$tmp/in-st.st" "$tmp/$1-st.st" ||
		{ diff "$tmp/in-map.map" "$tmp/$1-map.map" | head -6 | sed 's/^/#   /'; return 1; }
}

echo "TAP version 13"
in_place_session
"$conv" --stat-ids --mangle ioerror --mangle-file /p "$tmp/mmap2.data" "$tmp/in.data" | sed 's/^/# /'
# Without the IO_ERROR (both records FOUND), upstream's perf resolves each
# run of $p through its build-id, as in the MMAP2 records perf record
# wrote: alpha's in alpha, beta's in beta (beta being at $p still).
"$conv" --stat-ids "$tmp/mmap2.data" "$tmp/found.data" >/dev/null
capture found "$asan" inject --convert-mmap3 -i "$tmp/found.data" -o "$tmp/found-out.data"
capture old-report "$old" report -i "$tmp/found-out.data" --stdio --sort pid,sym -n
capture runs "$perf" script -i "$tmp/found.data" --show-task-events
runs=$(exec_runs "$tmp/runs.out")
shares=$(shares "$runs" "$tmp/old-report.out")
check "all FOUND: upstream's perf report of the output: alpha's run ${shares% *}% in alpha, beta's ${shares#* }% in beta (>= 90%)" \
	eval 'ok0 found && [ "$(rc old-report)" = 0 ] && ! grep -q "unknown events" "$tmp/old-report.out" &&
	      awk -v s="$shares" "BEGIN { split(s, x, \" \"); exit !(x[1] >= 90 && x[2] >= 90) }"'

# hotspot's perf.data parser (perfparser, from Debian's hotspot package),
# another reader that knows MMAP2 and not MMAP3, at $p's program still
# beta: the input's MMAP3 records are unknown to it; the output it reads as
# it reads perf's own MMAP2 recording of the session, naming the same
# binaries and symbols (the strings of its output stream, compared, but
# for the perf command lines).
pp=$(dpkg -L hotspot | grep '/hotspot-perfparser$')
for f in found found-out mmap2; do
	capture "pp-$f" "$pp" --input "$tmp/$f.data" --output "$tmp/pp-$f.stream"
	# Without the perf command lines (the header's cmdline feature).
	strings -n 3 "$tmp/pp-$f.stream" 2>/dev/null | grep -vF -e "$perf" -e "$asan" |
		sort -u >"$tmp/pp-$f.strings" || true
done
pp_unknown=$(grep -c 'unhandled event type 23 ' "$tmp/pp-found.out" || true)
check "hotspot's perfparser: $pp_unknown MMAP3 records of the input unknown to it, none of the output; the output names what the MMAP2 recording names ($(wc -l <"$tmp/pp-mmap2.strings") strings)" \
	eval '[ "$(rc pp-found-out)" = 0 ] && [ "$(rc pp-mmap2)" = 0 ] && [ "$pp_unknown" -gt 4 ] &&
	      ! grep -q "unhandled event type 23 " "$tmp/pp-found-out.out" &&
	      grep -qx beta "$tmp/pp-mmap2.strings" &&
	      cmp -s "$tmp/pp-mmap2.strings" "$tmp/pp-found-out.strings" ||
	      { diff "$tmp/pp-mmap2.strings" "$tmp/pp-found-out.strings" | head -6 | sed "s/^/#   /";
		grep -v "^#" "$tmp/pp-found-out.out" | sort | uniq -c | head -4 | sed "s/^/#   /"; false; }'

# The program at $p is now beta: make it neither, so that a build-id read
# from the file would be seen.
cp "$tmp/alpha" "$p"
printf 'not a program\n' >>"$p"
bid_p=$("$perf" buildid-list -i "$p" 2>/dev/null || true)

mappings in-map "$asan" "$tmp/in.data"
statuses in-st "$tmp/in.data"
grep -F "]: r-xp $p" "$tmp/in-map.map" | sed 's/^ */# in: /'
nr_mmap3=$(grep -c PERF_RECORD_MMAP3 "$tmp/in-map.map")
nr_found=$(grep -c 'FOUND\]' "$tmp/in-map.map")
check "the input: $nr_mmap3 MMAP3 records ($nr_found FOUND), $p IO_ERROR then FOUND with beta's build-id" \
	eval '[ "$nr_mmap3" -gt 4 ] && [ "$nr_found" -lt "$nr_mmap3" ] &&
	      grep -q "<> IO_ERROR\]: r-xp $p\$" "$tmp/in-map.map" &&
	      grep -q "<$bid_beta> FOUND\]: r-xp $p\$" "$tmp/in-map.map"'

# 1. The conversion.
capture inject "$asan" inject --convert-mmap3 -i "$tmp/in.data" -o "$tmp/out.data"
check "perf inject --convert-mmap3 (ASan): exit 0, nothing reported" ok0 inject
"$stat" stat "$tmp/out.data" >"$tmp/out.stat"
sed -n 's/^records MMAP/# output: &/p; s/^mmap2 /# output: &/p' "$tmp/out.stat"
check "an independent reader: no MMAP3 record, $nr_mmap3 MMAP2 ($nr_found with a build-id), $nr_mmap3 entries" \
	eval '! grep -q "^records MMAP3 " "$tmp/out.stat" &&
	      grep -qx "records MMAP2 $nr_mmap3" "$tmp/out.stat" &&
	      grep -qx "mmap2 build-id $nr_found inode $((nr_mmap3 - nr_found))" "$tmp/out.stat" &&
	      [ "$(grep -c "^status " "$tmp/out.stat")" = "$nr_mmap3" ]'
check "the entry of $p's first run says IO_ERROR, with its device and inode" \
	eval 'grep -qE "^status [0-9]+ pid [0-9]+ start 0x401000 IO_ERROR [0-9a-f]+:[0-9a-f]+ [1-9][0-9]* " "$tmp/out.stat"'

# 2. Upstream's perf.
capture old-script "$old" script -i "$tmp/out.data" --show-mmap-events
grep -F "]: r-xp $p" "$tmp/old-script.out" | sed 's/^ */# upstream: /'
# The FOUND records' build-ids, in order, from the patched perf's view of
# the input and from upstream's of the output.
sed -n 's/.*<\([0-9a-f]\{1,\}\)> FOUND\]: .*/\1/p' "$tmp/in-map.map" >"$tmp/in.bids"
sed -n 's/.*PERF_RECORD_MMAP2 .*<\([0-9a-f]\{1,\}\)>\]: .*/\1/p' "$tmp/old-script.out" >"$tmp/old.bids"
check "upstream's perf script: exit 0, no unknown record, $nr_mmap3 MMAP2 records, the FOUND build-ids in order" \
	eval '[ "$(rc old-script)" = 0 ] && ! grep -q "unknown events" "$tmp/old-script.out" &&
	      [ "$(grep -c PERF_RECORD_MMAP2 "$tmp/old-script.out")" = "$nr_mmap3" ] &&
	      cmp -s "$tmp/in.bids" "$tmp/old.bids"'
# p_records: upstream's view of $p's two MMAP2 records: the first (IO_ERROR)
# with device and inode numbers, the second with beta's build-id; were a
# build-id read from $p now, it would be alpha's.
p_records() {
	local lines
	lines=$(grep -F "]: r-xp $p" "$tmp/old-script.out")
	[ "$(echo "$lines" | wc -l)" = 2 ] &&
		echo "$lines" | sed -n 1p | grep -qE " @ 0x[0-9a-f]+ [0-9a-f]+:[0-9a-f]+ [0-9]+ [0-9]+\]: " &&
		echo "$lines" | sed -n 2p | grep -q "<$bid_beta>\]: "
}
check "perf inject read no file: $p's first MMAP2 record without a build-id, the second with beta's, not the file's now ($bid_p)" \
	p_records
capture old-buildids "$old" buildid-list -i "$tmp/out.data" --with-hits
check "upstream's perf buildid-list: beta's build-id for $p" \
	eval '[ "$(rc old-buildids)" = 0 ] && grep -qx "$bid_beta $p" "$tmp/old-buildids.out"'
# 3. The patched perf reads the input's MMAP3 records back.
check "patched perf script: the input's mapping lines (build-ids, statuses, device and inode numbers)" \
	eval 'mappings out-map "$asan" "$tmp/out.data"; ok0 out-map && cmp -s "$tmp/in-map.map" "$tmp/out-map.map"'
check "patched perf report --stats: the input's MMAP3 status counts" \
	eval 'statuses out-st "$tmp/out.data"; cmp -s "$tmp/in-st.st" "$tmp/out-st.st"'
sed 's/^/# /' "$tmp/out-st.st"
capture in-report "$asan" report -i "$tmp/in.data" --stdio --sort pid,dso,sym -n
capture out-report "$asan" report -i "$tmp/out.data" --stdio --sort pid,dso,sym -n
check "patched perf report: the input's, the warning about $p (IO_ERROR) included" \
	eval 'ok0 out-report && grep -qx "#  $p (IO_ERROR)" "$tmp/out-report.out" &&
	      grep -qx "#  $p (IO_ERROR)" "$tmp/in-report.out" &&
	      diff <(grep -v "^#" "$tmp/in-report.out") <(grep -v "^#" "$tmp/out-report.out") >/dev/null'
capture in-buildids "$asan" buildid-list -i "$tmp/in.data" --with-hits
capture out-buildids "$asan" buildid-list -i "$tmp/out.data" --with-hits
check "patched perf buildid-list --with-hits: the input's" \
	eval 'ok0 out-buildids && diff <(grep -v perf-vdso "$tmp/in-buildids.out") <(grep -v perf-vdso "$tmp/out-buildids.out") >/dev/null'
capture header "$asan" report -i "$tmp/out.data" --header-only
grep -A3 '^# mmap3 status' "$tmp/header.out" | sed 's/^/# /'
check "perf report --header-only counts the $nr_mmap3 converted records and their statuses" \
	eval 'grep -qx "# mmap3 status: $nr_mmap3 records converted from MMAP3 to MMAP2" "$tmp/header.out" &&
	      grep -qx "#   IO_ERROR: 1" "$tmp/header.out" && grep -qx "#   FOUND: $nr_found" "$tmp/header.out"'

# perf inject of the output keeps it as it is, in each mode.
for opt in "" -b --buildid-all --mmap2-buildid-all; do
	capture "again$opt" "$asan" inject $opt -i "$tmp/out.data" -o "$tmp/again$opt.data"
	check "perf inject ${opt:-(plain)} of the output: it reads as the input" \
		eval 'ok0 "again$opt" && same "again$opt" "$tmp/again$opt.data"'
done
check "perf inject --mmap2-buildid-all of the input: it reads as the input (no build-id read for IO_ERROR)" \
	eval 'capture m2all "$asan" inject --mmap2-buildid-all -i "$tmp/in.data" -o "$tmp/m2all.data";
	      ok0 m2all && same m2all "$tmp/m2all.data"'

# Pipe mode.
# The stream on stdout; warnings and ASan's reports on stderr.
"$asan" inject --convert-mmap3 -i "$tmp/in.data" -o - >"$tmp/f2p.data" 2>"$tmp/f2p.out"
echo $? >"$tmp/f2p.rc"
cp "$tmp/f2p.data" "$tmp/f2p-map.in"
mappings f2p-map "$asan" -
check "file to pipe (-o -): the input's mapping lines" \
	eval 'ok0 f2p && ok0 f2p-map && cmp -s "$tmp/in-map.map" "$tmp/f2p-map.map"'
"$stat" stat "$tmp/f2p.data" >"$tmp/f2p.stat"
check "file to pipe: no MMAP3 record, $nr_mmap3 MMAP2, $nr_mmap3 entries in feature records" \
	eval '! grep -q "^records MMAP3 " "$tmp/f2p.stat" && grep -qx "records MMAP2 $nr_mmap3" "$tmp/f2p.stat" &&
	      [ "$(grep -c "^status " "$tmp/f2p.stat")" = "$nr_mmap3" ]'
"$asan" inject -i - -o - <"$tmp/f2p.data" >"$tmp/p2p.data" 2>"$tmp/p2p.out"
echo $? >"$tmp/p2p.rc"
cp "$tmp/p2p.data" "$tmp/p2p-map.in"
mappings p2p-map "$asan" -
check "pipe to pipe (-i - -o -): the input's mapping lines" \
	eval 'ok0 p2p && ok0 p2p-map && cmp -s "$tmp/in-map.map" "$tmp/p2p-map.map"'
"$asan" inject -i - -o "$tmp/p2f.data" <"$tmp/p2p.data" >"$tmp/p2f.out" 2>&1
echo $? >"$tmp/p2f.rc"
check "pipe to file (-i - -o FILE): it reads as the input" eval 'ok0 p2f && same p2f "$tmp/p2f.data"'
cp "$tmp/f2p.data" "$tmp/old-pipe.in"
mappings old-pipe "$old" -
grep -m1 'unknown feature' "$tmp/old-pipe.out" | sed 's/^/# upstream, pipe: /'
check "upstream's perf script of the pipe: exit 0, the FOUND build-ids in order" \
	eval '[ "$(rc old-pipe)" = 0 ] && ! grep -q "unknown events" "$tmp/old-pipe.out" &&
	      sed -n "s/.*PERF_RECORD_MMAP2 .*<\([0-9a-f]\{1,\}\)>\]: .*/\1/p" "$tmp/old-pipe.map" |
	      cmp -s "$tmp/in.bids" -'

# A pipe of upstream's perf: its HEADER_LAST_FEATURE mark, a feature
# record without data, has the number of HEADER_MMAP3_STATUS (35). It
# must end the features as it does for upstream's perf.
"$old" record -e task-clock -o - -- "$old" test -w noploop 0.2 >"$tmp/upstream-pipe.data" 2>/dev/null
"$asan" script -i - <"$tmp/upstream-pipe.data" >"$tmp/up-script.out" 2>&1
echo $? >"$tmp/up-script.rc"
timeout 60 "$asan" report -i - --header-only <"$tmp/upstream-pipe.data" >"$tmp/up-header.out" 2>&1
echo $? >"$tmp/up-header.rc"
check "a pipe of upstream's perf: perf script reads its samples, report --header-only ends, no HEADER_MMAP3_STATUS warning" \
	eval 'ok0 up-script && grep -q noploop "$tmp/up-script.out" && ok0 up-header &&
	      grep -q "^# cmdline" "$tmp/up-header.out" &&
	      ! grep -q HEADER_MMAP3_STATUS "$tmp/up-script.out" "$tmp/up-header.out"'

# 4. Cross-endian and damaged features, on a small file made from the output.
"$stat" minimal "$tmp/out.data" "$tmp/le.data" | sed 's/^/# /'
mappings le-map "$asan" "$tmp/le.data"
check "small file: $nr_mmap3 MMAP3 records read back, IO_ERROR among them" \
	eval 'ok0 le-map && [ "$(grep -c PERF_RECORD_MMAP3 "$tmp/le-map.map")" = "$nr_mmap3" ] &&
	      grep -q "<> IO_ERROR\]: r-xp $p\$" "$tmp/le-map.map"'
for v in big-endian pipe "pipe big-endian"; do
	tag=$(echo "$v" | tr -d ' -')
	# shellcheck disable=SC2046 # the options
	"$stat" minimal $(printf -- '--%s ' $v) "$tmp/out.data" "$tmp/$tag.data" >/dev/null
	case $v in
	pipe*) cp "$tmp/$tag.data" "$tmp/$tag-map.in"; mappings "$tag-map" "$asan" - ;;
	*) mappings "$tag-map" "$asan" "$tmp/$tag.data" ;;
	esac
	check "small file, $v: the same MMAP3 records" \
		eval 'ok0 "$tag-map" && cmp -s "$tmp/le-map.map" "$tmp/$tag-map.map"'
done
for kind in truncated hugecount entrysize keys bigentry mismatch status beyond; do
	for v in "" "--big-endian" "--pipe"; do
		tag=$kind$(echo "$v" | tr -d ' -')
		"$stat" minimal $v --mangle "$kind" "$tmp/out.data" "$tmp/$tag.data" >/dev/null
		case $v in
		--pipe) cp "$tmp/$tag.data" "$tmp/$tag.in"; mappings "$tag" "$asan" - ;;
		*) mappings "$tag" "$asan" "$tmp/$tag.data" ;;
		esac
		n3=$(grep -c PERF_RECORD_MMAP3 "$tmp/$tag.map" || true)
		case $kind in
		truncated | hugecount | entrysize | keys)
			# Refused: every record read as MMAP2, with a warning.
			check "feature $kind${v:+ ($v)}: refused with a warning, the records read as MMAP2, nothing reported" \
				eval 'ok0 "$tag" && [ "$n3" = 0 ] &&
				      grep -q "HEADER_MMAP3_STATUS (.*) ignored" "$tmp/$tag.out"' ;;
		bigentry)
			check "feature with larger entries${v:+ ($v)}: read, the same MMAP3 records" \
				eval 'ok0 "$tag" && cmp -s "$tmp/le-map.map" "$tmp/$tag.map"' ;;
		mismatch)
			check "feature with an entry not its record's${v:+ ($v)}: that record read as MMAP2, a warning" \
				eval 'ok0 "$tag" && [ "$n3" = $((nr_mmap3 - 1)) ] &&
				      grep -q "^1 of the $nr_mmap3 MMAP3 statuses of this file" "$tmp/$tag.out"' ;;
		status)
			check "feature with an unknown status${v:+ ($v)}: read, that record's status printed as its number (200)" \
				eval 'ok0 "$tag" && [ "$n3" = "$nr_mmap3" ] &&
				      [ "$(grep -c "<> 200\]" "$tmp/$tag.map")" = 1 ]' ;;
		beyond)
			check "feature with an entry past the last record${v:+ ($v)}: the records read, a warning" \
				eval 'ok0 "$tag" && [ "$n3" = "$nr_mmap3" ] &&
				      grep -q "^1 of the $((nr_mmap3 + 1)) MMAP3 statuses of this file" "$tmp/$tag.out"' ;;
		esac
	done
done
capture status-header "$asan" report -i "$tmp/status.data" --header-only
check "perf report --header-only names an unknown status by its number" \
	eval 'ok0 status-header && grep -qx "#   200: 1" "$tmp/status-header.out"'

echo "1..$n"
[ "$failed" = 0 ]
