#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Stage what the guest runs in $MMAP3_WORK/guest (the selftests and their
# second provider module, the demo program, the fixtures and their
# MANIFEST, the module, the guest
# scripts, perf (scripts/perf.sh) and the module as dkms built it when there
# are; for event.sh only what the trace event's tests need: perf, the BPF
# example and bpftrace among them; for kselftest.sh only the kernel
# series' selftests, installed the kselftest way, and the module), then boot it
# with tests/qemu/run.sh SCRIPT. Needs the kernel and the module built
# (scripts/kernel.sh, scripts/module.sh; scripts/dkms-test.sh for the
# dkms-built one).
. "$(dirname "$0")/lib.sh"

script=${1:?usage: scripts/guest.sh all.sh|smp4.sh|kselftest.sh|demo.sh|event.sh|demo-event.sh|--stage}
guest=$MMAP3_WORK/guest
rm -rf "$guest"
mkdir -p "$guest"
# samply_reader DIR: samply's perf.data parser, a reader that knows MMAP2
# and not MMAP3 (tests/perf/samply-reader), linked statically for the
# guest, into DIR/samply-reader.
samply_reader() {
	local target=$MMAP3_CACHE/samply-reader
	(cd "$MMAP3_ROOT/tests/perf/samply-reader" &&
		CARGO_TARGET_DIR=$target RUSTFLAGS="-C target-feature=+crt-static" \
			cargo build --quiet --release --target x86_64-unknown-linux-gnu) ||
		die "cargo build of tests/perf/samply-reader failed"
	cp "$target/x86_64-unknown-linux-gnu/release/mmap3-samply-reader" "$1/samply-reader"
}
# event.sh: the trace event alone, on any kernel (the unpatched one too,
# whose headers have no MMAP3 for the selftests): the fixtures and their
# MANIFEST, the module, the script, the event's selftest; when it was
# built, perf (scripts/perf.sh: one perf for both kernels), which the
# script records the event with; the BPF example (examples/bpf/, built
# static in $MMAP3_WORK/bpf-example) with runas (tests/perf/runas.c) to
# run it unprivileged, and the host's bpftrace with the one-liner of
# examples/bpf/README.md. demo-event.sh, make demo's boot of the kernel
# without the series (demo/event.sh), takes the same, and upstream's perf
# when it was built.
if [ "$script" = event.sh ] || [ "$script" = demo-event.sh ]; then
	log "building the fixtures"
	"$MMAP3_ROOT/tests/kselftest/fixtures.py" "$guest/fixtures" >&2
	# MMAP3_MODULE: another build of the module (scripts/debian-test.sh:
	# the one for Debian's own kernel).
	cp "${MMAP3_MODULE:-$MMAP3_WORK/module-$MMAP3_BUILD/mmap3.ko}" "$guest/mmap3.ko"
	cp "$MMAP3_ROOT/tests/qemu/event.sh" "$MMAP3_ROOT/tests/qemu/guest-lib.sh" "$guest/"
	# The event's selftest (tests/event/), static: with the harness of
	# the kernel's selftests and the uapi headers of the series ($KSRC,
	# the series applied; installed once per series into $MMAP3_WORK),
	# whose MMAP3 definitions its helpers use, whichever kernel it runs on.
	hdrs=$MMAP3_WORK/series-headers$KTAG
	if [ "$(cat "$hdrs/.key" 2>/dev/null)" != "$(cat "$KSRC/.git/mmap3-patches")" ]; then
		rm -rf "$hdrs"
		make -s -C "$KSRC" O="$hdrs/build" ARCH=x86 INSTALL_HDR_PATH="$hdrs" headers_install >&2 ||
			die "headers_install of $KSRC failed"
		cp "$KSRC/.git/mmap3-patches" "$hdrs/.key"
	fi
	gcc -O2 -Wall -static -I"$KSRC/tools/testing/selftests/kselftest" \
		-isystem "$hdrs/include" -o "$guest/mmap3_event" \
		"$MMAP3_ROOT/tests/event/mmap3_event.c" -lpthread
	# perf, when scripts/perf.sh built it, and mapfixed, for perf record
	# --mmap3 on the event (event.sh's perf_mmap3_event); upstream's perf
	# when it was built and samply's parser, the readers of perf inject
	# --convert-mmap3's output there.
	if [ -x "$PERF_BUILD/guest/perf" ]; then
		cp -a "$PERF_BUILD/guest" "$guest/perf"
		gcc -O2 -Wall -static -o "$guest/perf/mapfixed" \
			"$MMAP3_ROOT/tests/perf/mapfixed.c" -lpthread
		[ ! -x "$PERF_UPSTREAM_BUILD/perf" ] || cp "$PERF_UPSTREAM_BUILD/perf" "$guest/perf/perf-upstream"
		samply_reader "$guest/perf"
	fi
	if [ "$script" = demo-event.sh ]; then
		cp "$MMAP3_ROOT/demo/event.sh" "$guest/demo-event.sh"
	fi
	log "building the BPF example (examples/bpf)"
	make -s -C "$MMAP3_ROOT/examples/bpf" OUTPUT="$MMAP3_WORK/bpf-example" STATIC=1 >&2 ||
		die "examples/bpf does not build (clang, libbpf-dev, bpftool: scripts/deps.sh)"
	cp "$MMAP3_WORK/bpf-example/mmap3_build_id" "$guest/"
	gcc -O2 -Wall -static -o "$guest/runas" "$MMAP3_ROOT/tests/perf/runas.c"
	# bpftrace (bookworm's 0.17, linked against LLVM 14: about 80 MB more
	# in the gzipped initramfs, a few seconds more per boot) in
	# $guest/bpftrace: the binary, the libraries ldd lists, the uapi
	# headers and the kernel's u8...u64 (without BTF, bpftrace declares the
	# event's format with them; the guest has no kernel headers), behind a
	# wrapper named bpftrace; and the README's one-liner, as it is written.
	bt=$(command -v bpftrace) || die "bpftrace not found (scripts/deps.sh installs it)"
	mkdir -p "$guest/bpftrace/lib" "$guest/bpftrace/include"
	cp "$bt" "$guest/bpftrace/bpftrace.bin"
	ldd "$bt" | awk '$3 ~ /^\// { print $3 }' | xargs cp -L -t "$guest/bpftrace/lib/"
	cp -a /usr/include/linux /usr/include/asm-generic \
		"/usr/include/$(gcc -print-multiarch)/asm" "$guest/bpftrace/include/"
	printf '%s\n' '#include <linux/types.h>' 'typedef __u8 u8;' 'typedef __u16 u16;' \
		'typedef __u32 u32;' 'typedef __u64 u64;' 'typedef __s32 s32;' 'typedef __s64 s64;' \
		>"$guest/bpftrace/include/kernel_types.h"
	# A kernel with BTF (Debian's: scripts/debian-test.sh) gives bpftrace
	# the kernel's types, and the headers would clash with them.
	printf '%s\n' '#!/bin/sh' \
		'export LD_LIBRARY_PATH=/tests/bpftrace/lib' \
		'[ -e /sys/kernel/btf/vmlinux ] && exec /tests/bpftrace/bpftrace.bin "$@"' \
		'exec /tests/bpftrace/bpftrace.bin -I /tests/bpftrace/include --include kernel_types.h "$@"' \
		>"$guest/bpftrace/bpftrace"
	chmod +x "$guest/bpftrace/bpftrace"
	sed -n "s/^    \(bpftrace -e '.*'\)\$/\1/p" "$MMAP3_ROOT/examples/bpf/README.md" >"$guest/bpftrace/oneliner"
	[ "$(wc -l <"$guest/bpftrace/oneliner")" = 1 ] ||
		die "examples/bpf/README.md: not one bpftrace one-liner (a line \"    bpftrace -e '...'\")"
	exec "$MMAP3_ROOT/tests/qemu/run.sh" "$script" ${2:+"$2"}
fi
# kselftest.sh: the selftests as the kernel series has them (patches/0005),
# installed the kselftest way, and the module (scripts/module.sh) when it
# was built; no fixtures (the program writes its own files, on the guest's
# ext2 disk, which is empty then).
if [ "$script" = kselftest.sh ]; then
	mkdir -p "$guest/fixtures"
	cp "$MMAP3_ROOT/tests/qemu/kselftest.sh" "$guest/"
	if [ -f "$MMAP3_WORK/module-$MMAP3_BUILD/mmap3.ko" ]; then
		cp "$MMAP3_WORK/module-$MMAP3_BUILD/mmap3.ko" "$guest/"
	else
		log "no module built (scripts/module.sh): the selftests run without it"
	fi
	"$MMAP3_ROOT/scripts/kselftest-install.sh" "$guest/kselftest"
	exec "$MMAP3_ROOT/tests/qemu/run.sh" "$script" ${2:+"$2"}
fi
log "building the selftests, their fixtures and the demo"
make -s -C "$MMAP3_ROOT/tests/kselftest" OUTPUT="$guest" \
	KSFT_DIR="$KSRC/tools/testing/selftests" \
	KHDR_INCLUDES="-isystem $KOBJ/usr/include" >&2
gcc -O2 -Wall -static -isystem "$KOBJ/usr/include" -o "$guest/mmap3_demo" \
	"$MMAP3_ROOT/demo/mmap3_demo.c"
cp "$MMAP3_WORK/module-$MMAP3_BUILD/mmap3.ko" "$MMAP3_ROOT/tests/qemu/all.sh" \
	"$MMAP3_ROOT/tests/qemu/smp4.sh" "$MMAP3_ROOT/tests/qemu/guest-lib.sh" \
	"$MMAP3_ROOT/demo/demo.sh" "$guest/"
# The second MMAP3 provider of mmap3_lifecycle, a C module, in a copy as
# scripts/module.sh builds the module (the repository stays clean).
log "building the selftests' second provider (tests/kselftest/mmap3_provider)"
prov=$MMAP3_WORK/provider-$MMAP3_BUILD
mkdir -p "$prov" "$guest/mmap3_provider"
rsync -a --delete --exclude '*.o' --exclude '*.ko' --exclude '.*.cmd' \
	"$MMAP3_ROOT/tests/kselftest/mmap3_provider/" "$prov/"
make -s -C "$KOBJ" M="$prov" LLVM=1 modules >"$prov/build.log" 2>&1 ||
	{ cat "$prov/build.log" >&2; die "the second provider does not build"; }
cp "$prov/mmap3_test_provider.ko" "$guest/mmap3_provider/"
# perf with the MMAP3 series, and its guest script (scripts/perf.sh).
# With it: two programs of one source whose function names differ (alpha,
# beta), runas (tests/perf/runas.c), mapexec (tests/perf/mapexec.c), a
# btrfs image holding alpha, the
# session of issue 16 (tests/perf/replaced.sh), upstream's perf when it was
# built (MMAP3_KERNEL=upstream scripts/perf.sh), which uses the same
# libraries, and samply's parser.
if [ -x "$PERF_BUILD/guest/perf" ]; then
	cp -a "$PERF_BUILD/guest" "$guest/perf"
	cp "$MMAP3_ROOT/tests/perf/guest-perf.sh" "$guest/perf.sh"
	for fn in alpha beta; do
		gcc -O1 -static -DSPIN_FN="$fn" -o "$guest/perf/$fn" "$MMAP3_ROOT/tests/perf/spin.c"
	done
	gcc -O2 -Wall -static -o "$guest/perf/runas" "$MMAP3_ROOT/tests/perf/runas.c"
	gcc -O2 -Wall -static -o "$guest/perf/mapexec" "$MMAP3_ROOT/tests/perf/mapexec.c"
	# A 16 MiB btrfs image holding alpha, for the records perf synthesizes
	# of files on btrfs (guest-perf.sh's synth_cases).
	btrfs_tree=$MMAP3_WORK/btrfs-tree
	rm -rf "$btrfs_tree" && mkdir -p "$btrfs_tree"
	cp "$guest/perf/alpha" "$btrfs_tree/"
	truncate -s 16M "$guest/perf/btrfs.img"
	PATH=$PATH:/usr/sbin:/sbin mkfs.btrfs -q -f -M -r "$btrfs_tree" "$guest/perf/btrfs.img" >/dev/null ||
		die "mkfs.btrfs of the perf test's btrfs image failed (btrfs-progs: scripts/deps.sh)"
	cp "$MMAP3_ROOT/tests/perf/replaced.sh" "$guest/perf/"
	[ ! -x "$PERF_UPSTREAM_BUILD/perf" ] || cp "$PERF_UPSTREAM_BUILD/perf" "$guest/perf/perf-upstream"
	samply_reader "$guest/perf"
fi
# The dkms-built module, unless it is older than the kernel (a stale build).
dkms=$MMAP3_WORK/dkms-$MMAP3_KERNEL/$(cat "$KOBJ/include/config/kernel.release")
if [ -f "$dkms/mmap3-dkms.ko" ] && [ "$dkms/mmap3-dkms.ko" -nt "$KOBJ/vmlinux" ]; then
	cp "$dkms/mmap3-dkms.ko" "$dkms/mmap3-dkms.version" "$guest/"
fi
# --stage: only stage (scripts/bench.sh adds to it and boots two kernels).
[ "$script" = --stage ] && exit 0
exec "$MMAP3_ROOT/tests/qemu/run.sh" "$script" ${2:+"$2"}
