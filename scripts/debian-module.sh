#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Build the module for Debian's own, unmodified 7.3 kernel
# (linux-image-$DEBIAN_KREL), with Debian's own toolchain, in the trixie
# chroot of scripts/debian-kernel.sh (which this runs first):
#
#   scripts/debian-module.sh
#
# Debian's linux-headers-* hold no Rust metadata (no rust/*.rmeta, no
# scripts/target.json), so an out-of-tree Rust module cannot be built from
# them alone. This regenerates what they lack from linux-source-7.3 of the
# same version, with the kernel's own .config and the compilers it names
# (gcc-14, rustc 1.85.1, bindgen 0.71.1: the chroot's, checked against
# CONFIG_CC_VERSION_TEXT, CONFIG_RUSTC_VERSION_TEXT and
# CONFIG_BINDGEN_VERSION_TEXT), so that the `kernel` crate's metadata,
# and the mangled names of its symbols, are those of the running kernel:
#
#   make olddefconfig     (must leave Debian's .config unchanged)
#   make modules_prepare  (generated headers, scripts/target.json, modpost,
#                          scripts/module.lds, and, since CONFIG_RUST=y,
#                          the rust/ directory: core, ffi, bindings, uapi,
#                          pin_init, macros, kernel, ...: rust/*.rmeta;
#                          no vmlinux)
#
# with KERNELRELEASE=$DEBIAN_KREL (the image's vermagic), and Debian's
# Module.symvers and vmlinux (linux-headers-$DEBIAN_KREL: the BTF base for
# the module's BTF) copied in. The
# build tree is $DEBIAN_BUILD (in the chroot: /build/kernel-$DEBIAN_KVER,
# output in .../obj); the module is built there from this checkout's
# files, the README way (make KDIR=...), and copied to $DEBIAN_MODULE.
#
# Then the crux: every symbol the module leaves undefined must be one that
# Debian's kernel exports (its Module.symvers), the Rust ones under the same
# mangled names; and the kernel crate's exports regenerated here must be
# those of Debian's Module.symvers. Both are checked and reported; a
# mismatch stops the run.
. "$(dirname "$0")/lib.sh"
. "$MMAP3_ROOT/scripts/debian-lib.sh"

"$MMAP3_ROOT/scripts/debian-kernel.sh"

hdr=$DEBIAN_DIR/headers/usr/src/linux-headers-$DEBIAN_KREL
# The build's whole .config: linux-headers-*'s. The image's
# /usr/lib/modules/*/config is the same less the lines Debian strips from
# it (CONFIG_BUILD_SALT, CONFIG_MODULE_SIG_ALL, CONFIG_MODULE_SIG_KEY,
# CONFIG_SYSTEM_TRUSTED_KEYS), which olddefconfig would set otherwise.
cfg=$hdr/.config
# In the chroot.
kb=/build/kernel-$DEBIAN_KVER
src=$kb/linux-source-7.3
obj=$kb/obj
cc=x86_64-linux-gnu-gcc-14
kmake=(nice -n 10 make -C "$src" O="$obj" CC="$cc" HOSTCC="$cc" KERNELRELEASE="$DEBIAN_KREL" -j"$JOBS")

# The toolchain must be the one the image's .config names.
want() { sed -n "s/^CONFIG_$1=\"\\(.*\\)\"\$/\\1/p" "$cfg"; }
for t in "CC_VERSION_TEXT:$cc --version | head -n 1" \
	 "RUSTC_VERSION_TEXT:rustc --version" \
	 "BINDGEN_VERSION_TEXT:bindgen --version 2>/dev/null"; do
	w=$(want "${t%%:*}")
	h=$(in_chroot sh -c "${t#*:}")
	[ "$w" = "$h" ] || die "the chroot's ${t#*:} says '$h', Debian's kernel was built with '$w'"
done
log "toolchain: the chroot's gcc-14, rustc and bindgen are those of the image's .config"

# The build tree, once per kernel version and chroot.
if [ ! -e "$DEBIAN_CHROOT$kb/.done" ]; then
	t0=$SECONDS
	rm -rf "${DEBIAN_CHROOT:?}$kb"
	mkdir -p "$DEBIAN_CHROOT$obj"
	log "unpacking linux-source-7.3 $DEBIAN_KVER into the chroot's $src"
	tar -C "$DEBIAN_CHROOT$kb" -xf "$DEBIAN_DIR/source/usr/src/linux-source-7.3.tar.xz"
	cp "$cfg" "$DEBIAN_CHROOT$obj/.config"
	# What Debian's top-level Makefile includes from the build directory
	# (CC=x86_64-linux-gnu-gcc-14, ARCH, KERNELRELEASE), as its headers
	# have it: every build against the tree, DKMS's too, takes Debian's
	# compiler.
	cp "$hdr/.kernelvariables" "$DEBIAN_CHROOT$obj/"
	log "make olddefconfig (Debian's .config, which it must not change) and modules_prepare (about 5 minutes)"
	in_chroot "${kmake[@]}" olddefconfig >"$DEBIAN_CHROOT$kb/prepare.log" 2>&1 ||
		{ tail -n 30 "$DEBIAN_CHROOT$kb/prepare.log" >&2; die "make olddefconfig failed"; }
	diff -u "$cfg" "$DEBIAN_CHROOT$obj/.config" >"$DEBIAN_CHROOT$kb/config.diff" ||
		{ cat "$DEBIAN_CHROOT$kb/config.diff" >&2; die "olddefconfig changed Debian's .config (above)"; }
	in_chroot "${kmake[@]}" modules_prepare >>"$DEBIAN_CHROOT$kb/prepare.log" 2>&1 ||
		{ tail -n 30 "$DEBIAN_CHROOT$kb/prepare.log" >&2; die "make modules_prepare failed"; }
	log "make modules_prepare: $((SECONDS - t0)) s"
	# modpost's list of what the kernel exports, and the BTF base that
	# module BTF (CONFIG_DEBUG_INFO_BTF_MODULES) is made against: Debian's.
	cp "$hdr/Module.symvers" "$hdr/vmlinux" "$DEBIAN_CHROOT$obj/"
	touch "$DEBIAN_CHROOT$kb/.done"
fi

# The module, from this checkout's files.
t0=$SECONDS
mod=/build/mmap3
rm -rf "${DEBIAN_CHROOT:?}$mod"
mkdir -p "$DEBIAN_CHROOT$mod"
git -C "$MMAP3_ROOT" ls-files -z Kbuild Makefile dkms.conf src rust |
	tar -C "$MMAP3_ROOT" --null -T - -cf - | tar -C "$DEBIAN_CHROOT$mod" -xf -
log "building the module against $obj (make KDIR=... CC=$cc)"
in_chroot nice -n 10 make -C "$mod" KDIR="$obj" CC="$cc" HOSTCC="$cc" >"$DEBIAN_CHROOT$mod.log" 2>&1 ||
	{ tail -n 40 "$DEBIAN_CHROOT$mod.log" >&2; die "the module's build failed"; }
log "the module: $((SECONDS - t0)) s"
mkdir -p "$DEBIAN_MODULE_DIR"
cp "$DEBIAN_CHROOT$mod/mmap3.ko" "$DEBIAN_MODULE"
modinfo "$DEBIAN_MODULE" | grep -E '^(vermagic|version|name):' >&2

# The crux: the symbols.
symvers=$hdr/Module.symvers
und=$DEBIAN_MODULE_DIR/undefined
nm -u "$DEBIAN_MODULE" | awk '{ print $2 }' | sort -u >"$und"
awk '{ print $2 }' "$symvers" | sort -u >"$DEBIAN_MODULE_DIR/exported"
missing=$(comm -23 "$und" "$DEBIAN_MODULE_DIR/exported")
rust=$(grep -c '^_R' "$und" || true)
log "the module imports $(wc -l <"$und") symbols ($rust Rust); Debian's Module.symvers exports $(wc -l <"$DEBIAN_MODULE_DIR/exported")"
# The kernel crate's exports as regenerated here, against Debian's.
gen=$DEBIAN_MODULE_DIR/rust-exports-regenerated
cat "$DEBIAN_CHROOT$obj"/rust/exports_*_generated.h |
	sed -n 's/^EXPORT_SYMBOL_RUST_GPL(\(.*\));$/\1/p' | sort -u >"$gen"
grep '^_R' "$DEBIAN_MODULE_DIR/exported" >"$DEBIAN_MODULE_DIR/rust-exports-debian" || true
only_here=$(comm -23 "$gen" "$DEBIAN_MODULE_DIR/rust-exports-debian" | grep -c '^_R' || true)
only_debian=$(comm -13 "$gen" "$DEBIAN_MODULE_DIR/rust-exports-debian" | wc -l)
log "Rust exports: $(grep -c '^_R' "$gen" || true) regenerated here, $(wc -l <"$DEBIAN_MODULE_DIR/rust-exports-debian") in Debian's Module.symvers; only here: $only_here, only in Debian's: $only_debian"
if [ -n "$missing" ]; then
	printf '%s\n' "$missing" >&2
	die "the module imports $(printf '%s\n' "$missing" | wc -l) symbols Debian's kernel does not export (above)"
fi
log "every symbol the module imports is exported by Debian's $DEBIAN_KREL: $DEBIAN_MODULE"
