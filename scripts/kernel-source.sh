#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Make $(ksrc VER) (default VER: $MMAP3_KVER): Debian's linux-source-VER,
# unpacked as a git repository whose first commit is tagged mmap3-base;
# scripts/kernel.sh applies the series on branch mmap3.
#
#   scripts/kernel-source.sh [7.3|6.12]
#
# 6.12 comes from the installed linux-source-6.12 (scripts/deps.sh installs
# it, pinned). 7.3 is not served for bookworm: it is fetched from
# trixie-backports with apt-get download and unpacked with dpkg-deb -x,
# never installed, and without changing the machine's apt configuration:
# a private sources list, lists and cache in a scratch directory, with the
# mirror and keyring of the machine's own Debian sources. apt verifies the
# trixie-backports Release file with that keyring (debian-archive-keyring
# has trixie's keys since bookworm's 2023.3+deb12u1) and the package against
# it; nothing here weakens that, and a failed verification stops the run.
# The pinned version is taken when served, else the newest 7.3, with a log
# line. Does nothing when the tree already holds the version wanted.
. "$(dirname "$0")/lib.sh"

ver=${1:-$MMAP3_KVER}
pin=$(kver_pin "$ver")
src=$(ksrc "$ver")
pkg=linux-source-$ver
have=$(cat "$src/.git/mmap3-version" 2>/dev/null || true)

# unpack TARBALL KVER: $src from TARBALL, a git repository tagged mmap3-base.
unpack() {
	local tarball=$1 kver=$2
	log "unpacking $pkg $kver into $src (about a minute)"
	rm -rf "$src" "$src.tmp"
	mkdir -p "$src.tmp"
	tar -C "$src.tmp" -xf "$tarball"
	mv "$src.tmp/$pkg" "$src"
	rmdir "$src.tmp"
	log "making $src a git repository (base commit mmap3-base)"
	git -C "$src" init -q -b mmap3
	git -C "$src" add -A -f   # -f: Debian's .gitignore ignores the top level
	git -C "$src" -c user.name=mmap3 -c user.email=mmap3@localhost \
		commit -q -m "Debian $pkg $kver"
	git -C "$src" tag -f mmap3-base >/dev/null
	echo "$kver" >"$src/.git/mmap3-version"
}

case "$ver" in
6.12)
	"$MMAP3_ROOT/scripts/deps.sh"
	kver=$(dpkg-query -W -f='${Version}' "$pkg")
	[ "$kver" = "$pin" ] || log "note: building $pkg $kver, not the pinned $pin"
	[ "$have" = "$kver" ] || unpack "/usr/src/$pkg.tar.xz" "$kver"
	exit 0
	;;
7.3) suite=trixie-backports ;;
*) die "usage: scripts/kernel-source.sh [7.3|6.12]" ;;
esac
[ "$have" != "$pin" ] || exit 0

# A scratch apt state for $suite main of the machine's own Debian archive
# (scripts/lib.sh: private_apt), removed on exit.
apt=$(mktemp -d /tmp/mmap3-apt.XXXXXX)
trap 'rm -rf "$apt"' EXIT
mkdir -p "$apt/deb"
private_apt "$apt" "$suite"
! id _apt >/dev/null 2>&1 || [ "$(id -u)" != 0 ] || chown _apt "$apt/deb"
aptopts=("${APT_OPTS[@]}")
versions=$(apt-cache "${aptopts[@]}" madison "$pkg" | awk -F'|' '{ gsub(/ /, "", $2); print $2 }')
if printf '%s\n' "$versions" | grep -qxF "$pin"; then
	kver=$pin
else
	kver=
	for v in $versions; do
		[ -n "$kver" ] && dpkg --compare-versions "$v" le "$kver" || kver=$v
	done
	[ -n "$kver" ] || die "$suite serves no $pkg"
	log "$pkg $pin is no longer served; taking the newest, $kver"
fi
[ "$have" != "$kver" ] || exit 0
log "downloading $pkg $kver (apt-get download, about 170 MB)"
(cd "$apt/deb" && apt-get "${aptopts[@]}" download "$pkg=$kver" >"$apt/download.log" 2>&1) ||
	{ cat "$apt/download.log" >&2; die "apt-get download $pkg=$kver failed"; }
deb=$(ls "$apt/deb/"*.deb)
dpkg-deb -x "$deb" "$apt/root"
unpack "$apt/root/usr/src/$pkg.tar.xz" "$kver"
