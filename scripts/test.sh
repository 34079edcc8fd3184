#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# `make test`: every test of the project, and one summary line.
#   1. the patched kernel (scripts/kernel.sh; cached),
#   2. the module with CLIPPY=1, rustfmt (scripts/module.sh),
#   3. the module built and installed by dkms (scripts/dkms-test.sh),
#      perf with the MMAP3 series (scripts/perf.sh), how an unpatched
#      perf reads MMAP3 records (tests/perf/old-perf.sh, on the host), and
#      crafted MMAP3 records read by the patched perf built with ASan
#      (tests/perf/crafted.sh, on the host),
#   4. host tests of the build-id parser (cargo test in buildid/),
#   5. the selftests in QEMU, and the dkms-built module loaded there
#      (scripts/guest.sh all.sh).
# Ends with "N passed, N failed, N skipped"; exits non-zero on any failure.
. "$(dirname "$0")/lib.sh"

passed=0 failed=0 skipped=0
count() { passed=$((passed + $1)) failed=$((failed + $2)) skipped=$((skipped + $3)); }

"$MMAP3_ROOT/scripts/kernel.sh"
if "$MMAP3_ROOT/scripts/module.sh"; then count 1 0 0; else count 0 1 0; fi
if "$MMAP3_ROOT/scripts/dkms-test.sh"; then count 1 0 0; else count 0 1 0; fi
if "$MMAP3_ROOT/scripts/perf.sh"; then count 1 0 0; else count 0 1 0; fi

# host_tap SCRIPT WHAT: a host test that prints TAP and exits 0, 1 or 4 (skip).
host_tap() {
	local out rc p f s
	log "host: $2 (tests/perf/$1)"
	set +e
	out=$("$MMAP3_ROOT/tests/perf/$1" 2>&1)
	rc=$?
	set -e
	printf '%s\n' "$out" | grep -E '^not ok|# SKIP' >&2 || true
	read -r p f s < <(printf '%s\n' "$out" | awk '
		/^not ok/ { f++; next } /^ok .*# SKIP/ { s++; next } /^1\.\.0 # SKIP/ { s++; next } /^ok/ { p++ }
		END { print p + 0, f + 0, s + 0 }')
	[ "$rc" = 0 ] || [ "$rc" = 4 ] || [ "$f" -gt 0 ] || f=1
	count "$p" "$f" "$s"
}
# An unpatched perf on a perf.data with MMAP3 records; crafted and damaged
# MMAP3 records read by the patched perf under ASan.
host_tap old-perf.sh "how an unpatched perf reads MMAP3"
host_tap crafted.sh "crafted MMAP3 records, patched perf with ASan"

if [ -f "$MMAP3_ROOT/buildid/Cargo.toml" ]; then
	log "host tests: cargo test (buildid/)"
	set +e
	out=$(cd "$MMAP3_ROOT/buildid" && cargo test --release 2>&1)
	rc=$?
	set -e
	printf '%s\n' "$out" | grep -E '^test result|panicked|FAILED|failures:' >&2 || true
	# "ignored" is not counted: the one #[ignore] test is a fuzz seed
	# writer, run by hand (buildid/README.md), not a skipped test.
	read -r p f < <(printf '%s\n' "$out" | awk '/^test result/ {
		for (i = 1; i <= NF; i++) { if ($(i+1) ~ /^passed/) p += $i; if ($(i+1) ~ /^failed/) f += $i }
	} END { print p + 0, f + 0 }')
	[ "$rc" = 0 ] || [ "$f" -gt 0 ] || f=1
	count "$p" "$f" 0
fi

read -r p f s < <("$MMAP3_ROOT/scripts/guest.sh" all.sh | tail -n 1)
count "$p" "$f" "$s"

echo "$passed passed, $failed failed, $skipped skipped"
[ "$failed" = 0 ]
