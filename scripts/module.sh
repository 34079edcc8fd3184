#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Build mmap3.ko against the cached kernel, the way `make KDIR=... LLVM=1`
# does, but in a copy under $MMAP3_CACHE so the repository stays clean; with
# CLIPPY=1, and fail on any compiler or clippy warning, on rustfmt
# differences, or on `unsafe` outside rust/.
. "$(dirname "$0")/lib.sh"

out=$MMAP3_WORK/module-$MMAP3_BUILD
mkdir -p "$out"
rsync -a --delete --exclude target --exclude '*.o' --exclude '*.ko' \
	--exclude '.*.cmd' "$MMAP3_ROOT"/{Kbuild,Makefile,dkms.conf,src,rust} "$out/"

if grep -nE '\bunsafe\b' "$MMAP3_ROOT"/src/*.rs | grep -vE '^[^:]+:[0-9]+:\s*//'; then
	die "unsafe outside rust/ (above): the FFI boundary is rust/"
fi
rustfmt --check --edition 2021 --config-path "$KSRC/.rustfmt.toml" \
	"$MMAP3_ROOT"/src/*.rs || die "rustfmt: the module is not formatted (diff above)"

make -s -C "$KOBJ" M="$out" LLVM=1 CLIPPY=1 modules >"$out/build.log" 2>&1 ||
	{ cat "$out/build.log" >&2; die "module build failed"; }
if grep -E 'warning|error' "$out/build.log" >&2; then
	die "the module build is not warning-free (above)"
fi
log "built $out/mmap3.ko (CLIPPY=1, no warnings)"
