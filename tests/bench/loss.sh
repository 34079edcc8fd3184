# SPDX-License-Identifier: GPL-2.0
# The items of `make bench` where upstream's build-ids can go missing or be
# wrong (tests/bench/NOTES.md, items 9 to 11), sourced by tests/bench/guest-bench.sh
# on both kernels, on the 1-CPU guest: for each, the perf.data of a session
# under `perf record -a` in each mode of the kernel, and the share of the
# samples in the item's files that perf gives the right build-id, a wrong
# one, or none (tests/bench/perfdata.c, against build-ids from readelf -n on
# the host). Modes:
#   unpatched kernel, upstream's perf (perf-upstream):
#     default   plain `perf record`: 7.3's default, --buildid-mmap (the
#               kernel's build-id in each MMAP2 record; perf reads those of
#               running processes' files by path when it starts, and no
#               build-id at the end of the session);
#     table     --no-buildid-mmap: MMAP2 records without build-ids and the
#               build-id table that perf record writes at the end of the
#               session, read from the files by path then;
#   patched kernel and module, the series' perf:
#     default   plain `perf record` (MMAP2 with build-ids, as upstream's);
#     mmap3     --mmap3.
# Items (bench.conf: ITEMS, and their counts):
#   pressure  workload.sh under memory pressure: a hog leaves PRESSURE_LEAVE_MB
#             of memory available, and a reader streams /slow/data (larger
#             than that) beside the workload;
#   exited    exited.sh: test programs written, run and deleted within the
#             session, before its end;
#   renamed   renamed.sh: a library replaced by rename while old processes
#             run it, the upgrade before the session (phase "before") or in it
#             ("during").
# Uses from guest-bench.sh: KERNEL, BOOT, SLOW, start, want, and sets its
# fail; from guest-lib.sh: running, manifest_id.
# shellcheck shell=dash disable=SC2154,SC2034 # start and fail are guest-bench.sh's

loss_modes() {
	case $KERNEL in
	upstream) echo "default table" ;;
	*) echo "default mmap3" ;;
	esac
}

# loss_perf MODE: the perf record command of MODE on this kernel.
loss_perf() {
	case $KERNEL:$1 in
	upstream:default) echo "/tests/perf/perf-upstream record -a" ;;
	upstream:table) echo "/tests/perf/perf-upstream record -a --no-buildid-mmap" ;;
	*:default) echo "/tests/perf/perf record -a" ;;
	*:mmap3) echo "/tests/perf/perf record -a --mmap3" ;;
	esac
}

# loss_record TAG MODE CMD...: CMD under perf record in MODE, into
# /tmp/perf.data; its "bench ... test=run" line; a fresh module for mmap3.
loss_record() {
	local tag="$1" mode="$2" rc=0
	shift 2
	if [ "$KERNEL" != upstream ]; then
		{ rmmod mmap3 && insmod /tests/mmap3.ko; } || fail=1
	fi
	rm -rf /tmp/perf.data $LOSS_HOME
	mkdir -p $LOSS_HOME
	echo "# $(($(date +%s) - start)) s: $tag: $(loss_perf "$mode") ... -- $*"
	# shellcheck disable=SC2046 # the perf command and its options
	HOME=$LOSS_HOME BENCH_TAG="$tag" ./mmap3_bench run $(loss_perf "$mode") -e cpu-clock -c 2000000 \
		-o /tmp/perf.data -- "$@" >/tmp/loss.out 2>&1 || rc=1
	grep '^bench ' /tmp/loss.out
	grep -v '^bench ' /tmp/loss.out | grep -i 'perf record\|lost\|warn\|error\|usage' | sed 's/^/# /'
	[ "$rc" = 0 ] || { echo "# $tag: failed"; fail=1; }
	return $rc
}

# perf record's build-id cache ($HOME/.debug) of the items' sessions.
LOSS_HOME=/tmp/loss-home

# loss_kept TAG MANIFEST: how many of the build-ids of MANIFEST (perfdata's
# format) perf record put in its build-id cache, the binary that perf
# report needs to resolve the samples of a file gone from its path.
loss_kept() {
	local ids=0 kept=0 id
	awk '{ print $NF }' "$2" | sort -u >/tmp/loss.ids
	while read -r id; do
		ids=$((ids + 1))
		[ -e "$LOSS_HOME/.debug/.build-id/$(echo "$id" | cut -c1-2)/$(echo "$id" | cut -c3-)/elf" ] &&
			kept=$((kept + 1))
	done </tmp/loss.ids
	echo "bench $1 test=kept ids=$ids kept=$kept"
}

# 9. Memory pressure.
loss_pressure() {
	local mode tag hog s dm r0 r1 k0 k1 alive
	[ "$PRESSURE_ITERS" -gt 0 ] || return 0
	dm=$(awk -v m="$SLOW" '$2 == m { sub("/dev/", "", $1); print $1 }' /proc/mounts)
	./mmap3_bench disk delay "$WORKLOAD_DELAY" || fail=1
	echo 0 >/proc/sys/kernel/randomize_va_space	# as the workload item
	sync
	echo 3 >/proc/sys/vm/drop_caches
	BENCH_TAG="kernel=$KERNEL boot=$BOOT item=pressure" ./mmap3_bench hog "$PRESSURE_LEAVE_MB" \
		>/tmp/hog.out &
	hog=$!
	while ! grep -q '^bench ' /tmp/hog.out; do
		running $hog || { echo "# pressure: the hog failed"; cat /tmp/hog.out; fail=1; return; }
		usleep 10000
	done
	cat /tmp/hog.out
	for mode in $(loss_modes); do
		tag="kernel=$KERNEL boot=$BOOT item=pressure mode=$mode"
		sync
		echo 3 >/proc/sys/vm/drop_caches
		./mmap3_bench stream "$SLOW/data" &
		s=$!
		r0=$(awk '$1 == "workingset_refault_file" { print $2 }' /proc/vmstat)
		k0=$(awk '{ print $3 }' "/sys/block/$dm/stat")
		loss_record "$tag" "$mode" sh ./workload.sh "$PRESSURE_ITERS"
		r1=$(awk '$1 == "workingset_refault_file" { print $2 }' /proc/vmstat)
		k1=$(awk '{ print $3 }' "/sys/block/$dm/stat")
		kill $s
		wait $s 2>/dev/null
		alive=0
		running $hog && alive=1
		[ "$alive" = 1 ] || { echo "# pressure: the hog is gone (OOM?)"; fail=1; }
		echo "bench $tag test=pressure refault_file=$((${r1:-0} - ${r0:-0})) read_kib=$(((k1 - k0) / 2)) hog=$alive avail_kb=$(awk '$1 == "MemAvailable:" { print $2 }' /proc/meminfo)"
		BENCH_TAG="$tag" ./perfdata /tmp/perf.data /tests/bench.manifest || fail=1
	done
	kill $hog
	wait $hog 2>/dev/null
	echo 2 >/proc/sys/kernel/randomize_va_space
	./mmap3_bench disk delay 0 || fail=1
}

# 10. Processes that exit before the end of the session.
loss_exited() {
	local mode tag i
	[ "$EXITED_RUNS" -gt 0 ] || return 0
	for mode in $(loss_modes); do
		tag="kernel=$KERNEL boot=$BOOT item=exited mode=$mode"
		rm -rf /tmp/ex
		mkdir -p /tmp/ex
		loss_record "$tag" "$mode" sh ./exited.sh /tmp/ex "$EXITED_RUNS" "$EXITED_VARIANTS" \
			"$EXITED_ROUNDS" || continue
		# Which program each run's file was a copy of.
		: >/tmp/ex.manifest
		i=0
		while [ $i -lt "$EXITED_RUNS" ]; do
			echo "/tmp/ex/test-$i $(manifest_id /slow/bin/ex-$((i % EXITED_VARIANTS)))" >>/tmp/ex.manifest
			i=$((i + 1))
		done
		BENCH_TAG="$tag" ./perfdata /tmp/perf.data /tmp/ex.manifest || fail=1
		loss_kept "$tag" /tmp/ex.manifest
	done
}

# 11. A shared library replaced by rename while old processes run it.
loss_renamed() {
	local phase mode tag d=/tmp/ren group pid ino bid id1 id2 ino1 ino2
	[ "$RENAMED_PROCS" -gt 0 ] || return 0
	id1=$(manifest_id /slow/lib/libren-1.so)
	id2=$(manifest_id /slow/lib/libren-2.so)
	for phase in before during; do
		for mode in $(loss_modes); do
			tag="kernel=$KERNEL boot=$BOOT item=renamed phase=$phase mode=$mode"
			rm -rf $d
			mkdir -p $d/lib $d/run
			: >$d/pids
			cp /slow/lib/libren-1.so $d/lib/libren.so
			ino1=$(stat -c %i $d/lib/libren.so)
			# "pre": running before the session starts (perf synthesizes
			# their mappings from /proc/PID/maps).
			sh ./renamed.sh start $d pre "$RENAMED_PROCS" "$RENAMED_ROUNDS" || fail=1
			[ "$phase" = before ] && sh ./renamed.sh upgrade $d
			if ! loss_record "$tag" "$mode" sh ./renamed.sh session $d "$phase" \
				"$RENAMED_PROCS" "$RENAMED_ROUNDS"; then
				: >$d/run/go	# let the "pre" processes end
				continue
			fi
			ino2=$(stat -c %i $d/lib/libren.so)
			# What each process really mapped: its inode, from /proc/PID/maps.
			: >$d/manifest
			while read -r group pid ino; do
				case $ino in
				"$ino1") bid=$id1 ;;
				"$ino2") bid=$id2 ;;
				*) echo "# renamed: $pid mapped inode $ino, neither $ino1 nor $ino2"; fail=1; continue ;;
				esac
				echo "pid $pid $group $d/lib/libren.so $bid" >>$d/manifest
			done <$d/pids
			sed 's/^/# renamed: /' $d/manifest
			BENCH_TAG="$tag" ./perfdata /tmp/perf.data $d/manifest || fail=1
			loss_kept "$tag" $d/manifest
		done
	done
}

loss_items() {
	local item
	for item in pressure exited renamed; do
		want $item || continue
		if [ "$KERNEL" = upstream ] && [ ! -x /tests/perf/perf-upstream ]; then
			echo "# $item: no /tests/perf/perf-upstream (MMAP3_KERNEL=upstream scripts/perf.sh)"
			fail=1
			continue
		fi
		"loss_$item"
	done
}
