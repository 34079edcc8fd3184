#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Every perf command and option that README.md and the perf series' man
# pages name for MMAP3 data, on every kind of file the series writes, run
# by the patched perf built with ASan (issue #38):
#
#   tests/perf/matrix.sh
#
# The commands are the table below, one line each; the files are those of
# session_files (tests/perf/tap.sh), from one short session recorded on
# the host: a --mmap3 recording to a file (le-file) and to a pipe
# (le-pipe), converted by perf inject --convert-mmap3 (le-conv-file,
# le-conv-pipe) and a big-endian copy (be-file). Each command on each
# file, one TAP check:
#  - its exit status is upstream's perf's on the equivalent MMAP2 data
#    (the session's MMAP2 records in the same form: file, pipe or
#    big-endian), with the command's upstream form (the table's third
#    column: the series' options left out);
#  - no signal, no ASan report;
#  - where it prints build-ids (check "bid"), each line that names a file
#    of the session gives that file's build-id as `readelf -n` reads it
#    (one such line at least); for "out", the same of
#    `perf buildid-list` of the file it wrote.
# Prints TAP; exits 1 when a check fails, 4 (skip) when this host cannot
# record.
. "$(dirname "$0")/../../scripts/lib.sh"

. "$MMAP3_ROOT/tests/perf/tap.sh"
perfs_setup matrix
# NAME | the series' perf's arguments | upstream's (= the same) | check
# (bid, out or -, above). @IN@ is the input (- for a pipe, read from
# stdin), @OUT@ a file to write. A command that takes files only is run on
# the pipes too: both perfs must fail alike.
table='
inject-convert       | inject --convert-mmap3 -i @IN@ -o @OUT@      | inject -i @IN@ -o @OUT@  | out
inject-mmap2-bid-all | inject --mmap2-buildid-all -i @IN@ -o @OUT@ | =                        | out
inject-b             | inject -b -i @IN@ -o @OUT@                   | =                        | out
inject-buildid-all   | inject --buildid-all -i @IN@ -o @OUT@        | =                        | out
inject-B             | inject -B -i @IN@ -o @OUT@                   | =                        | out
inject               | inject -i @IN@ -o @OUT@                      | =                        | out
inject-convert-pipe  | inject --convert-mmap3 -i @IN@ -o -          | inject -i @IN@ -o -      | -
inject-mmap2-pipe    | inject --mmap2-buildid-all -i @IN@ -o -      | =                        | -
inject-b-pipe        | inject -b -i @IN@ -o -                       | =                        | -
inject-B-pipe        | inject -B -i @IN@ -o -                       | =                        | -
report-status        | report -i @IN@ --stdio --sort dso,build_id_status | report -i @IN@ --stdio --sort dso | -
report-status-key    | report -i @IN@ --stdio --sort build_id_status | report -i @IN@ --stdio --sort dso | -
report-stats         | report -i @IN@ --stats                       | =                        | -
script-status        | script -i @IN@ -F comm,ip,dso,build_id_status | script -i @IN@ -F comm,ip,dso | -
script-mmap          | script -i @IN@ --show-mmap-events            | =                        | bid
buildid-list-status  | buildid-list -i @IN@ --with-status           | buildid-list -i @IN@     | bid
buildid-list-hits    | buildid-list -i @IN@ --with-hits             | =                        | bid
annotate             | annotate -i @IN@ --stdio                     | =                        | -
diff                 | diff @IN@ @IN@                               | =                        | -
archive              | archive @IN@                                 | =                        | -
data-convert         | data convert -i @IN@ --to-json @OUT@         | =                        | -
'
kinds="le-file le-pipe le-conv-file le-conv-pipe be-file"
fuzz=$MMAP3_ROOT/tests/perf/mmap3-fuzz.py

echo "TAP version 13"
# perf archive writes its archive beside its input: "-.tar.bz2" for a pipe.
cd "$tmp"
mkdir -p "$tmp/in" "$tmp/mmap2"
session_files "$tmp/in"
# The equivalent MMAP2 data: the session's records as recorded, as a
# pipe, big-endian. (Not the converted files themselves: upstream's perf
# 7.3 crashes on them in perf inject -o -, whose
# perf_event__synthesize_features() calls feat_ops[] past its end for a
# feature it does not know, HEADER_MMAP3_STATUS here.)
m2=$tmp/mmap2
cp "$tmp/mmap2.data" "$m2/le-file.data"
cp "$tmp/mmap2.data" "$m2/le-conv-file.data"
"$old" inject -i "$tmp/mmap2.data" -o - >"$m2/le-pipe.data"
cp "$m2/le-pipe.data" "$m2/le-conv-pipe.data"
"$fuzz" rewrite --big-endian "$tmp/mmap2.data" "$m2/be-file.data" | sed 's/^/# /'

# The session's files and their build-ids, as readelf -n reads them: the
# files of its MMAP2 records, as upstream's perf prints them.
"$old" script -i "$tmp/mmap2.data" --show-mmap-events 2>/dev/null |
	sed -n 's/.*PERF_RECORD_MMAP2 .*: r-xp \(\/.*\)$/\1/p' | sort -u |
	while read -r f; do
		b=$(readelf -n "$f" 2>/dev/null | sed -n 's/^ *Build ID: *//p')
		[ -z "$b" ] || echo "$f $b"
	done >"$tmp/readelf.ids"
echo "# the session's files with a build-id: $(wc -l <"$tmp/readelf.ids")"
sed 's/^/#   /' "$tmp/readelf.ids"

# bids_match NAME: each line of $tmp/NAME.out that names a file of
# $tmp/readelf.ids and holds a 40-digit build-id gives readelf's; one
# line at least.
bids_match() {
	awk 'NR == FNR { id[$1] = $2; next }
	{
		n = split($0, t, /[][ \t<>(),]+/); f = ""; b = ""
		for (i = 1; i <= n; i++) {
			if (t[i] in id) f = t[i]
			else if (t[i] ~ /^[0-9a-f]{40}$/) b = t[i]
		}
		if (f == "" || b == "") next
		seen++
		if (b != id[f]) { bad++; print "#   " f ": " b ", readelf: " id[f] }
	}
	END { exit !(seen > 0 && !bad) }' "$tmp/readelf.ids" "$tmp/$1.out"
}

# perf_run NAME PERF ARGS KIND DIR: PERF with ARGS on DIR/KIND.data (from
# stdin for a pipe), @OUT@ being $tmp/NAME.data; output in $tmp/NAME.out.
perf_run() {
	local name=$1 p=$2 args=$3 kind=$4 dir=$5 in out=$tmp/$1.data
	rm -rf "$out" "$tmp/$kind-copy.data.tar.bz2"
	case "$kind" in
	*pipe) in=- ;;
	*) in=$tmp/$kind-copy.data && cp "$dir/$kind.data" "$in" ;;
	esac
	args=${args//@IN@/$in}
	args=${args//@OUT@/$out}
	# shellcheck disable=SC2086 # the table's arguments, split on blanks
	capture "$name" timeout 120 "$p" $args <"$dir/$kind.data"
}

while IFS='|' read -r name args up what; do
	name=$(echo $name) args=$(echo $args) up=$(echo $up) what=$(echo $what)
	[ -n "$name" ] || continue
	[ "$up" != = ] || up=$args
	for kind in $kinds; do
		perf_run "$name-$kind" "$asan" "$args" "$kind" "$tmp/in"
		perf_run "$name-$kind-up" "$old" "$up" "$kind" "$m2"
		want=$(rc "$name-$kind-up") got=$(rc "$name-$kind")
		extra=
		case "$what" in
		bid) extra=", readelf's build-ids" ;;
		out) extra=", readelf's build-ids in its output"
			[ "$got" != 0 ] || capture "$name-$kind-out" "$asan" buildid-list -i "$tmp/$name-$kind.data" ;;
		esac
		check "$kind: perf $args: exit $got, upstream's on MMAP2 $want$extra, no ASan report" \
			eval '[ "$got" = "$want" ] && sane "$name-$kind" &&
			      case "$what" in
			      bid) bids_match "$name-$kind" ;;
			      out) [ "$got" != 0 ] || bids_match "$name-$kind-out" ;;
			      esac ||
			      { tr -cd "[:print:]\n" <"$tmp/$name-$kind.out" | head -n 8 | sed "s/^/#   /"; asan_report "$name-$kind"; }'
	done
done <<<"$table"
echo "1..$n"
[ "$failed" = 0 ]
