#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Build perf (tools/perf) for this checkout, one for both kernels: from the
# tree of $PERF_KVER, the version the perf series is written against
# (scripts/lib.sh), whatever MMAP3_KVER says:
#   $PERF_SRC ($MMAP3_WORK/linux-perf)   the source: a worktree of that
#                                        tree at mmap3-base plus this
#                                        checkout's kernel series of that
#                                        version and patches/perf/*.patch
#                                        (whose first patch syncs
#                                        tools/include's copy of the uapi
#                                        header, as upstream's perf does),
#                                        one commit per patch;
#   $PERF_BUILD/perf                     perf built from it;
#   $PERF_BUILD/guest/                   a copy to put in the guest: perf,
#                                        lib/ with the shared libraries it
#                                        needs besides libc and the loader
#                                        (perf finds them through its
#                                        RUNPATH, $ORIGIN/lib), readelf (for
#                                        the perf test) and its libraries,
#                                        and tests/ with the perf test
#                                        scripts of MMAP3 (record_mmap3.sh,
#                                        inject_mmap3.sh,
#                                        build_id_status.sh).
#   scripts/perf.sh --asan               the same perf built with
#                                        AddressSanitizer, into
#                                        $PERF_ASAN_BUILD (host tests only).
# With MMAP3_KERNEL=upstream: perf without any series, from the worktree of
# mmap3-base ($(upstream_src $PERF_KVER)), into $PERF_UPSTREAM_BUILD: what
# a user's older perf does.
#
# The shared kernel tree and the kernel build do not depend on the perf
# series: scripts/kernel.sh applies only the kernel series there, and a change
# of a perf patch rebuilds perf only. The commits of $PERF_SRC are made with
# git apply --cached on a scratch index, with fixed dates, so that the same
# patches give the same commits, and checking out new ones touches only
# the files that differ from the last build: make rebuilds what they touch.
# Do not edit $PERF_SRC: it is checked out again whenever the inputs change.
#
# Linked in: libelf (build-ids, symbols), zlib, which libelf needs anyway,
# libtraceevent (tracepoints' fields: perf script of mmap3:build_id) and
# libbpf, built from the tree (PERF_MAKE_FLAGS in scripts/lib.sh says why
# these and not the rest: python, perl, libunwind, libdw, slang, libLLVM,
# the BPF skeletons, ... are off), so the guest needs a few small libraries
# beside libc. Skipped when the inputs (the patch series, this script and
# scripts/lib.sh) have not changed since the last build.
. "$(dirname "$0")/lib.sh"

asan=0
case "${1:-}" in
--asan) asan=1 ;;
"") ;;
*) die "usage: scripts/perf.sh [--asan]" ;;
esac

perf_ksrc=$(ksrc "$PERF_KVER")
mapfile -t kpatches < <(kseries "$PERF_KVER")
mapfile -t ppatches < <(series "$MMAP3_ROOT/patches/perf")
case "$MMAP3_KERNEL" in
upstream)
	[ "$asan" = 0 ] || die "--asan builds the patched perf only"
	src=$(upstream_src "$PERF_KVER")
	out=$PERF_UPSTREAM_BUILD
	inputs=("$0" "$MMAP3_ROOT/scripts/lib.sh")
	;;
*)
	src=$PERF_SRC
	out=$PERF_BUILD
	[ "$asan" = 0 ] || out=$PERF_ASAN_BUILD
	inputs=("${kpatches[@]}" "${ppatches[@]}" "$0" "$MMAP3_ROOT/scripts/lib.sh")
	;;
esac
key=$(hash_of "${inputs[@]}")
if [ "$(cat "$out/.mmap3-key" 2>/dev/null)" = "$key" ] && [ -x "$out/perf" ]; then
	log "perf is up to date: $out/perf"
	exit 0
fi

"$MMAP3_ROOT/scripts/deps.sh"
"$MMAP3_ROOT/scripts/kernel-source.sh" "$PERF_KVER"

# perf_commit: the commit of mmap3-base + the kernel series + the perf
# series, made without a worktree (a scratch index), printed.
perf_commit() {
	local idx head p tree
	idx=$(mktemp "$MMAP3_WORK/perf-index.XXXXXX")
	head=$(git -C "$perf_ksrc" rev-parse mmap3-base)
	GIT_INDEX_FILE=$idx git -C "$perf_ksrc" read-tree "$head"
	for p in "${kpatches[@]}" "${ppatches[@]}"; do
		GIT_INDEX_FILE=$idx git -C "$perf_ksrc" apply --cached --whitespace=nowarn "$p" ||
			{ rm -f "$idx"; die "${p#"$MMAP3_ROOT"/} does not apply (onto mmap3-base and the patches before it)"; }
		tree=$(GIT_INDEX_FILE=$idx git -C "$perf_ksrc" write-tree)
		head=$(GIT_AUTHOR_NAME=mmap3 GIT_AUTHOR_EMAIL=mmap3@localhost \
			GIT_COMMITTER_NAME=mmap3 GIT_COMMITTER_EMAIL=mmap3@localhost \
			GIT_AUTHOR_DATE='@0 +0000' GIT_COMMITTER_DATE='@0 +0000' \
			git -C "$perf_ksrc" commit-tree "$tree" -p "$head" -m "${p##*/}")
	done
	rm -f "$idx"
	echo "$head"
}

if [ "$MMAP3_KERNEL" = upstream ]; then
	upstream_worktree "$PERF_KVER"
else
	mkdir -p "$MMAP3_WORK"
	commit=$(perf_commit)
	if [ "$(git -C "$PERF_SRC" rev-parse --path-format=absolute --git-common-dir 2>/dev/null)" != \
	     "$(git -C "$perf_ksrc" rev-parse --path-format=absolute --git-common-dir)" ]; then
		log "making the perf tree $PERF_SRC (a worktree of $perf_ksrc)"
		rm -rf "$PERF_SRC"
		git -C "$perf_ksrc" worktree prune
		git -C "$perf_ksrc" worktree add -q --detach "$PERF_SRC" "$commit"
	elif [ "$(git -C "$PERF_SRC" rev-parse HEAD)" != "$commit" ] ||
	     [ -n "$(git -C "$PERF_SRC" status --porcelain --untracked-files=no)" ]; then
		log "checking out the perf tree $PERF_SRC: mmap3-base + ${#kpatches[@]} kernel + ${#ppatches[@]} perf patches"
		git -C "$PERF_SRC" checkout -q -f --detach "$commit"
	fi
	grep -q 'struct perf_record_mmap3 {' "$src/tools/lib/perf/include/perf/event.h" ||
		die "$src has no perf MMAP3 series (patches/perf/ is empty?)"
fi

mkdir -p "$out"
# Relink in any case: make does not notice a change of LDFLAGS alone.
rm -f "$out/perf"
# RUNPATH $ORIGIN/lib: the guest copy finds its libraries next to it. The
# \$$ gets through make and the shell as a literal $.
ldflags='-Wl,-rpath,\$$ORIGIN/lib'
extra=()
if [ "$asan" = 1 ]; then
	# perf links with $(CC) $(CFLAGS) $(LDFLAGS): the flag reaches both.
	extra=(EXTRA_CFLAGS='-fsanitize=address -fno-omit-frame-pointer -g')
	ldflags+=' -fsanitize=address'
fi
log "building perf$([ "$asan" = 0 ] || echo ' with ASan') from $src into $out (-j$JOBS, a few minutes the first time)"
start=$SECONDS
if ! LDFLAGS=$ldflags make -C "$src/tools/perf" O="$out" "${PERF_MAKE_FLAGS[@]}" \
	"${extra[@]}" -j"$JOBS" >"$out/build.log" 2>&1; then
	grep -E 'error|Error' "$out/build.log" | head -20 >&2 || true
	die "the perf build failed (log: $out/build.log)"
fi
[ -x "$out/perf" ] || die "no perf binary after the build (log: $out/build.log)"
log "built perf in $((SECONDS - start)) s: $("$out/perf" --version)"

if [ "$asan" = 0 ]; then
	# The guest copy: perf and the libraries it links to, except libc and
	# the loader, which the guest has.
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
	for t in record_mmap3.sh inject_mmap3.sh build_id_status.sh; do
		t=$src/tools/perf/tests/shell/$t
		[ ! -f "$t" ] || cp "$t" "$guest/tests/"
	done
	# readelf, which the perf test compares build-ids with, and its
	# libraries, behind a wrapper that points the loader at them.
	cp /usr/bin/readelf "$guest/lib/readelf"
	while read -r lib; do
		case "$lib" in
		*/libc.so.*|*/ld-linux*) ;;
		/*) [ -f "$guest/lib/${lib##*/}" ] || cp -L "$lib" "$guest/lib/" ;;
		esac
	done < <(ldd /usr/bin/readelf | awk '$2 == "=>" { print $3 }')
	printf '%s\n' '#!/bin/sh' \
		'lib=$(dirname "$0")/lib' \
		'LD_LIBRARY_PATH=$lib exec "$lib/readelf" "$@"' >"$guest/readelf"
	chmod 755 "$guest/readelf"
	log "guest copy in $guest: perf, readelf, lib/ (${libs[*]} and readelf's), tests/ ($(ls "$guest/tests" | tr '\n' ' '))"
fi
echo "$key" >"$out/.mmap3-key"
