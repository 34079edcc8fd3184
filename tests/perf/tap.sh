# SPDX-License-Identifier: GPL-2.0
# TAP helpers of the host perf tests (old-perf.sh, crafted.sh, convert.sh,
# host-shell.sh); sourced after scripts/lib.sh. $tmp is a scratch
# directory: the sourcing script's, or perfs_setup's.
n=0 failed=0
ok() { n=$((n + 1)); echo "ok $n - $*"; }
not_ok() { n=$((n + 1)); failed=$((failed + 1)); echo "not ok $n - $*"; }
check() { local what=$1; shift; if "$@"; then ok "$what"; else not_ok "$what"; fi; }
# capture NAME CMD...: output in $tmp/NAME.out, exit code in $tmp/NAME.rc;
# never fails.
capture() {
	local name=$1
	shift
	set +e
	"$@" >"$tmp/$name.out" 2>&1
	echo $? >"$tmp/$name.rc"
	set -e
}
rc() { cat "$tmp/$1.rc"; }

# perfs_setup NAME: the three perfs of the host tests, built when missing:
# the series' ($perf), the same with ASan ($asan, whose errors exit 99)
# and an unpatched one ($old); $conv, the converter of tests/perf; a
# scratch $tmp (/tmp/mmap3-NAME.*, removed at exit, kept with KEEP=1 in
# the environment, to look into a failure) holding $HOME.
perfs_setup() {
	"$MMAP3_ROOT/scripts/perf.sh"
	"$MMAP3_ROOT/scripts/perf.sh" --asan
	MMAP3_KERNEL=upstream "$MMAP3_ROOT/scripts/perf.sh"
	perf=$PERF_BUILD/perf
	asan=$PERF_ASAN_BUILD/perf
	old=$PERF_UPSTREAM_BUILD/perf
	conv=$MMAP3_ROOT/tests/perf/mmap3-perf-data.py
	tmp=$(mktemp -d "/tmp/mmap3-$1.XXXXXX")
	[ -n "${KEEP:-}" ] || trap 'rm -rf "$tmp"' EXIT
	export HOME=$tmp/home
	mkdir -p "$HOME"
	# Leaks at exit are not what the tests look for.
	export ASAN_OPTIONS=detect_leaks=0:exitcode=99
}

# host_record WHAT COMMAND [FILE]: $perf record --buildid-mmap of sh -c
# COMMAND on the host, into FILE (default $tmp/mmap2.data); skips the
# whole test (exit 4) when the host cannot record. perf and COMMAND run
# on one CPU, the first this shell may use: COMMAND's records then come in
# one CPU's buffer, so the file has them in the order they were made,
# which the mangling of mmap3-perf-data.py (its first record of a file)
# relies on.
host_record() {
	local cpu out=${3:-$tmp/mmap2.data}
	cpu=$(taskset -cp $$ | sed 's/.*: *//; s/[-,].*//')
	log "recording $1 on the host (CPU $cpu) with $perf record --buildid-mmap"
	if ! taskset -c "$cpu" "$perf" record --buildid-mmap -e task-clock -o "$out" -- \
		sh -c "$2" >"$tmp/record.out" 2>&1; then
		sed 's/^/# /' "$tmp/record.out" | head -5
		echo "1..0 # SKIP cannot record on this host (perf_event_paranoid=$(cat /proc/sys/kernel/perf_event_paranoid))"
		exit 4
	fi
}

# in_place_session: the session of issue 16, recorded on the host:
# tests/perf/spin.c built as $tmp/alpha and $tmp/beta (one layout, two
# build-ids, $bid_alpha and $bid_beta, both in perf's build-id cache, as
# perf record --mmap3 keeps them), run in turn from one path, $p, rewritten
# in place between, under $perf record --buildid-mmap into
# $tmp/mmap2.data (host_record), recorded again (up to 3 times) when the
# host kernel left a build-id out of its MMAP2 records of $p.
in_place_session() {
	local fn
	for fn in alpha beta; do
		gcc -O1 -static -DSPIN_FN="$fn" -o "$tmp/$fn" "$MMAP3_ROOT/tests/perf/spin.c"
	done
	p=$tmp/p
	bid_alpha=$("$perf" buildid-list -i "$tmp/alpha")
	bid_beta=$("$perf" buildid-list -i "$tmp/beta")
	# The session's input is the host kernel's MMAP2 records of $p, each
	# with its run's build-id, which the kernel reads without faulting,
	# from the page cache: a session whose records lack one is recorded
	# again. (The failures once put down to this came from the records'
	# order in the file: see host_record.)
	local try
	for try in 1 2 3; do
		: >"$p"
		chmod 755 "$p"
		host_record "the in-place session" "cat $tmp/alpha > $p; $p 0.3; cat $tmp/beta > $p; $p 0.3"
		[ "$("$perf" script -i "$tmp/mmap2.data" --show-mmap-events 2>/dev/null |
			sed -n "s|.*PERF_RECORD_MMAP2 .*<\([0-9a-f]*\)>\]: r-xp $p\$|\1|p" | tr '\n' ' ')" = \
			"$bid_alpha $bid_beta " ] && break
		echo "# the host kernel's MMAP2 records of $p lack a build-id (try $try of 3)"
	done
	"$perf" buildid-cache -a "$tmp/alpha"
	"$perf" buildid-cache -a "$tmp/beta"
}

# exec_runs FILE: the pids of the session's two runs of $p, in exec order,
# from the COMM records in FILE ('perf script --show-task-events').
exec_runs() {
	sed -n 's/.*PERF_RECORD_COMM exec: p:\([0-9]*\)\/.*/\1/p' "$1" | tr '\n' ' '
}

# shares RUNS FILE: "<alpha's run in alpha> <beta's run in beta>", percent,
# from 'perf report --sort pid,sym -n' in FILE; RUNS as exec_runs gives them.
shares() {
	awk -v runs="$1" 'BEGIN { split(runs, r, " ") }
		$1 ~ /%$/ && $3 ~ /:p$/ {
			split($3, a, ":"); pid = a[1]
			n[pid] += $2; if ($5 == "alpha") al[pid] += $2; if ($5 == "beta") be[pid] += $2
		} END {
			if (!n[r[1]] || !n[r[2]]) { print "0 0"; exit }
			printf "%.1f %.1f\n", 100 * al[r[1]] / n[r[1]], 100 * be[r[2]] / n[r[2]]
		}' "$2"
}

# sane NAME: no signal (129..159), no ASan exit (99) or report.
sane() {
	local r
	r=$(rc "$1")
	[ "$r" != 99 ] && { [ "$r" -le 128 ] || [ "$r" -ge 160 ]; } &&
		! grep -qE 'AddressSanitizer|runtime error|Segmentation fault|Aborted' "$tmp/$1.out"
}

# asan_report NAME...: the first ASan report in each $tmp/NAME.out, as
# TAP comments; false, to end a check that failed.
asan_report() {
	local n
	for n; do
		grep -m1 -A4 "ERROR: AddressSanitizer" "$tmp/$n.out" | sed "s/^/#   $n: /" || true
	done
	false
}

# session_files DIR: the kinds of file the series writes, from a short
# session recorded on the host (host_record, $tmp/mmap2.data): its MMAP2
# records turned into MMAP3 ones (mmap3-perf-data.py --stat-ids), what
# perf record --mmap3 writes, as a file (DIR/le-file.data) and as a pipe
# (le-pipe: perf inject -o -); perf inject --convert-mmap3 of it, MMAP2
# records and HEADER_MMAP3_STATUS, as a file and a pipe (le-conv-file,
# le-conv-pipe); and those four as a big-endian machine writes them
# (tests/perf/mmap3-fuzz.py rewrite --big-endian: be-file, be-pipe,
# be-conv-file, be-conv-pipe).
session_files() {
	local d=$1 fuzz=$MMAP3_ROOT/tests/perf/mmap3-fuzz.py k
	host_record "a short session" "ls / >/dev/null; sleep 0.05"
	"$conv" --stat-ids "$tmp/mmap2.data" "$d/le-file.data" | sed 's/^/# /'
	"$perf" inject -i "$d/le-file.data" -o - >"$d/le-pipe.data"
	"$perf" inject --convert-mmap3 -i "$d/le-file.data" -o "$d/le-conv-file.data"
	"$perf" inject --convert-mmap3 -i "$d/le-file.data" -o - >"$d/le-conv-pipe.data"
	for k in file conv-file; do
		"$fuzz" rewrite --big-endian "$d/le-$k.data" "$d/be-$k.data" | sed 's/^/# /'
		"$fuzz" rewrite --big-endian --pipe "$d/le-$k.data" "$d/be-${k%file}pipe.data" |
			sed 's/^/# /'
	done
}
