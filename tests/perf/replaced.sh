# SPDX-License-Identifier: GPL-2.0
# Sourced by the guest scripts (tests/perf/guest-perf.sh, demo/demo.sh),
# from /tests/perf/replaced.sh; needs /tests/perf/alpha and beta
# (tests/perf/spin.c, built by scripts/guest.sh).
#
# The session of issue 16: two static programs from one source, alpha and
# beta (tests/perf/spin.c, same layout, functions alpha and beta, different
# build-ids), run one after the other from one path, /tmp/p, which is
# rewritten in place (same inode) or replaced by rename between the runs:
#
#   perf record MODE -e task-clock -- sh -c 'cat alpha > /tmp/p; /tmp/p;
#                                         cat beta > /tmp/p; /tmp/p'
#
# replaced PERF MODE HOW prints "A B A' B'": the percentage of the first
# run's user-space samples that perf report puts in alpha (A), of the second
# run's in beta (B), and the wrong way round: of the first run's in beta
# (A'), of the second's in alpha (B'); computed from 'perf report --sort
# pid,sym -n'. The rest of a run's user-space samples are unresolved
# addresses or other functions; its kernel samples (exec, exit, page faults:
# 2% of a run on the test kernel, up to 16% on the debug kernel) say nothing
# of which binary was mapped, and are left out. The
# runs are told apart by their pids, in the order of their exec (COMM
# records): not by pid order, as sh runs the last command in its own
# process. Each session has a fresh HOME, so an empty build-id cache: what
# perf report finds there, perf record put. perf report's output is left
# in /tmp/report-TAG.out, the build-ids perf buildid-list gives for /tmp/p
# in /tmp/buildids-TAG.out, TAG being HOW-PERF followed by MODE without
# blanks and dashes (e.g. inplace-perfmmap3).
replaced() {
	rperf=$1 mode=$2 how=$3
	tag=$how-${rperf##*/}$(echo "$mode" | tr -d ' -')
	data=/tmp/replaced-$tag.data
	export HOME=/tmp/home-$tag
	rm -rf "$HOME" /tmp/p /tmp/q "$data"
	mkdir -p "$HOME"
	: >/tmp/p
	chmod 755 /tmp/p
	case $how in
	inplace) cmd='cat /tests/perf/alpha > /tmp/p; /tmp/p; cat /tests/perf/beta > /tmp/p; /tmp/p' ;;
	rename) cmd='cat /tests/perf/alpha > /tmp/p; /tmp/p; cat /tests/perf/beta > /tmp/q; chmod 755 /tmp/q; mv /tmp/q /tmp/p; /tmp/p' ;;
	esac
	# shellcheck disable=SC2086 # MODE is zero or more options
	if ! "$rperf" record $mode -e task-clock -o "$data" -- sh -c "$cmd" >"/tmp/record-$tag.out" 2>&1; then
		sed 's/^/# /' "/tmp/record-$tag.out" >&2
		echo "- - - -"
		return 1
	fi
	"$rperf" report -i "$data" --stdio --sort pid,sym -n 2>/dev/null >"/tmp/report-$tag.out"
	"$rperf" buildid-list -i "$data" 2>/dev/null | awk '$2 == "/tmp/p" { print $1 }' >"/tmp/buildids-$tag.out"
	# "p  255  12.345678: PERF_RECORD_COMM exec: p:255/255", in time order
	runs=$("$rperf" script -i "$data" --show-task-events 2>/dev/null |
		sed -n 's/.*PERF_RECORD_COMM exec: p:\([0-9]*\)\/.*/\1/p' | tr '\n' ' ')
	# Lines: "  49.81%  1199  17788:p  [.] beta"
	awk -v runs="$runs" 'BEGIN { split(runs, r, " ") }
	$1 ~ /%$/ && $3 ~ /:p$/ && $4 == "[.]" {
		split($3, a, ":"); pid = a[1]
		n[pid] += $2; if ($5 == "alpha") al[pid] += $2; if ($5 == "beta") be[pid] += $2
	} END {
		if (!n[r[1]] || !n[r[2]]) { print "- - - -"; exit }
		printf "%.1f %.1f %.1f %.1f\n", 100 * al[r[1]] / n[r[1]], 100 * be[r[2]] / n[r[2]],
			100 * be[r[1]] / n[r[1]], 100 * al[r[2]] / n[r[2]]
	}' "/tmp/report-$tag.out"
}

