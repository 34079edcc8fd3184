# SPDX-License-Identifier: GPL-2.0
# Guest script: perf with MMAP3 against the patched kernel and the module.
# Runs in the guest from /tests, with scripts/perf.sh's guest copy
# ($PERF_BUILD/guest, see scripts/lib.sh) in /tests/perf and mmap3.ko in /tests;
# prints the begin/end markers and TAP lines of tests/qemu/run.sh, e.g.:
#
#   cp -a "$PERF_BUILD/guest" "$MMAP3_WORK/guest/perf"
#   cp tests/perf/guest-perf.sh "$MMAP3_WORK/guest/perf.sh"
#   tests/qemu/run.sh perf.sh
#
# (or source it from all.sh after the selftests). perf finds its libraries
# in /tests/perf/lib through its RUNPATH; libc and the loader are the
# guest's.
export PATH=/tests/perf:$PATH

# tap NAME CMD...: one TAP line for a command that exits 0 (pass), 2
# (skip: perf test's convention) or anything else (fail).
tap() {
	name=$1
	shift
	echo "mmap3-test: begin $name"
	"$@"
	rc=$?
	case $rc in
	0) echo "ok 1 - $name" ;;
	2) echo "ok 1 - $name # SKIP"; rc=4 ;;
	*) echo "not ok 1 - $name (exit $rc)" ;;
	esac
	echo "mmap3-test: end $name rc=$rc"
}

# tool NAME CMD...: tap NAME CMD... on the test kernel only. These check
# what perf does with the records (perf inject, report's attribution of
# replaced files, synthesis from /proc, other readers, perf's own test
# suite). The kernel paths they drive are driven by the tests run with tap
# as well, so the debug and KCSAN kernels, whose checks are about the
# kernel, leave them to make test (on the debug kernel they took 7 of
# all.sh's 17 minutes).
tool() {
	case "$MMAP3_KERNEL" in
	debug | kcsan) echo "# $1: a check of perf itself, run on the test kernel" ;;
	*) tap "$@" ;;
	esac
}

# perf record --mmap3 of perf itself, then report and buildid-list: the
# kernel's built-in provider without the module, the module's with it.
record_mmap3() {
	data=/tmp/perf-mmap3.data
	if ! perf record --mmap3 -e task-clock -o "$data" -- perf test -w noploop 1 \
		>/tmp/perf-record.out 2>&1; then
		# e.g. "Failed to create wakeup eventfd": CONFIG_EVENTFD is off.
		sed 's/^/# /' /tmp/perf-record.out
		return 1
	fi
	perf script -f -i "$data" --show-mmap-events 2>/dev/null | grep PERF_RECORD_MMAP3 | sed 's/^/# /'
	bid=$(perf buildid-list -i /tests/perf/perf)
	perf buildid-list -i "$data" --with-hits | sed 's/^/# /'
	perf buildid-list -i "$data" --with-hits | grep -q "^$bid " || return 1
	top=$(perf report -i "$data" --stdio --sort sym 2>/dev/null | grep -v '^#' | grep -m1 '%')
	echo "# top symbol: $top"
	echo "$top" | grep -q noploop
}

# perf test's C tests (no shell test directory is reachable from /tmp/pt)
# of the series' perf and of upstream's (7.3 without the series), with the
# module loaded: a test that upstream passes must pass patched, and every
# test the series adds must pass or skip. A test that upstream passes and
# the series' perf fails is run again alone, up to three times: upstream's
# own tests include flaky ones ("Number of exit events of a simple
# workload" failed 6 runs in 60 here with either perf, alternating), and
# only a test that fails every time is a regression.
perf_test_results() {
	"$1" test 2>&1 | sed -n 's/^ *[0-9.]*: \(.*[^ ]\) *: \(Ok\|FAILED!\|Skip.*\)$/\2|\1/p' | sort -t'|' -k2
}
perf_test_vs_upstream() {
	command -v perf-upstream >/dev/null || { echo "# no perf-upstream"; return 1; }
	rm -rf /tmp/pt
	mkdir -p /tmp/pt
	(
		cd /tmp/pt || exit 1
		perf_test_results perf-upstream >upstream
		perf_test_results perf >patched
		rc=0
		for f in upstream patched; do
			echo "# $f: $(grep -c '^Ok|' $f) ok, $(grep -c '^FAILED' $f) failed, $(grep -c '^Skip' $f) skipped"
		done
		[ "$(grep -c '^Ok|' upstream)" -gt 0 ] || { echo "# upstream's perf test passed nothing"; exit 1; }
		cut -d'|' -f2 upstream >names
		while IFS='|' read -r res name; do
			if ! grep -qxF "$name" names; then
				echo "# added by the series: $name: $res"
				case $res in Ok | Skip*) ;; *) rc=1 ;; esac
			elif grep -qxF "Ok|$name" upstream && [ "$res" != Ok ]; then
				again=0
				for i in 1 2 3; do
					perf test "$name" 2>&1 | grep -F "$name" | grep -q ": Ok\$" &&
						again=$((again + 1))
				done
				echo "# upstream passes, patched $res: $name; alone, patched passes $again of 3"
				[ "$again" -gt 0 ] || rc=1
			fi
		done <patched
		exit $rc
	)
}

# replaced(): the session of issue 16 (tests/perf/replaced.sh).
. /tests/perf/replaced.sh

# check_replaced HOW: with --mmap3, each run's user-space samples go to its own
# function (at least 90%); the other modes are measured for comparison
# (the table of patches/perf/0000-cover-letter.patch).
check_replaced() {
	how=$1
	mmap3_alpha= mmap3_beta=
	echo "# $how: share of alpha's run's user samples in alpha (beta), of beta's run's in beta (alpha)"
	for m in "perf --mmap3" "perf" "perf --no-buildid-mmap" "perf-upstream" "perf-upstream --no-buildid-mmap"; do
		set -- $m
		command -v "$1" >/dev/null || continue
		rp=$1
		shift
		set -- $(replaced "$rp" "$*" "$how") "$@"
		tag=$how-$rp$(echo "$5" | tr -d ' -')	# as replaced() names its files
		echo "# $how, $rp record ${5:-(plain)}: alpha's run ${1}% (${3}%), beta's run ${2}% (${4}%)," \
			"build-ids of /tmp/p: $(cut -c1-8 "/tmp/buildids-$tag.out" 2>/dev/null | tr '\n' ' ')"
		[ "$rp $5" != "perf --mmap3" ] || mmap3_alpha=$1 mmap3_beta=$2
	done
	grep -v '^#' "/tmp/report-$how-perfmmap3.out" | grep '%' | head -4 | sed 's/^/#   --mmap3: /'
	awk -v a="$mmap3_alpha" -v b="$mmap3_beta" 'BEGIN { exit !(a + 0 >= 90 && b + 0 >= 90) }'
}

# Processes that run when perf record starts, whose MMAP3 records perf
# synthesizes from /proc/PID/maps, reading each build-id from the mapped
# file itself: through /proc/PID/map_files as root, by path as a user
# who may not open map_files, where perf must check that the file at the
# path is the mapped one. Three programs, all copies of alpha, run as
# user 1000:
#  - replaced: another file (beta) bind-mounted over its path since it
#    started, as in another mount namespace: /proc/PID/maps still names
#    the path (not "(deleted)", as after a rename);
#  - deleted: its file removed since it started;
#  - btrfs: on btrfs, where stat() gives a file the subvolume's device
#    and /proc/PID/maps its superblock's (the test checks that they
#    differ, or it would not test this).
# As root each gets alpha's build-id (FOUND). As the user, btrfs gets
# alpha's too, and the other two get UNKNOWN, perf's "could not check":
# never beta's build-id, and not IO_ERROR, which says the mapped file
# could not be read.
synth_cases() {
	dir=/tmp/synth
	rm -rf "$dir"
	mkdir -p "$dir/home" "$dir/btrfs"
	chmod 777 "$dir" "$dir/home"
	bid_alpha=$(perf buildid-list -i /tests/perf/alpha)
	bid_beta=$(perf buildid-list -i /tests/perf/beta)
	paranoid=$(cat /proc/sys/kernel/perf_event_paranoid)
	echo -1 >/proc/sys/kernel/perf_event_paranoid
	if ! mount -t btrfs -o loop /tests/perf/btrfs.img "$dir/btrfs"; then
		echo "# cannot mount /tests/perf/btrfs.img"
		return 1
	fi
	for f in replaced deleted; do
		cp /tests/perf/alpha "$dir/$f"
		chmod 755 "$dir/$f"
	done
	pids=
	for f in replaced deleted btrfs/alpha; do
		/tests/perf/runas 1000 "$dir/$f" 60 &
		pids="$pids${pids:+,}$!"
	done
	sleep 1
	cp /tests/perf/beta "$dir/beta"
	mount --bind "$dir/beta" "$dir/replaced"
	rm "$dir/deleted"
	rc=0
	# The case is btrfs' only if stat() and /proc/PID/maps disagree.
	pid_btrfs=${pids##*,}
	maps_dev=$(grep -m1 " $dir/btrfs/alpha\$" "/proc/$pid_btrfs/maps" | cut -d' ' -f4)
	stat_dev=$(stat -c '%D' "$dir/btrfs/alpha")
	echo "# btrfs/alpha: /proc/PID/maps device $maps_dev, stat() device $stat_dev (hex)"
	maj=$((0x${maps_dev%%:*})) min=$((0x${maps_dev##*:}))
	if [ $(((maj << 8) | (min & 255) | ((min & ~255) << 12))) = $((0x$stat_dev)) ]; then
		echo "# stat() gives the superblock's device: not the btrfs case"
		rc=1
	fi
	for who in root user; do
		data=$dir/$who.data
		run=
		[ $who = root ] || run="/tests/perf/runas 1000"
		# shellcheck disable=SC2086 # run is a command or nothing
		if ! HOME=$dir/home $run perf record --mmap3 -e task-clock -p "$pids" -o "$data" \
			-- sleep 1 >"$dir/$who.out" 2>&1; then
			sed 's/^/# /' "$dir/$who.out"
			rc=1
			continue
		fi
		perf script -f -i "$data" --show-mmap-events 2>/dev/null |
			grep 'PERF_RECORD_MMAP3 .* r-xp ' >"$dir/$who.mmap3"
		for f in replaced "deleted (deleted)" btrfs/alpha; do
			line=$(grep -F -m1 " r-xp $dir/$f" "$dir/$who.mmap3")
			echo "# as $who, $f: ${line#*PERF_RECORD_MMAP3 }"
			case $who:$f in
			root:* | user:btrfs/alpha) want="<$bid_alpha> FOUND]" ;;
			user:*) want="<> UNKNOWN]" ;;
			esac
			case $line in
			*"$want"*) ;;
			*)
				echo "# as $who, $f: expected '$want' (alpha $bid_alpha, beta $bid_beta)"
				rc=1
				;;
			esac
		done
	done
	kill $(echo "$pids" | tr , ' ')
	wait 2>/dev/null
	umount "$dir/replaced"
	umount "$dir/btrfs"
	echo "$paranoid" >/proc/sys/kernel/perf_event_paranoid
	return $rc
}

# default_record: a plain perf record (--buildid-mmap, the default of 7.3's
# perf) records MMAP2 records with build-ids and no MMAP3 one, with or
# without the module: files that tools without MMAP3 support read. With
# the module, record.build-id=mmap3 in perfconfig records MMAP3.
default_record() {
	data=/tmp/perf-default.data
	export HOME=/tmp/home-default
	rm -rf "$HOME"
	mkdir -p "$HOME"
	perf record -e task-clock -o "$data" -- /tests/perf/alpha 0.1 \
		>/tmp/default.out 2>&1 || { sed 's/^/# /' /tmp/default.out; return 1; }
	perf script -i "$data" --show-mmap-events >/tmp/default-script.out 2>/dev/null
	line=$(grep 'r-xp /tests/perf/alpha$' /tmp/default-script.out)
	echo "# $line"
	! grep -q PERF_RECORD_MMAP3 /tmp/default-script.out &&
		echo "$line" | grep -q "PERF_RECORD_MMAP2 .*<$(perf buildid-list -i /tests/perf/alpha)>\]" ||
		return 1
	grep -q '^mmap3 ' /proc/modules || return 0
	perf config record.build-id=mmap3
	perf record -e task-clock -o "$data" -- /tests/perf/alpha 0.1 >/dev/null 2>&1 &&
		perf script -i "$data" --show-mmap-events 2>/dev/null | grep -q 'PERF_RECORD_MMAP3 .*r-xp /tests/perf/alpha$'
}

# convert_upstream: a perf record --mmap3 file (alpha, FOUND; the [vdso],
# NO_FILE) written as MMAP2 records by perf inject --convert-mmap3, to a
# file and to a pipe, read by upstream's perf (7.3 without the series, which
# stops at an MMAP3 record): exit 0, no unknown record, as many MMAP2
# records as the input has MMAP3 ones, the FOUND records' build-ids in
# their order (alpha's among them), alpha's build-id in its buildid-list,
# alpha's samples in alpha. perf inject's checks of its own output are
# those of the perf test (inject_mmap3.sh).
convert_upstream() {
	command -v perf-upstream >/dev/null || { echo "# no perf-upstream"; return 1; }
	scratch /tmp/convert
	perf record --mmap3 -e task-clock -o "$d/in.data" -- /tests/perf/alpha 0.3 \
		>"$d/record.out" 2>&1 || { sed 's/^/# /' "$d/record.out"; return 1; }
	perf inject --convert-mmap3 -i "$d/in.data" -o "$d/file.data" &&
		perf inject --convert-mmap3 -i "$d/in.data" -o - >"$d/pipe.data" || return 1
	perf script -i "$d/in.data" --show-mmap-events 2>/dev/null | grep PERF_RECORD_MMAP3 >"$d/in.map"
	sed 's/^ */# input: /' "$d/in.map"
	n=$(wc -l <"$d/in.map")
	sed -n 's/.*<\([0-9a-f][0-9a-f]*\)> FOUND\]: .*/\1/p' "$d/in.map" >"$d/in.bids"
	bid=$(perf buildid-list -i /tests/perf/alpha)
	rc=0
	grep -qx "$bid" "$d/in.bids" && grep -q -v 'FOUND\]' "$d/in.map" ||
		{ echo "# expected alpha FOUND ($bid) and a record without a build-id"; rc=1; }
	for f in file pipe; do
		if [ $f = pipe ]; then
			perf-upstream script -i - --show-mmap-events <"$d/pipe.data" >"$d/$f.script" 2>&1
		else
			perf-upstream script -i "$d/file.data" --show-mmap-events >"$d/$f.script" 2>&1
		fi
		r=$?
		m=$(grep -c PERF_RECORD_MMAP2 "$d/$f.script")
		sed -n 's/.*PERF_RECORD_MMAP2 .*<\([0-9a-f][0-9a-f]*\)>\]: .*/\1/p' "$d/$f.script" >"$d/$f.bids"
		echo "# upstream perf script of the $f: exit $r, $m MMAP2 records (the input: $n MMAP3)"
		if [ "$r" != 0 ] || [ "$m" != "$n" ] || grep -q 'unknown events' "$d/$f.script" ||
			! cmp -s "$d/in.bids" "$d/$f.bids"; then
			grep -e PERF_RECORD_MMAP -e unknown "$d/$f.script" | sed 's/^ */#   /'
			rc=1
		fi
	done
	perf-upstream buildid-list -i "$d/file.data" --with-hits 2>/dev/null | grep -q "^$bid /tests/perf/alpha\$" ||
		{ echo "# upstream perf buildid-list: no $bid /tests/perf/alpha"; rc=1; }
	top=$(perf-upstream report -i "$d/file.data" --stdio --sort sym 2>/dev/null | grep -v '^#' | grep -m1 '%')
	echo "# upstream perf report, top symbol: $top"
	echo "$top" | grep -q alpha || rc=1
	return $rc
}

# The command of the recordings from the cold disk, and its binaries (on
# the ext2 disk at /mnt; their build-ids in fixtures/MANIFEST, which
# readelf -n gave on the host).
cold_work='/mnt/ld-linux-x86-64.so.2 --library-path /mnt /mnt/dynamic.elf; /mnt/busybox true'
cold_bins="ld-linux-x86-64.so.2 dynamic.elf libc.so.6 busybox"
# cold_id BIN: BIN's build-id, as readelf -n gave it (fixtures/MANIFEST).
cold_id() { awk -v f="$1" '$1 == f {print $2}' /tests/fixtures/MANIFEST; }
# scratch DIR: DIR emptied, $d, holding $HOME (perf's build-id cache).
scratch() {
	d=$1
	rm -rf "$d"
	mkdir -p "$d/home"
	export HOME=$d/home
}
# cold_record OUT PERF [OPTION...]: PERF record OPTION... of cold_work, the
# page cache dropped first, into OUT (a pipe's stream when OUT ends in
# .pipe); its messages in OUT.log, shown when it fails.
cold_record() {
	local out=$1 rp=$2
	shift 2
	sync
	echo 3 >/proc/sys/vm/drop_caches
	case $out in
	*.pipe) "$rp" record "$@" -e task-clock -o - -- sh -c "$cold_work" >"$out" 2>"$out.log" ;;
	*) "$rp" record "$@" -e task-clock -o "$out" -- sh -c "$cold_work" >"$out.log" 2>&1 ;;
	esac || { sed 's/^/# /' "$out.log"; return 1; }
}

# samply_reader: samply's perf.data parser (tests/perf/samply-reader),
# which knows MMAP2 and not MMAP3, on recordings of four binaries mapped
# from the cold ext2 disk (/mnt: ld.so, dynamic.elf, libc, busybox; their
# build-ids from fixtures/MANIFEST, which readelf -n gave on the host).
# perf record --mmap3 then perf inject --convert-mmap3 or
# --mmap2-buildid-all: the reader sees each binary's mappings with its
# build-id and no record it does not know; then perf inject -B (MMAP2
# records of the DSOs with samples only): no record it does not know, and
# each binary it sees has its build-id. The default perf record: the
# reader parses it and never sees a wrong build-id (upstream's no-fault
# parse gives none for a file not in the page cache; shown, not failed).
samply_reader() {
	scratch /tmp/samply
	cold_record "$d/mmap3.data" perf --mmap3 || return 1
	cold_record "$d/default.data" perf || return 1
	perf inject --convert-mmap3 -i "$d/mmap3.data" -o "$d/converted.data" || return 1
	perf inject --mmap2-buildid-all -i "$d/mmap3.data" -o "$d/mmap2-all.data" || return 1
	perf inject -B -i "$d/mmap3.data" -o "$d/B.data" || return 1
	rc=0
	for how in mmap3 converted mmap2-all B default; do
		/tests/perf/samply-reader "$d/$how.data" >"$d/$how.txt" 2>"$d/$how.err" ||
			{ sed 's/^/# /' "$d/$how.err"; rc=1; }
		echo "# samply's parser, $how: $(grep -c '^mmap2 ' "$d/$how.txt") MMAP2 records," \
			"$(awk '$1 == "record" && $2 == 23 {n = $3} END {print n + 0}' "$d/$how.txt") MMAP3 (type 23, unknown to it)"
	done
	for how in converted mmap2-all B; do
		grep -q '^record 23 ' "$d/$how.txt" && { echo "# MMAP3 records left in $how"; rc=1; }
	done
	for f in $cold_bins; do
		want=$(cold_id "$f")
		for how in converted mmap2-all B default; do
			got=$(awk -v p="/mnt/$f" '$1 == "mmap2" && $6 == p {print $5}' "$d/$how.txt" | sort -u | tr '\n' ' ')
			echo "# $how: /mnt/$f: ${got:-no mapping }(readelf: $want)"
			case $how in
			converted | mmap2-all) [ "$got" = "$want " ] || rc=1 ;;
			B) [ -z "$got" ] || [ "$got" = "$want " ] || rc=1 ;;
			*)
				for g in $got; do
					[ "$g" = - ] || [ "$g" = "$want" ] || rc=1
				done ;;
			esac
		done
	done
	return $rc
}

# inject_options: every perf inject option that README or perf-inject.txt
# names for MMAP3 data, on real recordings of binaries mapped from the
# cold ext2 disk (as samply_reader's): perf record --mmap3 to a file and to
# a pipe, and the default perf record (MMAP2 with build-ids) for the exit
# status upstream's perf inject gives on the equivalent MMAP2 data. One
# line of the table per option (input and output, file or pipe); each run
# must exit as upstream's does on the MMAP2 recording (0 for an option
# upstream's perf does not have), and every build-id that perf
# buildid-list --with-status (the DSOs of the records) then gives for a
# /mnt binary must be the one readelf -n gave (cold_id); the options that
# write every map record (--convert-mmap3, --mmap2-buildid-all,
# --buildid-all) must give all four binaries theirs.
inject_table='
convert-file	file	file	--convert-mmap3
mmap2-all-file	file	file	--mmap2-buildid-all
mmap2-all-pipe-in	pipe	file	--mmap2-buildid-all
mmap2-all-pipe-out	file	pipe	--mmap2-buildid-all
b-file	file	file	-b
buildid-all-file	file	file	--buildid-all
buildid-all-pipe-in	pipe	file	--buildid-all
plain-pipe-out	file	pipe	-
convert-pipe-pipe	pipe	pipe	--convert-mmap3
B-file	file	file	-B
'
inject_options() {
	scratch /tmp/inject
	cold_record "$d/mmap3.data" perf --mmap3 || return 1
	cold_record "$d/mmap3.pipe" perf --mmap3 || return 1
	cold_record "$d/default.data" perf-upstream || return 1
	echo "$inject_table" | while read -r name in out opt; do
		[ -n "$name" ] || continue
		[ "$opt" = - ] && opt=
		set -- perf inject $opt -i "$d/mmap3.data"
		[ "$in" = pipe ] && set -- perf inject $opt -i -
		[ "$out" = file ] && set -- "$@" -o "$d/$name.out.data"
		[ "$out" = pipe ] && set -- "$@" -o -
		# A pipe in: perf record's pipe output, through a pipe.
		cat "$d/mmap3.pipe" | "$@" >"$d/$name.stdout" 2>"$d/$name.err"
		got=$?
		[ "$out" = pipe ] && mv "$d/$name.stdout" "$d/$name.out.data"
		# Upstream's perf inject on the MMAP2 recording, as a file.
		perf-upstream inject $opt -i "$d/default.data" -o "$d/$name.up.data" >/dev/null 2>&1
		want=$?
		# An option upstream's perf does not have (usage, 129): as 0.
		[ "$want" = 129 ] && want=0
		bad=
		[ "$got" = "$want" ] || bad="exit $got, upstream's $want"
		# Every DSO of the records, "<build-id or -> <status> <path>".
		perf buildid-list --with-status -i "$d/$name.out.data" >"$d/$name.ids" 2>/dev/null
		for f in $cold_bins; do
			id=$(cold_id "$f")
			ids=$(awk -v p="/mnt/$f" '$3 == p && $1 != "-" {print $1}' "$d/$name.ids" | sort -u | tr '\n' ' ')
			for g in $ids; do
				[ "$g" = "$id" ] || bad="$bad; /mnt/$f: $g, readelf: $id"
			done
			case $opt in --convert-mmap3 | --mmap2-buildid-all | --buildid-all)
				[ "$ids" = "$id " ] || bad="$bad; /mnt/$f: '${ids% }' listed, readelf: $id" ;;
			esac
		done
		if [ -n "$bad" ]; then
			echo "# perf inject ${opt:-(plain)}, $in in, $out out: ${bad#; }"
			sed 's/^/#   /' "$d/$name.err" | tail -4
			echo fail >>"$d/failed"
		else
			echo "# perf inject ${opt:-(plain)}, $in in, $out out: exit $got as upstream's, $(grep -c '^[0-9a-f]* .* /mnt/' "$d/$name.ids") /mnt build-ids as readelf's"
		fi
	done
	[ ! -f "$d/failed" ]
}

# pending_answers: what the kernel answers for PENDING MMAP3 records.
# mapexec (tests/perf/mapexec.c) maps fixtures of the cold ext2 disk
# (/mnt) executable without reading them: the kernel has no build-id note
# at mapping time, so their MMAP3 records say PENDING and
# PERF_RECORD_MMAP3_BUILD_ID records answer them, which this requires.
# perf must give each mapping its answer: perf buildid-list --with-status
# lists each file with the build-id and status of fixtures/MANIFEST
# (readelf -n's, on the host), none PENDING; perf record
# --buildid-cache-mapped (the default with --mmap3) keeps each FOUND
# file in the build-id cache; perf inject --convert-mmap3, to a file and
# to a pipe, writes their MMAP2 records with those build-ids, which
# upstream's perf reads without an unknown record.
pending_files="bid20.elf bid16.elf nobid.elf latenote.elf farnote.elf"
pending_answers() {
	scratch /tmp/pending
	sync
	echo 3 >/proc/sys/vm/drop_caches
	set --
	for f in $pending_files; do set -- "$@" "/mnt/$f"; done
	perf record --mmap3 -e task-clock -o "$d/p.data" -- /tests/perf/mapexec "$@" \
		>"$d/record.out" 2>&1 || { sed 's/^/# /' "$d/record.out"; return 1; }
	perf script -i "$d/p.data" --show-mmap-events 2>/dev/null | grep ' /mnt/\|MMAP3_BUILD_ID' |
		sed 's/^ */# /'
	rc=0
	n=$(perf script -i "$d/p.data" --show-mmap-events 2>/dev/null |
		grep -c 'PERF_RECORD_MMAP3 .*<> PENDING\]: r-xp /mnt/')
	echo "# $n MMAP3 records of /mnt files PENDING"
	[ "$n" -gt 0 ] || { echo "# no PENDING record: nothing tested"; rc=1; }
	perf buildid-list -i "$d/p.data" --with-status >"$d/ids" 2>&1
	perf inject --convert-mmap3 -i "$d/p.data" -o "$d/conv.data" || rc=1
	perf inject --convert-mmap3 -i "$d/p.data" -o - >"$d/conv.pipe" || rc=1
	perf-upstream script -i "$d/conv.data" --show-mmap-events >"$d/up-file" 2>&1 || rc=1
	perf-upstream script -i - --show-mmap-events <"$d/conv.pipe" >"$d/up-pipe" 2>&1 || rc=1
	! grep -q 'unknown events' "$d/up-file" "$d/up-pipe" || { echo "# unknown events"; rc=1; }
	for f in $pending_files; do
		want=$(cold_id "$f")
		st=$(awk -v f="$f" '$1 == f {print $3}' /tests/fixtures/MANIFEST)
		[ "$want" = none ] && want=-
		got=$(awk -v p="/mnt/$f" '$3 == p {print $1, $2}' "$d/ids" | sort -u | tr '\n' ' ')
		echo "# buildid-list --with-status: /mnt/$f: ${got:-none}(MANIFEST: $want $st)"
		[ "$got" = "$want $st " ] || rc=1
		if [ "$st" = FOUND ]; then
			[ -e "$HOME/.debug/.build-id/$(echo "$want" | cut -c1-2)/$(echo "$want" | cut -c3-)" ] ||
				{ echo "# /mnt/$f ($want) not in the build-id cache"; rc=1; }
		fi
		for o in file pipe; do
			g=$(sed -n "s|.*PERF_RECORD_MMAP2 .*\]: r-xp /mnt/$f\$|&|p" "$d/up-$o" |
				sed -n 's/.*<\([0-9a-f]*\)>\].*/\1/p' | tr '\n' ' ')
			[ "$st" = FOUND ] && [ "$g" != "$want " ] &&
				{ echo "# upstream perf, converted $o: /mnt/$f: '${g% }', MANIFEST: $want"; rc=1; }
			[ "$st" != FOUND ] && [ -n "$g" ] &&
				{ echo "# upstream perf, converted $o: /mnt/$f has a build-id: $g"; rc=1; }
		done
	done
	return $rc
}

if grep -q '^mmap3 ' /proc/modules; then
	echo "# mmap3 already loaded: skipping the test without the module"
else
	tap perf_mmap3_builtin record_mmap3
	[ ! -x /tests/perf/alpha ] || tap perf_default_mmap2_no_module default_record
	insmod /tests/mmap3.ko || echo "mmap3-guest: error: insmod /tests/mmap3.ko failed"
fi
tap perf_record_mmap3_sh sh /tests/perf/tests/record_mmap3.sh
tool perf_inject_mmap3_sh sh /tests/perf/tests/inject_mmap3.sh
tool perf_build_id_status_sh sh /tests/perf/tests/build_id_status.sh
tap perf_mmap3_report record_mmap3
if [ -x /tests/perf/alpha ]; then
	tool perf_mmap3_replaced_in_place check_replaced inplace
	tool perf_mmap3_replaced_by_rename check_replaced rename
	tool perf_mmap3_synthesized synth_cases
	tool perf_convert_mmap3_upstream convert_upstream
	tap perf_default_mmap2_with_module default_record
fi
tool perf_samply_reader samply_reader
tool perf_inject_options inject_options
tool perf_mmap3_pending pending_answers
tool perf_test_vs_upstream perf_test_vs_upstream
