#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# A seeded, deterministic mutation fuzzer of perf.data files with
# PERF_RECORD_MMAP3 records, read by the patched perf built with
# AddressSanitizer (scripts/perf.sh --asan):
#
#   tests/perf/fuzz.sh
#   MMAP3_FUZZ_SEED=S MMAP3_FUZZ_COUNT=N tests/perf/fuzz.sh
#   MMAP3_FUZZ_SEEDS=DIR MMAP3_FUZZ_ONLY="I ..." tests/perf/fuzz.sh
#
# Crafted and cross-endian files, fuzzed, must never crash perf, make ASan
# report anything (a read out of bounds included) or make it hang:
#  - the seeds: the eight kinds of file of session_files (tests/perf/tap.sh:
#    a --mmap3 recording to a file and a pipe, converted, each little- and
#    big-endian). Each seed must read with perf script as le-file does
#    (exit 0, the same mapping and sample lines): the fuzzer starts from
#    files perf reads;
#  - $MMAP3_FUZZ_COUNT mutants (default 256: 16 classes x 8 seeds, twice)
#    from seed $MMAP3_FUZZ_SEED (default 24), made by
#    tests/perf/mmap3-fuzz.py mutate, which says what each class damages:
#    MMAP3 header.size (not a multiple of 8, too small, past the end),
#    build_id_size, build_id_status, HEADER_MMAP3_STATUS (larger entries,
#    bad sizes and counts, its entries), the file name (no NUL, not UTF-8,
#    empty, special names), the sample_id tail, type and misc bits, feature
#    sections, the file header and attrs, truncation, random bytes in MMAP3
#    records, the fields of SAMPLE records (the ip at the edges of MMAP3
#    mappings, in one without a FOUND build-id, the pid/tid of a thread
#    without maps, the cpumode, time, period, ...), their layout
#    (header.size, a callchain: nr huge or past the end, PERF_CONTEXT_*
#    markers, longer than perf's max stack), several at once. Mutant I
#    depends on the seed, I and the seed files only; every mutant differs
#    from its seed file;
#  - each mutant is read by perf script --show-mmap-events -F
#    +build_id_status, report --stdio --sort comm,dso,sym,build_id_status
#    (each sample's map and its DSO's status), report -D, report --stats,
#    buildid-list --with-hits --with-status and inject (plain, -b or
#    --convert-mmap3, by I mod 3) to a file, a pipe seed's from stdin,
#    each under timeout 20 s: no signal, no ASan report or exit (99), no
#    abort, no timeout. One TAP check per class and tool; a failing one
#    names each failing mutant, what was done to it, the command that
#    reproduces it and the first lines of ASan's report, and keeps the
#    seeds and those mutants in
#    $MMAP3_WORK/fuzz-failed/ (MMAP3_FUZZ_SEEDS=that dir makes the same
#    mutants again without recording; MMAP3_FUZZ_ONLY="I ..." runs those
#    mutants only).
#
# Before the mutants, the two crashes the fuzzer found, made on purpose.
# The first (mmap3-perf-data.py --mangle kernel): the first MMAP3 record of
# libc given the kernel's cpumode, then the user-space records of libc. perf
# 7.3 itself made libc a kernel module's DSO, then a plain map of it, past
# whose end map__set_kmap_maps() wrote (ASan: heap-buffer-overflow; MMAP2
# records reach it the same way); patch 25 of patches/perf/ makes perf
# skip such a record. And the second: a program deleted after the session
# whose debuginfo perf finds by build-id in its cache; perf 7.3 read the
# .plt.got of the debuginfo file, which has no contents (SHT_NOBITS), at
# address zero (ASan: SEGV; 7.3.4's perf report segfaults), and patch 26
# makes it skip that section.
#
# The 256 mutants (1536 runs of the ASan perf, two at a time) took 90 s
# to 4 minutes on a 2-core machine busy with other builds. Prints TAP;
# exits 1 when a check fails, 4 (skip) when this host cannot record.
. "$(dirname "$0")/../../scripts/lib.sh"

. "$MMAP3_ROOT/tests/perf/tap.sh"
perfs_setup fuzz
fuzz=$MMAP3_ROOT/tests/perf/mmap3-fuzz.py
seed=${MMAP3_FUZZ_SEED:-24}
count=${MMAP3_FUZZ_COUNT:-256}
tools="script report dump stats buildids inject"
seeds="le-file le-pipe le-conv-file le-conv-pipe be-file be-pipe be-conv-file be-conv-pipe"
start=$SECONDS
# Where the seeds and failing mutants of the last failing run are kept.
kept=$MMAP3_WORK/fuzz-failed
[ "${MMAP3_FUZZ_SEEDS:-}" = "$kept/seeds" ] || rm -rf "$kept"

echo "TAP version 13"
mkdir -p "$tmp/seeds" "$tmp/mut" "$tmp/res" "$tmp/inj"
if [ -n "${MMAP3_FUZZ_SEEDS:-}" ]; then
	echo "# seeds from $MMAP3_FUZZ_SEEDS"
	for s in $seeds; do cp "$MMAP3_FUZZ_SEEDS/$s.data" "$tmp/seeds/"; done
else
	session_files "$tmp/seeds"
fi

# is_pipe NAME: whether seed NAME is a pipe-mode stream.
is_pipe() { [ "${1%pipe}" != "$1" ]; }
# script_of NAME FILE: perf script --show-mmap-events of FILE (stdin for a
# pipe seed) into $tmp/NAME.out.
script_of() {
	if is_pipe "$1"; then
		capture "$1" "$asan" script -i - --show-mmap-events <"$2"
	else
		capture "$1" "$asan" script -i "$2" --show-mmap-events
	fi
}
# 1. The seeds read as le-file does.
script_of seed-le-file "$tmp/seeds/le-file.data"
nr3=$(grep -c PERF_RECORD_MMAP3 "$tmp/seed-le-file.out" || true)
check "seed le-file: perf script exits 0, nothing reported, $nr3 MMAP3 records" \
	eval '[ "$(rc seed-le-file)" = 0 ] && sane seed-le-file && [ "$nr3" -gt 4 ]'
# (MMAP3 records, samples; not the warnings of a file without HEADER_NRCPUS.)
grep -v WARNING "$tmp/seed-le-file.out" >"$tmp/seed-le-file.lines"
for s in $seeds; do
	[ "$s" = le-file ] && continue
	script_of "seed-$s" "$tmp/seeds/$s.data"
	check "seed $s: perf script exits 0, nothing reported, the MMAP3 records and samples of le-file" \
		eval '[ "$(rc seed-$s)" = 0 ] && sane seed-$s &&
		      grep -v WARNING "$tmp/seed-$s.out" | cmp -s "$tmp/seed-le-file.lines" -'
done

# 1b. A user-space file taken for a kernel module, then mapped by user
# space (not when the seeds are given: it needs the recording).
if [ -e "$tmp/mmap2.data" ]; then
	"$conv" --stat-ids --mangle kernel --mangle-file /libc.so.6 "$tmp/mmap2.data" \
		"$tmp/kernel.data" >/dev/null
	capture kernel-script "$asan" script -i "$tmp/kernel.data" --show-mmap-events
	capture kernel-report "$asan" report -i "$tmp/kernel.data" --stdio
	capture kernel-dump "$asan" report -i "$tmp/kernel.data" -D
	nr_libc=$(grep -c 'PERF_RECORD_MMAP3 .*/libc\.so\.6$' "$tmp/kernel-script.out" || true)
	check "libc's first MMAP3 record with the kernel's cpumode, then $nr_libc in all: script, report, report -D exit 0, nothing reported, the record skipped" \
		eval '[ "$nr_libc" -ge 2 ] && [ "$(cat "$tmp"/kernel-*.rc | sort -u)" = 0 ] &&
		      sane kernel-script && sane kernel-report && sane kernel-dump &&
		      grep -q "problem processing PERF_RECORD_MMAP3, skipping event" "$tmp/kernel-dump.out" ||
		      asan_report kernel-script kernel-report kernel-dump'
fi

# 1c. A deleted program whose debuginfo perf finds by build-id, in its
# cache as perf buildid-cache or debuginfod leave it (plain MMAP2 records;
# not when the seeds are given: it needs a recording).
if [ -z "${MMAP3_FUZZ_SEEDS:-}" ]; then
	gcc -O1 -DSPIN_FN=alpha -o "$tmp/dyn" "$MMAP3_ROOT/tests/perf/spin.c"
	host_record "a program to delete" "$tmp/dyn 0.3" "$tmp/dyn.data"
	bid=$("$perf" buildid-list -i "$tmp/dyn")
	objcopy --only-keep-debug "$tmp/dyn" "$tmp/dyn.debug"
	rm -rf "$HOME/.debug" "$tmp/dyn"
	mkdir -p "$HOME/.debug/.build-id/${bid:0:2}/${bid:2}"
	cp "$tmp/dyn.debug" "$HOME/.debug/.build-id/${bid:0:2}/${bid:2}/debug"
	capture debuginfo-report "$asan" report -i "$tmp/dyn.data" --stdio --sort dso,sym
	check "a deleted program, its debuginfo (.plt.got without contents) in perf's cache: perf report exits 0, nothing reported, the samples in its DSO" \
		eval 'readelf -SW "$tmp/dyn.debug" >"$tmp/dyn.sections" &&
		      grep -q "\.plt\.got  *NOBITS" "$tmp/dyn.sections" &&
		      [ "$(rc debuginfo-report)" = 0 ] && sane debuginfo-report &&
		      grep -q "%  *dyn  *\[\.\] " "$tmp/debuginfo-report.out" ||
		      asan_report debuginfo-report'
fi

# 2. The mutants.
set -- $seeds
seedfiles=$(printf "$tmp/seeds/%s.data " "$@")
# shellcheck disable=SC2086 # the seed files
"$fuzz" mutate --seed "$seed" --count "$count" "$tmp/mut" $seedfiles >"$tmp/mutants"
only=${MMAP3_FUZZ_ONLY:-}
[ -z "$only" ] || only=$(printf '%04d ' $only)
# tool_cmd I TOOL FILE OUT: the command line of TOOL on mutant file FILE
# (inject writes OUT).
tool_cmd() {
	case $2 in
	script) echo "script -i $3 --show-mmap-events -F +build_id_status" ;;
	report) echo "report -i $3 --stdio --sort comm,dso,sym,build_id_status" ;;
	dump) echo "report -i $3 -D" ;;
	stats) echo "report -i $3 --stats" ;;
	buildids) echo "buildid-list -i $3 --with-hits --with-status" ;;
	inject)
		case $((10#$1 % 3)) in
		0) echo "inject -i $3 -o $4" ;;
		1) echo "inject -b -i $3 -o $4" ;;
		2) echo "inject --convert-mmap3 -i $3 -o $4" ;;
		esac ;;
	esac
}
# fuzz_one I SEED: every tool on mutant I (of seed SEED): $tmp/res/I-TOOL.
fuzz_one() {
	local i=$1 s=$2 t f=$tmp/mut/$1.data
	for t in $tools; do
		# shellcheck disable=SC2046 # the command's words
		if is_pipe "$s"; then
			capture "res/$i-$t" timeout -k 5 20 "$asan" $(tool_cmd "$i" "$t" - "$tmp/inj/$i.data") <"$f"
		else
			capture "res/$i-$t" timeout -k 5 20 "$asan" $(tool_cmd "$i" "$t" "$f" "$tmp/inj/$i.data")
		fi
		rm -f "$tmp/inj/$i.data"
	done
}
# Two workers, the even and the odd mutants.
for w in 0 1; do
	while read -r i cls s what; do
		[ $((10#$i % 2)) = "$w" ] || continue
		[ -z "$only" ] || [ "${only#*"$i "}" != "$only" ] || continue
		fuzz_one "$i" "${s%.data}"
	done <"$tmp/mutants" &
done
wait

# The mutants all differ from their seeds.
same=0
while read -r i cls s what; do
	cmp -s "$tmp/mut/$i.data" "$tmp/seeds/$s" && same=$((same + 1))
done <"$tmp/mutants"
check "$count mutants of seed $seed, each differs from its seed file" eval '[ "$same" = 0 ]'

# fine I TOOL: mutant I's run of TOOL was sane and ended in time.
fine() {
	local r
	r=$(rc "res/$1-$2")
	[ "$r" != 124 ] && [ "$r" != 137 ] && sane "res/$1-$2"
}
# report_bad I CLASS SEED WHAT TOOL: a failing mutant, how to make it again.
report_bad() {
	local i=$1 s=${3%.data} what=$4 t=$5 cmd in=""
	mkdir -p "$kept/seeds"
	cp "$tmp/seeds/"*.data "$kept/seeds/"
	cp "$tmp/mut/$i.data" "$kept/$i.data"
	is_pipe "$s" && in=" < $kept/$i.data"
	cmd=$(tool_cmd "$i" "$t" "$(is_pipe "$s" && echo - || echo "$kept/$i.data")" "$kept/$i.inject.data")
	echo "#   mutant $i (seed $seed, index $((10#$i)), class $2, of $s: $what): exit $(rc "res/$i-$t")"
	echo "#     remake: MMAP3_FUZZ_SEEDS=$kept/seeds MMAP3_FUZZ_SEED=$seed MMAP3_FUZZ_ONLY=$((10#$i)) tests/perf/fuzz.sh"
	echo "#     or: tests/perf/mmap3-fuzz.py mutate --seed $seed --index $((10#$i)) $kept $(printf "$kept/seeds/%s.data " $seeds)"
	echo "#     run: ASAN_OPTIONS=$ASAN_OPTIONS $asan $cmd$in"
	grep -m1 -A7 -E 'ERROR: AddressSanitizer|runtime error|Segmentation|Aborted' \
		"$tmp/res/$i-$t.out" | sed 's/^/#       /'
}
for cls in $("$fuzz" classes); do
	for t in $tools; do
		bad=$(while read -r i c s what; do
			[ "$c" = "$cls" ] || continue
			[ -e "$tmp/res/$i-$t.rc" ] || continue
			fine "$i" "$t" || report_bad "$i" "$c" "$s" "$what" "$t"
		done <"$tmp/mutants")
		tried=$(awk -v c="$cls" '$2 == c' "$tmp/mutants" | while read -r i _; do
			[ ! -e "$tmp/res/$i-$t.rc" ] || echo "$i"; done | wc -l)
		check "$cls: perf $(tool_cmd 0 "$t" F OUT | sed 's/ -i F//; s/ -o OUT//; s/^inject.*/inject/') of $tried mutants: no crash, no ASan report, no timeout" \
			eval '[ -z "$bad" ]'
		[ -z "$bad" ] || printf '%s\n' "$bad"
	done
done
runs=$(find "$tmp/res" -name '*.rc' | wc -l)
echo "# $count mutants, $runs runs of the ASan perf, $((SECONDS - start)) s"

echo "1..$n"
[ "$failed" = 0 ]
