#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# What Debian's linux-headers-* would have to ship for the module (and any
# out-of-tree Rust module) to build from them alone, measured (issue #41):
#
#   scripts/debian-headers.sh
#
# In the trixie chroot (scripts/debian-kernel.sh), a copy of Debian's
# installed linux-headers-$DEBIAN_KREL, its -common and linux-kbuild-*
# (scripts/debian-dkms.sh installs them) in /build/headers-rust, moved
# there as they are (their Makefile and links pointed at the copy), then:
#   1. plus the Rust files that modules_prepare makes
#      (scripts/debian-module.sh's tree): rust/*.rmeta, the proc-macro
#      libraries rust/lib*.so, scripts/target.json; the module is built
#      against it;
#   2. plus the kernel crate's sources (rust/**/*.rs, in -common), which
#      the module's Kbuild reads to find which abstractions the kernel
#      has; built again: it must build, and import exactly the symbols of
#      scripts/debian-module.sh's build.
# Prints the size of each addition and what each build says.
. "$(dirname "$0")/lib.sh"
. "$MMAP3_ROOT/scripts/debian-lib.sh"

"$MMAP3_ROOT/scripts/debian-dkms.sh" >/dev/null

h=/build/headers-rust
kb=/build/kernel-$DEBIAN_KVER
C=$DEBIAN_CHROOT
rm -rf "${C:?}$h"
mkdir -p "$C$h"
cp -a "$C/usr/src/linux-headers-$DEBIAN_KREL" "$C$h/amd64"
cp -a "$C/usr/src/linux-headers-$DEBIAN_KREL_BASE-common" "$C$h/common"
cp -a "$C/usr/lib/linux-kbuild-$DEBIAN_KREL_BASE" "$C$h/kbuild"
for d in amd64 common; do
	for l in scripts tools; do
		rm "$C$h/$d/$l"
		ln -s "../kbuild/$l" "$C$h/$d/$l"
	done
done
printf 'KBUILD_OUTPUT=%s/amd64\ninclude %s/common/Makefile\n' "$h" "$h" >"$C$h/amd64/Makefile"

# build LABEL: the module against $h/amd64; prints its first error, if any.
build() {
	local m=/build/mmap3-headers rc=0
	rm -rf "${C:?}$m"
	mkdir -p "$C$m"
	git -C "$MMAP3_ROOT" ls-files -z Kbuild Makefile dkms.conf src rust |
		tar -C "$MMAP3_ROOT" --null -T - -cf - | tar -C "$C$m" -xf -
	in_chroot make -C "$m" KDIR="$h/amd64" >"$C$m.log" 2>&1 || rc=$?
	if [ "$rc" = 0 ]; then
		log "$1: builds"
		nm -u "$C$m/mmap3.ko" | cmp -s - <(nm -u "$DEBIAN_MODULE") &&
			log "$1: imports exactly what scripts/debian-module.sh's build imports"
	else
		log "$1: does not build; the first lines:"
		grep -v '^make' "$C$m.log" | grep -m 1 -A 3 -E 'error|mmap3:' | sed 's/^/  | /' >&2
	fi
	return "$rc"
}

build "Debian's headers as they are" || true
mkdir -p "$C$h/amd64/rust"
cp "$C$kb"/obj/rust/*.rmeta "$C$kb"/obj/rust/*.so "$C$h/amd64/rust/"
cp "$C$kb/obj/scripts/target.json" "$C$h/kbuild/scripts/"
log "added rust/*.rmeta, rust/lib*.so, scripts/target.json: $(du -sh "$C$h/amd64/rust" | cut -f1) ($(tar -C "$C$h/amd64" -cf - rust | xz -T1 -3 | wc -c | numfmt --to=iec) xz)"
build "with the Rust metadata" || true
(cd "$C$kb/linux-source-7.3" && find rust -name '*.rs' -print0 | tar --null -T - -cf -) |
	tar -C "$C$h/common" -xf -
log "added the kernel crates' sources rust/**/*.rs: $(du -sh "$C$h/common/rust" | cut -f1)"
build "with the Rust metadata and sources"
