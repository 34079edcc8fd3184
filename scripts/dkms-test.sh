#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Build and install mmap3.ko with dkms and dkms.conf, as a distribution does,
# against the cached kernel as its headers (scripts/kernel.sh), then check
# with depmod that every symbol it needs is exported by that kernel.
#
# Everything lives in a private dkms tree, $MMAP3_WORK/dkms-$MMAP3_BUILD:
# the source as dkms expects it (source/mmap3-<version>), dkms's tree
# (tree/), the install tree (lib/modules/<kernel>/updates/dkms); /usr/src,
# /var/lib/dkms and /lib/modules are not touched. The installed module is
# left there as mmap3-dkms.ko, with its version in mmap3-dkms.version:
# scripts/guest.sh stages both, and tests/qemu/all.sh loads that module in
# place of the one of scripts/module.sh.
. "$(dirname "$0")/lib.sh"

command -v dkms >/dev/null || die "dkms not found (scripts/deps.sh installs it)"
[ -f "$KOBJ/.mmap3-key" ] || die "no kernel in $KOBJ: run scripts/kernel.sh"

d=$MMAP3_WORK/dkms-$MMAP3_BUILD
krel=$(cat "$KOBJ/include/config/kernel.release")
ver=$(sed -n 's/^PACKAGE_VERSION="\([^"]*\)"$/\1/p' "$MMAP3_ROOT/dkms.conf")
[ -n "$ver" ] || die "dkms.conf: no PACKAGE_VERSION"
src=$d/source/mmap3-$ver
rm -rf "$d"
mkdir -p "$src" "$d/tree" "$d/lib/modules/$krel"
rsync -a --exclude target --exclude '*.o' --exclude '*.ko' --exclude '.*.cmd' \
	"$MMAP3_ROOT"/{dkms.conf,Kbuild,Makefile,src,rust} "$src/"
# A kernel install tree has these beside the modules; depmod reads them.
cp "$KOBJ"/{modules.order,modules.builtin,modules.builtin.modinfo} "$d/lib/modules/$krel/"

# dkms runs depmod for /lib/modules only, hence --no-depmod and depmod -b
# below. Should dkms find a sign-file for this kernel, its key and
# certificate are made here, not in /var/lib/dkms.
export mok_signing_key=$d/mok.key mok_certificate=$d/mok.pub
opts=(-m mmap3 -v "$ver" -k "$krel" --kernelsourcedir "$KOBJ"
      --dkmstree "$d/tree" --sourcetree "$d/source" --installtree "$d/lib/modules"
      --no-depmod -j "$JOBS")
dkms_do() {
	dkms "$@" "${opts[@]}" >>"$d/dkms.log" 2>&1 || {
		cat "$d/dkms.log" >&2
		cat "$d/tree/mmap3/$ver/build/make.log" >&2 2>/dev/null || true
		die "dkms $1 failed"
	}
}
log "dkms add, build, install -m mmap3 -v $ver -k $krel --kernelsourcedir $KOBJ (tree $d)"
start=$SECONDS
dkms_do add
dkms_do build
dkms_do install
status=$(dkms status -m mmap3 -v "$ver" -k "$krel" --dkmstree "$d/tree" \
	--sourcetree "$d/source" --installtree "$d/lib/modules" 2>&1)
printf '%s\n' "$status" >>"$d/dkms.log"
case "$status" in
*": installed") ;;
*) cat "$d/dkms.log" >&2; die "dkms status does not say installed: $status" ;;
esac

ko=$d/lib/modules/$krel/updates/dkms/mmap3.ko
[ -f "$ko" ] || die "dkms installed no $ko"
depmod -b "$d" -e -F "$KOBJ/System.map" "$krel" 2>"$d/depmod.log" || {
	cat "$d/depmod.log" >&2; die "depmod failed"; }
if grep -E 'unknown symbol|disagrees' "$d/depmod.log" >&2; then
	die "the dkms-built module does not link against this kernel (above)"
fi
grep -q '^updates/dkms/mmap3.ko:' "$d/lib/modules/$krel/modules.dep" ||
	die "depmod did not list updates/dkms/mmap3.ko"
[ "$(modinfo -F version "$ko")" = "$ver" ] || die "$ko: modinfo version is not dkms.conf's $ver"
[ "$(modinfo -F vermagic "$ko" | cut -d' ' -f1)" = "$krel" ] || die "$ko: vermagic is not $krel"

cp "$ko" "$d/mmap3-dkms.ko"
echo "$ver" >"$d/mmap3-dkms.version"
log "dkms built and installed mmap3 $ver for $krel in $((SECONDS - start)) s: $d/mmap3-dkms.ko"
