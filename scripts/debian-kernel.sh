#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Debian's own, unmodified 7.3 kernel and the toolchain Debian built it
# with, for building and testing the module on the kernel a Debian user
# runs (issue #41):
#
#   scripts/debian-kernel.sh
#
# 1. Debian's packages of that kernel, for one exact version
#    ($DEBIAN_KVER, default: scripts/debian-lib.sh's pin; the run stops
#    when trixie-backports no longer serves it), fetched from trixie-backports
#    with apt-get download through a private sources list of the machine's
#    own Debian archive (scripts/lib.sh: private_apt; apt verifies the
#    Release file with the machine's keyring and each package against it)
#    and unpacked with dpkg-deb -x, never installed:
#      linux-image-$DEBIAN_KREL      and what it depends on at the
#                                    versions it names (since 7.3:
#                                    linux-{binary,modules,base}-*):
#                                    /usr/lib/modules/*/{vmlinuz,config}, modules
#      linux-headers-$DEBIAN_KREL    .config, .kernelvariables,
#                                    Module.symvers, vmlinux (BTF only);
#                                    no Rust metadata
#      linux-headers-$DEBIAN_KREL_BASE-common, linux-kbuild-$DEBIAN_KREL_BASE
#      linux-source-7.3              the source the image was built from
#    into $DEBIAN_DIR/{debs,image,headers,source}.
# 2. A trixie chroot ($DEBIAN_CHROOT), made with debootstrap (variant
#    minbase) from the machine's own archive and keyring, holding the
#    toolchain of the image's .config: gcc-14, rustc, rust-src, bindgen
#    (libclang), make, flex, bison, bc, libelf-dev, libssl-dev, kmod,
#    dwarves; and what the module's Debian package is built with.
#
# Writes the versions found to $DEBIAN_DIR/versions and
# $DEBIAN_CHROOT/versions. Idempotent: each step is skipped when its
# result is there (keyed by the kernel's package version and, for the
# chroot, by its package list). This machine is bookworm; nothing here
# changes its apt configuration. Everything is under $MMAP3_CACHE.
. "$(dirname "$0")/lib.sh"
. "$MMAP3_ROOT/scripts/debian-lib.sh"

[ "$(id -u)" = 0 ] || die "run as root (debootstrap and chroot need it)"
if ! command -v debootstrap >/dev/null; then
	log "installing debootstrap (the machine's own apt)"
	DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends debootstrap >/dev/null
fi

# 1. The kernel's packages.
if [ ! -e "$DEBIAN_DIR/.done" ]; then
	t0=$SECONDS
	rm -rf "$DEBIAN_DIR"
	mkdir -p "$DEBIAN_DIR/debs"
	apt=$(mktemp -d /tmp/mmap3-apt.XXXXXX)
	trap 'rm -rf "$apt"' EXIT
	private_apt "$apt" trixie-backports
	! id _apt >/dev/null 2>&1 || chown _apt "$DEBIAN_DIR/debs"
	pkgs=("linux-image-$DEBIAN_KREL" "linux-headers-$DEBIAN_KREL"
		"linux-headers-$DEBIAN_KREL_BASE-common" "linux-kbuild-$DEBIAN_KREL_BASE"
		linux-source-7.3)
	want=()
	for p in "${pkgs[@]}"; do
		# The image is built by linux-signed-amd64, whose version may
		# differ from linux's; take the newest served with this ABI.
		v=$(apt-cache "${APT_OPTS[@]}" madison "$p" | awk -F'|' '{ gsub(/ /, "", $2); print $2 }' | head -n 1)
		[ -n "$v" ] || die "trixie-backports serves no $p"
		case "$p" in
		linux-source-7.3 | linux-headers-* | linux-kbuild-*)
			apt-cache "${APT_OPTS[@]}" madison "$p" | grep -qF "| $DEBIAN_KVER |" ||
				die "trixie-backports serves no $p $DEBIAN_KVER (it has: $v)"
			v=$DEBIAN_KVER ;;
		esac
		want+=("$p=$v")
	done
	log "downloading ${want[*]} (apt-get download, about 300 MB)"
	(cd "$DEBIAN_DIR/debs" && apt-get "${APT_OPTS[@]}" download "${want[@]}" >"$apt/download.log" 2>&1) ||
		{ cat "$apt/download.log" >&2; die "apt-get download failed"; }
	# Since 7.3 linux-image-* is a package of dependencies: the kernel,
	# its modules and its config are in linux-{binary,modules,base}-*, at
	# the versions it names.
	deps=$(dpkg-deb -f "$DEBIAN_DIR"/debs/linux-image-"$DEBIAN_KREL"_*.deb Depends |
		tr ',' '\n' | sed -nE 's/^ *(linux-(base|binary|modules)-[^ ]+) \(= ([^)]*)\)$/\1=\3/p')
	if [ -n "$deps" ]; then
		log "downloading what linux-image-$DEBIAN_KREL depends on: $(echo $deps)"
		# shellcheck disable=SC2086 # one package=version a word
		(cd "$DEBIAN_DIR/debs" && apt-get "${APT_OPTS[@]}" download $deps >"$apt/download.log" 2>&1) ||
			{ cat "$apt/download.log" >&2; die "apt-get download failed"; }
	fi
	for d in "$DEBIAN_DIR"/debs/*.deb; do
		case "${d##*/}" in
		linux-image-* | linux-base-* | linux-binary-* | linux-modules-*) to=image ;;
		linux-source-*) to=source ;;
		*) to=headers ;;
		esac
		dpkg-deb -x "$d" "$DEBIAN_DIR/$to"
		printf '%s %s\n' "$(dpkg-deb -f "$d" Package)" "$(dpkg-deb -f "$d" Version)"
	done >"$DEBIAN_DIR/versions"
	[ -e "$DEBIAN_DIR/image/usr/lib/modules/$DEBIAN_KREL/vmlinuz" ] ||
		die "linux-image-$DEBIAN_KREL holds no /usr/lib/modules/$DEBIAN_KREL/vmlinuz"
	grep -E '^CONFIG_(CC_VERSION_TEXT|RUSTC_VERSION_TEXT|BINDGEN_VERSION_TEXT|RUST|MODVERSIONS|CC_IS_GCC|CC_IS_CLANG)=' \
		"$DEBIAN_DIR/image/usr/lib/modules/$DEBIAN_KREL/config" >>"$DEBIAN_DIR/versions" || true
	touch "$DEBIAN_DIR/.done"
	log "the kernel's packages in $DEBIAN_DIR ($((SECONDS - t0)) s)"
	rm -rf "$apt"
	trap - EXIT
fi
cat "$DEBIAN_DIR/versions" >&2

# 2. The trixie chroot.
if [ ! -e "$DEBIAN_CHROOT/.done" ]; then
	t0=$SECONDS
	debian_archive
	rm -rf "$DEBIAN_CHROOT"
	mkdir -p "$DEBIAN_CHROOT"
	kr=()
	[ "$DEBIAN_KEYRING" = - ] || kr=(--keyring="$DEBIAN_KEYRING")
	log "debootstrap trixie (minbase + ${DEBIAN_CHROOT_PKGS[*]}) into $DEBIAN_CHROOT (several minutes)"
	debootstrap --variant=minbase "${kr[@]}" \
		--include="$(IFS=,; echo "${DEBIAN_CHROOT_PKGS[*]}")" \
		trixie "$DEBIAN_CHROOT" "$DEBIAN_URI" >"$DEBIAN_CHROOT.log" 2>&1 ||
		{ tail -n 30 "$DEBIAN_CHROOT.log" >&2; die "debootstrap failed (log: $DEBIAN_CHROOT.log)"; }
	in_chroot dpkg-query -W -f='${Package} ${Version}\n' "${DEBIAN_CHROOT_PKGS[@]}" \
		libclang1-19 rustc rust-src >"$DEBIAN_CHROOT/versions"
	in_chroot sh -c 'gcc-14 --version | head -n 1; rustc --version; bindgen --version' \
		>>"$DEBIAN_CHROOT/versions"
	touch "$DEBIAN_CHROOT/.done"
	log "the trixie chroot in $DEBIAN_CHROOT ($((SECONDS - t0)) s)"
fi
sort -u "$DEBIAN_CHROOT/versions" >&2
