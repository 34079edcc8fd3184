#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Build the benchmark's guest programs (tests/bench: mmap3_bench, perfdata,
# tiny) against the test kernel's uapi headers, warning-free:
#
#   scripts/bench-build.sh [OUTDIR]
#
# into OUTDIR (default: $MMAP3_WORK/bench-build). scripts/bench.sh builds
# them so; `make test` runs it as a step, so that a change to the selftests'
# headers the benchmark shares cannot leave `make bench` broken.
. "$(dirname "$0")/lib.sh"

out=${1:-$MMAP3_WORK/bench-build}
kobj=$(MMAP3_KERNEL=test kobj "$MMAP3_KVER")
bench=$MMAP3_ROOT/tests/bench
[ -d "$kobj/usr/include" ] || die "no uapi headers in $kobj/usr/include: run scripts/kernel.sh"
mkdir -p "$out"
log "building the benchmark's programs (tests/bench) into $out"
cflags=(-O2 -Wall -Werror -static)
gcc "${cflags[@]}" -isystem "$kobj/usr/include" -o "$out/mmap3_bench" "$bench/mmap3_bench.c" -lpthread
gcc "${cflags[@]}" -isystem "$kobj/usr/include" -o "$out/perfdata" "$bench/perfdata.c"
gcc "${cflags[@]}" -nostdlib -Wl,--build-id=sha1 -o "$out/tiny" "$bench/tiny.c"
