#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# `make test`: every test of the project, and one summary line.
# On the kernel of $MMAP3_KVER when it is given; as typed (`make test`),
# everything on 7.3 and, on 6.12 LTS, the module's build, its dkms build,
# and the whole kselftest suite (which holds the ABI test without a
# provider and the module's load and unload), the kselftest way:
#   1. the patched kernels (scripts/kernel.sh; cached),
#   2. checkpatch.pl --strict on the kernel series, its 6.12 backport and
#      the perf series (scripts/checkpatch.sh), the
#      module with CLIPPY=1, rustfmt (scripts/module.sh), for each kernel,
#   3. the module built and installed by dkms for each kernel
#      (scripts/dkms-test.sh),
#      perf with the MMAP3 series (scripts/perf.sh), how an unpatched
#      perf reads MMAP3 records (tests/perf/old-perf.sh, on the host), and
#      crafted MMAP3 records read by the patched perf built with ASan
#      (tests/perf/crafted.sh, on the host), the series' perf shell tests
#      that need a compiler, with an unpatched and the patched perf
#      (tests/perf/host-shell.sh, on the host), perf inject
#      --convert-mmap3 read by the patched perf and an unpatched one,
#      cross-endian and damaged (tests/perf/convert.sh, on the host), and
#      of recordings of MMAP2 records and the trace event mmap3:build_id
#      (tests/perf/event-convert.sh, on the host), the build-id statuses
#      of samples and DSOs and perf's C test of MMAP3 records
#      (tests/perf/status.sh, on the host), every perf command and option
#      documented for MMAP3 data on every kind of file the series writes,
#      exiting as upstream's perf does on MMAP2 data, with readelf's
#      build-ids (tests/perf/matrix.sh, on the host), the benchmark's programs
#      (scripts/bench-build.sh),
#   4. host tests of the build-id parser and the cache (cargo test in
#      buildid/),
#   5. the selftests in QEMU, and the dkms-built module loaded there
#      (scripts/guest.sh all.sh), then the concurrency and stress tests
#      again with 4 CPUs (MMAP3_SMP=4 scripts/guest.sh smp4.sh);
#   6. the trace event mmap3:build_id (tests/qemu/event.sh, tests/event/,
#      perf -e mmap3:build_id) on 4 CPUs: on each kernel tested, and on 7.3
#      without the series (scripts/test-event.sh);
#   7. on the test kernels, the selftests as the kernel series has them
#      (patches/0005), with the kernel's own perf_events selftests, installed
#      with `make -C tools/testing/selftests TARGETS=perf_events install`
#      and run in QEMU with run_kselftest.sh from the guest's ext2 disk
#      (scripts/guest.sh kselftest.sh).
# Builds (1-3) are steps, not tests: a failed step fails the run, and is
# named in the last lines. Ends with "N passed, N failed, N skipped" over
# the tests; exits non-zero on any failure.
kvers=${MMAP3_KVER:-}
. "$(dirname "$0")/lib.sh"

# The kernels: $MMAP3_KVER's, and 6.12 LTS beside 7.3 when none is given.
lts=()
[ -n "$kvers" ] || [ "$MMAP3_KERNEL" != test ] || lts=(6.12)
kvers=("$MMAP3_KVER" "${lts[@]}")

# The steps, in order, one a line: WHEN KIND SCRIPT [| WHAT]
#   WHEN   all: every run; test: MMAP3_KERNEL=test (not the debug and
#          KCSAN runs, which repeat what runs on their kernel and leave
#          out what does not: checkpatch and the host tests, which
#          `make test` has run); test-7.3: that, on 7.3 alone
#          (`make test`'s first kernel);
#   KIND   kernel: scripts/SCRIPT for each kernel, its failure ends the run;
#          build: scripts/SCRIPT once, a build step;
#          each: scripts/SCRIPT for each kernel, a build step;
#          kernels: scripts/SCRIPT with every kernel as arguments, a
#          build step;
#          host: tests/perf/SCRIPT, a host test that prints TAP;
#          cargo: cargo test in SCRIPT/ (the host crate);
#          guest: scripts/guest.sh SCRIPT on the first kernel, 2 CPUs;
#          guest4: the same with 4 CPUs;
#          guest4-each, guest-each: the same on each kernel;
#          tests: scripts/SCRIPT, which ends with "N passed, ...".
steps=$(cat <<'EOF'
all      kernel      kernel.sh
test     build       checkpatch.sh
all      each        module.sh
all      kernels     dkms-test.sh
all      build       perf.sh
all      build       bench-build.sh
test     host        old-perf.sh       | how an unpatched perf reads MMAP3
test     host        crafted.sh        | crafted MMAP3 records, patched perf with ASan
test     host        host-shell.sh     | the series' perf shell tests that need a compiler, unpatched and patched perf
test     host        convert.sh        | perf inject --convert-mmap3, patched perf with ASan, upstream's perf
test     host        event-convert.sh  | perf inject --convert-mmap3 of MMAP2 records and mmap3:build_id, patched perf with ASan, upstream's perf
test     host        status.sh         | build-id statuses of samples and DSOs, perf test of MMAP3 validation and swapping, patched perf with ASan
test     host        fuzz.sh           | crafted and cross-endian MMAP3 files, fuzzed (seeded mutants), patched perf with ASan
test     host        matrix.sh         | every documented perf command and option on every kind of file the series writes, patched perf with ASan against upstream's
test     cargo       buildid           | the build-id parser and the cache
all      guest       all.sh
all      guest4      smp4.sh
all      guest4-each event.sh
test-7.3 tests       test-event.sh
test     guest-each  kselftest.sh
EOF
)

passed=0 failed=0 skipped=0 failed_steps=()
count() { passed=$((passed + $1)) failed=$((failed + $2)) skipped=$((skipped + $3)); }
# step [VER] SCRIPT [ARG...]: a build step, on VER's kernel when given.
step() {
	local kv=$MMAP3_KVER
	case "$1" in [0-9]*) kv=$1 && shift ;; esac
	MMAP3_KVER=$kv "$MMAP3_ROOT/scripts/$1" "${@:2}" || failed_steps+=("$1${kv:+ ($kv)}")
}
# host_tap SCRIPT WHAT: a host test that prints TAP ("1..N" and N results)
# and exits 0 or 1, counted by scripts/tap.awk as one section with a plan:
# a plan not run to its end, or a skip of the whole script, fails.
host_tap() {
	local out rc p f s
	log "host: $2 (tests/perf/$1)"
	set +e
	out=$("$MMAP3_ROOT/tests/perf/$1" 2>&1)
	rc=$?
	set -e
	printf '%s\n' "$out" | grep -E '^not ok|# SKIP' >&2 || true
	read -r p f s < <(printf 'mmap3-test: begin %s\n%s\nmmap3-test: end %s rc=%s\n' \
		"$1" "$out" "$1" "$rc" | awk -v need_plan=1 -f "$MMAP3_ROOT/scripts/tap.awk")
	count "$p" "$f" "$s"
}
# cargo_test DIR WHAT: cargo test in DIR, its build in the cache (not
# DIR/target), counted from its "test result:" lines. "ignored" is not
# counted: buildid/'s one #[ignore] test is a fuzz seed writer, run by
# hand (buildid/README.md), not a skipped test.
cargo_test() {
	local out rc p f
	[ -f "$MMAP3_ROOT/$1/Cargo.toml" ] || return 0
	log "host: $2 (cargo test in $1/)"
	set +e
	out=$(cd "$MMAP3_ROOT/$1" &&
		CARGO_TARGET_DIR="$MMAP3_WORK/$1-target" cargo test --release 2>&1)
	rc=$?
	set -e
	printf '%s\n' "$out" | grep -E '^test result|panicked|FAILED|failures:' >&2 || true
	read -r p f < <(printf '%s\n' "$out" | awk '/^test result/ {
		for (i = 1; i <= NF; i++) { if ($(i+1) ~ /^passed/) p += $i; if ($(i+1) ~ /^failed/) f += $i }
	} END { print p + 0, f + 0 }')
	[ "$rc" = 0 ] || [ "$f" -gt 0 ] || f=1
	count "$p" "$f" 0
}
# guest SMP VER SCRIPT: scripts/guest.sh SCRIPT on VER's kernel with SMP
# CPUs; no result line is a failure.
guest() {
	local p f s
	read -r p f s < <(MMAP3_KVER=$2 MMAP3_SMP=$1 "$MMAP3_ROOT/scripts/guest.sh" "$3" | tail -n 1)
	count "${p:-0}" "${f:-1}" "${s:-0}"
}

while read -r when kind script what; do
	[ -n "$when" ] || continue
	what=${what#| }
	case "$when" in
	all) ;;
	test) [ "$MMAP3_KERNEL" = test ] || continue ;;
	test-7.3) [ "$MMAP3_KERNEL" = test ] && [ "$MMAP3_KVER" = 7.3 ] || continue ;;
	*) die "scripts/test.sh: a step for '$when'" ;;
	esac
	case "$kind" in
	kernel)
		for kv in "${kvers[@]}"; do MMAP3_KVER=$kv "$MMAP3_ROOT/scripts/$script"; done ;;
	build) step "$script" ;;
	each) for kv in "${kvers[@]}"; do step "$kv" "$script"; done ;;
	kernels) step "$script" "${kvers[@]}" ;;
	host) host_tap "$script" "$what" ;;
	cargo) cargo_test "$script" "$what" ;;
	guest) guest 2 "$MMAP3_KVER" "$script" ;;
	guest4) guest 4 "$MMAP3_KVER" "$script" ;;
	guest-each) for kv in "${kvers[@]}"; do guest 2 "$kv" "$script"; done ;;
	guest4-each) for kv in "${kvers[@]}"; do guest 4 "$kv" "$script"; done ;;
	tests)
		read -r p _ f _ s _ < <("$MMAP3_ROOT/scripts/$script" | tail -n 1)
		count "${p:-0}" "${f:-1}" "${s:-0}" ;;
	*) die "scripts/test.sh: a step of kind '$kind'" ;;
	esac
done <<<"$steps"

[ ${#failed_steps[@]} = 0 ] || log "failed steps: ${failed_steps[*]}"
echo "$passed passed, $failed failed, $skipped skipped"
[ "$failed" = 0 ] && [ ${#failed_steps[@]} = 0 ]
