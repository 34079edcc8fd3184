# SPDX-License-Identifier: GPL-2.0
# The real workload of `make bench` (tests/bench/guest-bench.sh): a build-like
# shell loop over dynamic programs on the benchmark's disk (/slow, see
# tests/bench/bw.c). For each of N "sources": bw-cc compiles it, bw-as
# assembles the result; every 10, bw-ld links the last 10 objects.
# 2.1 execs per iteration, each of a dynamic binary whose loader and
# libraries (libbw.so, libc) are on /slow too.
n=${1:?usage: workload.sh ITERATIONS}
bin=/slow/bin
out=/tmp/wl
set -e
rm -rf $out
mkdir -p $out
# shellcheck disable=SC2046 # the file names have no spaces
set -- $(ls /slow/src/*)
i=0
objs=
while [ $i -lt "$n" ]; do
	k=$((i % $# + 1))
	eval "src=\${$k}"
	$bin/bw-cc $out/$i.s "$src"
	$bin/bw-as $out/$i.o $out/$i.s
	objs="$objs $out/$i.o"
	i=$((i + 1))
	if [ $((i % 10)) = 0 ]; then
		# shellcheck disable=SC2086 # a list of files
		$bin/bw-ld $out/a$i.out $objs
		objs=
		rm -f $out/*.s $out/*.o
	fi
done
