# SPDX-License-Identifier: GPL-2.0
# The "renamed" item of `make bench` (tests/bench/loss.sh): processes of a
# shared library that a package upgrade replaces by rename while they run.
# DIR/lib/libren.so is the installed library (ren's RUNPATH), DIR/run the
# processes' ready, go and done files (tests/bench/renamed.c), DIR/pids
# one line "GROUP PID INODE" per process: the inode of the libren.so it
# mapped, read from /proc/PID/maps while it runs.
#
#   sh renamed.sh start DIR GROUP N ROUNDS
#	starts N processes of /slow/bin/ren and waits until each has mapped
#	the library and runs main()
#   sh renamed.sh upgrade DIR
#	installs version 2 as a package manager does: written next to the
#	old file, then renamed over it
#   sh renamed.sh session DIR PHASE N ROUNDS
#	what runs under perf record: with PHASE "during", N processes
#	("old") of the installed library, then the upgrade; then N processes
#	("new") of what is installed then; then lets every process of DIR/pids
#	work and waits until all of them are done
# shellcheck shell=dash # busybox sh: local is there
set -e
cmd=${1:?usage: renamed.sh start|upgrade|session DIR ...}
dir=$2
lib=$dir/lib/libren.so

. ./guest-lib.sh

start() {
	local group="$1" n="$2" rounds="$3" i=0 pid ino
	while [ $i -lt "$n" ]; do
		/slow/bin/ren "$dir/run" "$rounds" &
		pid=$!
		while [ ! -e "$dir/run/ready.$pid" ]; do
			running $pid || { echo "renamed.sh: ren $pid exited" >&2; exit 1; }
			usleep 1000
		done
		ino=$(awk -v lib="$lib" '$6 == lib { print $5; exit }' /proc/$pid/maps)
		[ -n "$ino" ] || { echo "renamed.sh: ren $pid has no $lib" >&2; exit 1; }
		echo "$group $pid $ino" >>"$dir/pids"
		i=$((i + 1))
	done
}

# started: the processes of DIR/pids; finished: those that are done.
started() { wc -l <"$dir/pids"; }
finished() {
	local n=0 f
	for f in "$dir"/run/done.*; do
		[ -e "$f" ] && n=$((n + 1))
	done
	echo "$n"
}

upgrade() {
	cp /slow/lib/libren-2.so "$dir/lib/.libren.so.new"
	mv -f "$dir/lib/.libren.so.new" "$lib"
}

case $cmd in
start) start "$3" "$4" "$5" ;;
upgrade) upgrade ;;
session)
	phase=$3
	if [ "$phase" = during ]; then
		start old "$4" "$5"
		upgrade
	fi
	start new "$4" "$5"
	: >"$dir/run/go"
	while [ "$(finished)" -lt "$(started)" ]; do
		usleep 10000
	done
	;;
*) echo "usage: renamed.sh start|upgrade|session DIR ..." >&2; exit 2 ;;
esac
