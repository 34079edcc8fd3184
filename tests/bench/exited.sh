# SPDX-License-Identifier: GPL-2.0
# The session of the "exited" item of `make bench` (tests/bench/loss.sh),
# run under perf record: what a build's tests do. RUNS times, a test
# program is written into DIR (a copy of /slow/bin/ex-K, K = run modulo
# VARIANTS: each its own build-id), run for ROUNDS rounds of work, and
# deleted once it has exited, before perf record's end-of-session pass.
#
#   sh exited.sh DIR RUNS VARIANTS ROUNDS
# shellcheck shell=sh
dir=${1:?usage: exited.sh DIR RUNS VARIANTS ROUNDS}
runs=$2
variants=$3
rounds=$4
set -e
i=0
while [ $i -lt "$runs" ]; do
	cp /slow/bin/ex-$((i % variants)) "$dir/test-$i"
	"$dir/test-$i" "$rounds"
	rm -f "$dir/test-$i"
	i=$((i + 1))
done
