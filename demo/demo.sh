# SPDX-License-Identifier: GPL-2.0
# The guest script of `make demo`: what upstream's MMAP2 with
# attr.build_id and MMAP3 say of the same mappings (mmap3_demo), next to
# what readelf -n said on the host, for programs and files on a cold block
# device (ext2 on a loop device, page cache dropped): the cases of the
# series' cover letter. First with the kernel's built-in lookup, then, for
# the perf part, with the module loaded.

demo() {
	name=$1
	shift
	echo "mmap3-test: begin $name"
	echo 3 >/proc/sys/vm/drop_caches
	echo "\$ mmap3_demo $*"
	./mmap3_demo "$@"
	echo "mmap3-test: end $name rc=$?"
}

ELF="/mnt/bid20.elf /mnt/exec20.elf /mnt/latenote.elf /mnt/farnote.elf /mnt/dynamic.elf /mnt/libc.so.6"
# exec and ld.so read the ELF headers just before they map: the note is in
# the page cache for MMAP2 too, cold or not.
demo exec-static exec /mnt/busybox true
demo exec-dynamic exec /mnt/ld-linux-x86-64.so.2 --library-path /mnt /mnt/dynamic.elf
# Mapped without being read first: MMAP2's no-fault parser finds no page,
# MMAP3 says PENDING and the task reads the file before it returns.
demo map map $ELF
# Read, paged out (MADV_PAGEOUT), then made executable: the same.
demo mprotect mprotect $ELF
# No build-id, and why: MMAP2 cannot tell these from a cold file.
demo statuses map /mnt/nobid.elf /mnt/notelf.txt /mnt/bad-descsz21.elf /mnt/bad-truncated.elf

insmod /tests/mmap3.ko

# perf: a program whose build-id note sits 2 MiB into the file (past the
# readahead of exec's header read), on the cold disk, recorded once with
# --mmap3 and once with upstream's --buildid-mmap; then the binary is
# overwritten with another program, and perf must still name the right one.
[ -x perf/perf ] || exit 0
export PATH=/tests/perf:$PATH HOME=/tmp/perf-home
mkdir -p "$HOME"
bin=/mnt/farnote.elf
want=$(sed -n 's/^farnote.elf \([0-9a-f]*\) .*/\1/p' fixtures/MANIFEST)
echo "mmap3-test: begin perf"
for mode in mmap3 buildid-mmap; do
	echo 3 >/proc/sys/vm/drop_caches
	perf record --"$mode" -e task-clock -o "/tmp/$mode.data" -- "$bin" 2>&1 |
		grep -v 'Captured and wrote\|Woken up'
done
cat fixtures/dynamic.elf >"$bin"	# replaced in place after the recordings
echo
echo "\$ perf script --show-mmap-events | grep $bin"
for mode in mmap3 buildid-mmap; do
	echo "[perf record --$mode]"
	perf script -i "/tmp/$mode.data" --show-mmap-events 2>/dev/null | grep -F "$bin" | sed 's/^ *//'
done
echo
echo "\$ perf report --sort dso,sym (after $bin was overwritten)"
for mode in mmap3 buildid-mmap; do
	echo "[perf record --$mode]"
	perf report -i "/tmp/$mode.data" --stdio --sort dso,sym 2>/dev/null | grep '%' | head -3
done
echo
printf '%-24s %-42s %-42s %s\n' "binary" "readelf -n (host)" "perf --mmap3" "perf --buildid-mmap"
got3=$(perf buildid-list -i /tmp/mmap3.data --with-hits 2>/dev/null | awk -v b="$bin" '$2 == b { print $1 }')
got2=$(perf buildid-list -i /tmp/buildid-mmap.data --with-hits 2>/dev/null | awk -v b="$bin" '$2 == b { print $1 }')
printf '%-24s %-42s %-42s %s\n' "$bin" "$want" "${got3:--}" "${got2:--}"
[ "$got3" = "$want" ]
echo "mmap3-test: end perf rc=$?"

# perf: the session of issue 16. Two programs built from one source, alpha
# and beta (same layout, different build-ids), run one after the other
# from /tmp/p, which is rewritten in place or replaced by rename between
# the runs; recorded with perf record (plain), upstream's perf record
# --buildid-mmap (MMAP2 with build-ids) and perf record --mmap3. Where
# does perf report put each run's samples, and which build-ids does perf
# buildid-list give for /tmp/p?
[ -x perf/alpha ] || exit 0
. /tests/perf/replaced.sh
# run_share PCT_OWN PCT_OTHER OWN OTHER: "98% alpha", "96% beta (wrong)"...
run_share() {
	awk -v a="$1" -v b="$2" -v own="$3" -v other="$4" 'BEGIN {
		if (a == "-") { print "no data"; exit }
		if (a >= 50) printf "%.0f%% %s\n", a, own
		else if (b >= 50) printf "%.0f%% %s (wrong)\n", b, other
		else printf "%.0f%% unresolved\n", 100 - a - b
	}'
}
echo "mmap3-test: begin perf-replaced"
echo "\$ perf record MODE -e task-clock -- sh -c 'cat alpha > /tmp/p; /tmp/p; cat beta > /tmp/p; /tmp/p'"
echo "  (by rename: cat beta > /tmp/q; mv /tmp/q /tmp/p)"
echo "alpha $(perf buildid-list -i perf/alpha), beta $(perf buildid-list -i perf/beta)"
echo
printf '%-9s %-30s %-22s %-22s %s\n' "/tmp/p" "perf record" "alpha's run" "beta's run" "build-ids of /tmp/p"
ok=1
for how in inplace rename; do
	for m in "perf" "perf-upstream --buildid-mmap" "perf --mmap3"; do
		# shellcheck disable=SC2086 # the perf and its option
		set -- $m
		rp=$1
		shift
		mode="$*"
		[ -x "perf/$rp" ] || continue
		# shellcheck disable=SC2046 # four numbers
		set -- $(replaced "/tests/perf/$rp" "$mode" "$how")
		tag=$how-$rp$(echo "$mode" | tr -d ' -')
		ids=$(sed 's/^\(......\).*/\1../' "/tmp/buildids-$tag.out" 2>/dev/null | tr '\n' ' ')
		case $ids in
		*"$(perf buildid-list -i perf/alpha | cut -c1-6)"*"$(perf buildid-list -i perf/beta | cut -c1-6)"* | \
		*"$(perf buildid-list -i perf/beta | cut -c1-6)"*"$(perf buildid-list -i perf/alpha | cut -c1-6)"*) ids="both: $ids" ;;
		esac
		printf '%-9s %-30s %-22s %-22s %s\n' "$how" "$rp ${mode:-(plain)}" \
			"$(run_share "$1" "$3" alpha beta)" "$(run_share "$2" "$4" beta alpha)" "${ids:--}"
		if [ "$rp $mode" = "perf --mmap3" ]; then
			awk -v a="$1" -v b="$2" 'BEGIN { exit !(a >= 90 && b >= 90) }' || ok=0
		fi
	done
done
echo
echo "perf report --sort pid,sym of perf record --mmap3, rewritten in place:"
grep -v '^#' /tmp/report-inplace-perfmmap3.out | grep '%' | head -4
[ "$ok" = 1 ]
echo "mmap3-test: end perf-replaced rc=$?"
