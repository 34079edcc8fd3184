#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Build perf (tools/perf) into the cache:
#   $MMAP3_CACHE/perf-build/perf     perf with the MMAP3 series, from $KSRC
#                                    (patches/*.patch, then patches/perf/*.patch,
#                                    applied by scripts/kernel.sh);
#   $MMAP3_CACHE/perf-build/guest/   a copy to put in the guest: perf, lib/ with
#                                    the shared libraries it needs besides
#                                    libc and the loader (perf finds them
#                                    through its RUNPATH, $ORIGIN/lib), and
#                                    tests/ with the perf test scripts of MMAP3.
# With MMAP3_KERNEL=upstream: perf without any series, from a worktree of
# mmap3-base ($MMAP3_CACHE/linux-upstream, as scripts/kernel.sh makes it),
# into $MMAP3_CACHE/perf-upstream: what a user's older perf does.
#
# Only libelf (build-ids, symbols) and zlib, which libelf needs anyway, are
# linked in; everything optional (python, perl, libtraceevent, libbpf,
# libunwind, libdw, slang, libLLVM, ...) is off, so the guest needs three
# small libraries beside libc. Skipped when the inputs (the patch series and
# this script) have not changed since the last build.
. "$(dirname "$0")/lib.sh"

shopt -s nullglob
case "$MMAP3_KERNEL" in
upstream)
	src=$UPSTREAM_SRC
	out=$MMAP3_CACHE/perf-upstream
	inputs=("$0" "$MMAP3_ROOT/scripts/lib.sh")
	;;
*)
	src=$KSRC
	out=$MMAP3_CACHE/perf-build
	inputs=("$MMAP3_ROOT"/patches/*.patch "$MMAP3_ROOT"/patches/perf/*.patch "$0"
		"$MMAP3_ROOT/scripts/lib.sh")
	;;
esac
key=$(hash_of "${inputs[@]}")
if [ "$(cat "$out/.mmap3-key" 2>/dev/null)" = "$key" ] && [ -x "$out/perf" ]; then
	log "perf is up to date: $out/perf"
	exit 0
fi

"$MMAP3_ROOT/scripts/deps.sh"

if [ "$MMAP3_KERNEL" = upstream ]; then
	upstream_worktree
else
	[ -f "$src/tools/perf/Makefile.perf" ] || die "no kernel tree at $src: run scripts/kernel.sh"
	grep -q 'struct perf_record_mmap3 {' "$src/tools/lib/perf/include/perf/event.h" ||
		die "$src has no perf MMAP3 series: scripts/kernel.sh must apply patches/perf/*.patch"
fi

mkdir -p "$out"
# Relink in any case: make does not notice a change of LDFLAGS alone.
rm -f "$out/perf"
log "building perf from $src into $out (-j$JOBS, about a minute the first time)"
start=$SECONDS
# RUNPATH $ORIGIN/lib: the guest copy finds its libraries next to it. The
# \$$ gets through make and the shell as a literal $.
if ! LDFLAGS='-Wl,-rpath,\$$ORIGIN/lib' \
	make -C "$src/tools/perf" O="$out" "${PERF_MAKE_FLAGS[@]}" -j"$JOBS" \
	>"$out/build.log" 2>&1; then
	grep -E 'error|Error' "$out/build.log" | head -20 >&2 || true
	die "the perf build failed (log: $out/build.log)"
fi
[ -x "$out/perf" ] || die "no perf binary after the build (log: $out/build.log)"
log "built perf in $((SECONDS - start)) s: $("$out/perf" --version)"

# The guest copy: perf and the libraries it links to, except libc and the
# loader, which the guest has.
guest=$out/guest
rm -rf "$guest"
mkdir -p "$guest/lib" "$guest/tests"
cp "$out/perf" "$guest/perf"
libs=()
while read -r lib; do
	case "$lib" in
	*/libc.so.*|*/ld-linux*) ;;
	/*) cp -L "$lib" "$guest/lib/" && libs+=("${lib##*/}") ;;
	esac
done < <(ldd "$out/perf" | awk '$2 == "=>" { print $3 } $1 ~ /^\// { print $1 }')
for t in record_mmap3.sh; do
	t=$src/tools/perf/tests/shell/$t
	[ ! -f "$t" ] || cp "$t" "$guest/tests/"
done
log "guest copy in $guest: perf, lib/ (${libs[*]}), tests/ ($(ls "$guest/tests" | tr '\n' ' '))"
echo "$key" >"$out/.mmap3-key"
