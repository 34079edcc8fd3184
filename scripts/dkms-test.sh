#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Build and install mmap3.ko with dkms and dkms.conf, as a distribution does
# for each of its installed kernels, against the cached kernels as their
# headers (scripts/kernel.sh), then check with depmod that every symbol it
# needs is exported by each:
#
#   scripts/dkms-test.sh [VER...]     (default: $MMAP3_KVER; 7.3 6.12: both)
#
# One source is added once; dkms builds and installs it for every kernel.
# Everything lives in a private dkms tree, $MMAP3_WORK/dkms-$MMAP3_KERNEL:
# the source as dkms expects it (source/mmap3-<version>), dkms's tree
# (tree/), the install tree (lib/modules/<kernel>/updates/dkms); /usr/src,
# /var/lib/dkms and /lib/modules are not touched. Each installed module is
# left there as <kernel release>/mmap3-dkms.ko, with its version in
# mmap3-dkms.version: scripts/guest.sh stages the one of the kernel it
# boots, and tests/qemu/all.sh loads it in place of the one of
# scripts/module.sh.
. "$(dirname "$0")/lib.sh"

command -v dkms >/dev/null || die "dkms not found (scripts/deps.sh installs it)"
[ $# -gt 0 ] || set -- "$MMAP3_KVER"

d=$MMAP3_WORK/dkms-$MMAP3_KERNEL
ver=$(sed -n 's/^PACKAGE_VERSION="\([^"]*\)"$/\1/p' "$MMAP3_ROOT/dkms.conf")
[ -n "$ver" ] || die "dkms.conf: no PACKAGE_VERSION"
src=$d/source/mmap3-$ver
rm -rf "$d"
mkdir -p "$src" "$d/tree"
rsync -a --exclude target --exclude '*.o' --exclude '*.ko' --exclude '.*.cmd' \
	"$MMAP3_ROOT"/{dkms.conf,Kbuild,Makefile,src,rust} "$src/"

# dkms runs depmod for /lib/modules only, hence --no-depmod and depmod -b
# below. Should dkms find a sign-file for this kernel, its key and
# certificate are made here, not in /var/lib/dkms.
export mok_signing_key=$d/mok.key mok_certificate=$d/mok.pub
tree_opts=(--dkmstree "$d/tree" --sourcetree "$d/source" --installtree "$d/lib/modules")
# dkms_do ACTION [OPTION...]: dkms ACTION -m mmap3 -v VER, in the private tree.
dkms_do() {
	local action=$1
	shift
	dkms "$action" -m mmap3 -v "$ver" "${tree_opts[@]}" "$@" >>"$d/dkms.log" 2>&1 || {
		cat "$d/dkms.log" >&2
		cat "$d"/tree/mmap3/"$ver"/build/make.log >&2 2>/dev/null || true
		die "dkms $action $* failed"
	}
}
log "dkms add -m mmap3 -v $ver (tree $d)"
dkms_do add

for kv in "$@"; do
	kobj=$(kobj "$kv")
	[ -f "$kobj/.mmap3-key" ] || die "no $kv kernel in $kobj: run MMAP3_KVER=$kv scripts/kernel.sh"
	krel=$(cat "$kobj/include/config/kernel.release")
	mkdir -p "$d/lib/modules/$krel"
	# A kernel install tree has these beside the modules; depmod reads them.
	cp "$kobj"/{modules.order,modules.builtin,modules.builtin.modinfo} "$d/lib/modules/$krel/"
	log "dkms build, install -m mmap3 -v $ver -k $krel --kernelsourcedir $kobj"
	start=$SECONDS
	kopts=(-k "$krel" --kernelsourcedir "$kobj" --no-depmod -j "$JOBS")
	dkms_do build "${kopts[@]}"
	dkms_do install "${kopts[@]}"
	status=$(dkms status -m mmap3 -v "$ver" -k "$krel" "${tree_opts[@]}" 2>&1)
	printf '%s\n' "$status" >>"$d/dkms.log"
	case "$status" in
	*": installed") ;;
	*) cat "$d/dkms.log" >&2; die "dkms status for $krel does not say installed: $status" ;;
	esac

	ko=$d/lib/modules/$krel/updates/dkms/mmap3.ko
	[ -f "$ko" ] || die "dkms installed no $ko"
	depmod -b "$d" -e -F "$kobj/System.map" "$krel" 2>"$d/depmod-$krel.log" || {
		cat "$d/depmod-$krel.log" >&2; die "depmod failed for $krel"; }
	if grep -E 'unknown symbol|disagrees' "$d/depmod-$krel.log" >&2; then
		die "the dkms-built module does not link against $krel (above)"
	fi
	grep -q '^updates/dkms/mmap3.ko:' "$d/lib/modules/$krel/modules.dep" ||
		die "depmod did not list updates/dkms/mmap3.ko for $krel"
	[ "$(modinfo -F version "$ko")" = "$ver" ] || die "$ko: modinfo version is not dkms.conf's $ver"
	[ "$(modinfo -F vermagic "$ko" | cut -d' ' -f1)" = "$krel" ] || die "$ko: vermagic is not $krel"

	mkdir -p "$d/$krel"
	cp "$ko" "$d/$krel/mmap3-dkms.ko"
	echo "$ver" >"$d/$krel/mmap3-dkms.version"
	log "dkms built and installed mmap3 $ver for $krel in $((SECONDS - start)) s: $d/$krel/mmap3-dkms.ko"
done
