#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# The Debian package mmap3-dkms (debian/, dh-dkms), built and tried in the
# trixie chroot of scripts/debian-kernel.sh, against Debian's own 7.3
# kernel (issue #41):
#
#   scripts/debian-dkms.sh
#
# 1. dpkg-buildpackage -b of this checkout's files (debian/, dkms.conf,
#    Kbuild, Makefile, src, rust) in the chroot; the .deb is copied to
#    $DEBIAN_MODULE_DIR; lintian, Debian's package checker, must find no
#    error and no warning in it.
# 2. Debian's linux-headers-$DEBIAN_KREL (and its -common, linux-kbuild,
#    linux-base-*) installed in the chroot with dpkg, then `apt-get
#    install /path/to/mmap3-dkms_*.deb` as a user would, and dkms build for
#    that kernel against its headers, which hold no Rust metadata: the
#    build must stop with the module's message saying so (its make.log is
#    shown).
# 3. dkms build and install of the installed source against the build
#    tree that scripts/debian-module.sh regenerates (--kernelsourcedir),
#    which must succeed and put the module under /lib/modules/<kernel>;
#    the module dkms installed is compared with scripts/debian-module.sh's
#    undefined symbols.
. "$(dirname "$0")/lib.sh"
. "$MMAP3_ROOT/scripts/debian-lib.sh"

"$MMAP3_ROOT/scripts/debian-module.sh"

ver=$(sed -n 's/^PACKAGE_VERSION="\([^"]*\)"$/\1/p' "$MMAP3_ROOT/dkms.conf")
pkgsrc=/build/mmap3-dkms/mmap3-$ver
rm -rf "${DEBIAN_CHROOT:?}/build/mmap3-dkms"
mkdir -p "$DEBIAN_CHROOT$pkgsrc"
git -C "$MMAP3_ROOT" ls-files -z debian dkms.conf Kbuild Makefile src rust |
	tar -C "$MMAP3_ROOT" --null -T - -cf - | tar -C "$DEBIAN_CHROOT$pkgsrc" -xf -
t0=$SECONDS
log "dpkg-buildpackage -b of mmap3-dkms $ver in the chroot"
in_chroot sh -c "cd $pkgsrc && dpkg-buildpackage -b -us -uc" >"$DEBIAN_CHROOT/build/mmap3-dkms/build.log" 2>&1 ||
	{ tail -n 30 "$DEBIAN_CHROOT/build/mmap3-dkms/build.log" >&2; die "dpkg-buildpackage failed"; }
deb=$(cd "$DEBIAN_CHROOT/build/mmap3-dkms" && ls mmap3-dkms_*_all.deb)
mkdir -p "$DEBIAN_MODULE_DIR"
cp "$DEBIAN_CHROOT/build/mmap3-dkms/$deb" "$DEBIAN_MODULE_DIR/"
log "built $deb ($((SECONDS - t0)) s): $DEBIAN_MODULE_DIR/$deb"
# lintian after debootstrap: as one of its packages, its Perl dependencies
# fail to configure in debootstrap's order.
in_chroot sh -c 'command -v lintian >/dev/null ||
	DEBIAN_FRONTEND=noninteractive apt-get install -y -q lintian' >"$DEBIAN_MODULE_DIR/lintian.log" 2>&1 ||
	{ cat "$DEBIAN_MODULE_DIR/lintian.log" >&2; die "apt-get install lintian in the chroot failed"; }
in_chroot sh -c "cd /build/mmap3-dkms && lintian --fail-on error,warning $deb *.changes" \
	>"$DEBIAN_MODULE_DIR/lintian.log" 2>&1 ||
	{ cat "$DEBIAN_MODULE_DIR/lintian.log" >&2; die "lintian found errors or warnings in $deb"; }
log "lintian: no error, no warning ($(grep -c '^[IPX]:' "$DEBIAN_MODULE_DIR/lintian.log") notes)"

# Debian's headers of the kernel, as a user has them.
mkdir -p "$DEBIAN_CHROOT/build/debs"
cp "$DEBIAN_DIR"/debs/linux-{headers,kbuild}-*.deb "$DEBIAN_DIR/debs/linux-base-$DEBIAN_KREL"_*.deb \
	"$DEBIAN_CHROOT/build/debs/"
if ! in_chroot dpkg-query -W "linux-headers-$DEBIAN_KREL" >/dev/null 2>&1; then
	log "installing Debian's linux-headers-$DEBIAN_KREL in the chroot (dpkg -i)"
	in_chroot sh -c 'dpkg -i /build/debs/*.deb' >"$DEBIAN_CHROOT/build/debs/install.log" 2>&1 ||
		{ tail -n 20 "$DEBIAN_CHROOT/build/debs/install.log" >&2; die "dpkg -i of the headers failed"; }
fi

t0=$SECONDS
log "apt-get install /path/to/$deb in the chroot"
# Every dependency is in the chroot already: apt downloads nothing.
rc=0
in_chroot sh -c "dpkg --purge mmap3-dkms >/dev/null 2>&1; cd /build/mmap3-dkms &&
	DEBIAN_FRONTEND=noninteractive apt-get install -y /build/mmap3-dkms/$deb" \
	>"$DEBIAN_MODULE_DIR/apt-install.log" 2>&1 || rc=$?
echo "apt-get install: exit $rc ($((SECONDS - t0)) s); its output:" >&2
sed 's/^/  | /' "$DEBIAN_MODULE_DIR/apt-install.log" | tail -n 25 >&2
[ "$rc" = 0 ] || die "apt-get install of $deb failed"
# The package's postinst builds for the running kernel (here the host's,
# which has no headers in the chroot: skipped); on a Debian machine that
# is $DEBIAN_KREL, with its headers: the same build, by hand.
rc=0
in_chroot dkms build "mmap3/$ver" -k "$DEBIAN_KREL" --force >"$DEBIAN_MODULE_DIR/dkms-headers.log" 2>&1 || rc=$?
echo "dkms build -k $DEBIAN_KREL (against Debian's headers): exit $rc; its output:" >&2
sed 's/^/  | /' "$DEBIAN_MODULE_DIR/dkms-headers.log" | tail -n 12 >&2
make_log=$DEBIAN_CHROOT/var/lib/dkms/mmap3/$ver/build/make.log
# dkms.conf skips such a kernel (exit 77) with a line saying why.
[ "$rc" = 77 ] && grep -q 'no Rust metadata' "$DEBIAN_MODULE_DIR/dkms-headers.log" ||
	die "dkms did not skip Debian's headers with the module's message"

t0=$SECONDS
log "dkms build against the regenerated build tree (--kernelsourcedir)"
in_chroot dkms build "mmap3/$ver" -k "$DEBIAN_KREL" --force \
	--kernelsourcedir "/build/kernel-$DEBIAN_KVER/obj" >"$DEBIAN_MODULE_DIR/dkms-build.log" 2>&1 ||
	{ tail -n 30 "$DEBIAN_MODULE_DIR/dkms-build.log" >&2; cat "$make_log" >&2 || true; die "dkms build failed"; }
# Installed as the package's postinst installs it for a kernel with its
# headers (dkms autoinstall): under /lib/modules, where modprobe finds it.
in_chroot dkms install "mmap3/$ver" -k "$DEBIAN_KREL" --force \
	--kernelsourcedir "/build/kernel-$DEBIAN_KVER/obj" >>"$DEBIAN_MODULE_DIR/dkms-build.log" 2>&1 ||
	{ tail -n 30 "$DEBIAN_MODULE_DIR/dkms-build.log" >&2; die "dkms install failed"; }
status=$(in_chroot dkms status "mmap3/$ver" -k "$DEBIAN_KREL" 2>/dev/null)
case "$status" in
*": installed") ;;
*) die "dkms status for $DEBIAN_KREL does not say installed: $status" ;;
esac
ko=$(find "$DEBIAN_CHROOT/lib/modules/$DEBIAN_KREL/updates/dkms" -name 'mmap3.ko*' | head -n 1)
[ -n "$ko" ] || die "dkms installed no mmap3.ko in /lib/modules/$DEBIAN_KREL/updates/dkms"
log "dkms built and installed $ko ($((SECONDS - t0)) s)"
case "$ko" in
*.xz) xz -dc "$ko" >"$DEBIAN_MODULE_DIR/mmap3-dkms.ko" ;;
*.zst) zstd -qdc "$ko" >"$DEBIAN_MODULE_DIR/mmap3-dkms.ko" ;;
*) cp "$ko" "$DEBIAN_MODULE_DIR/mmap3-dkms.ko" ;;
esac
nm -u "$DEBIAN_MODULE_DIR/mmap3-dkms.ko" | awk '{ print $2 }' | sort -u |
	comm -23 - "$DEBIAN_MODULE_DIR/exported" >"$DEBIAN_MODULE_DIR/dkms-missing"
[ ! -s "$DEBIAN_MODULE_DIR/dkms-missing" ] ||
	{ cat "$DEBIAN_MODULE_DIR/dkms-missing" >&2; die "the dkms-built module imports symbols Debian's kernel does not export"; }
log "every symbol the dkms-built module imports is exported by Debian's $DEBIAN_KREL"
