# SPDX-License-Identifier: GPL-2.0
# Settings for the scripts that work on Debian's own kernel
# (scripts/debian-*.sh); sourced after scripts/lib.sh, never run.

# The Debian version of the kernel's packages (linux-source-7.3,
# linux-headers-*, linux-kbuild-*) and its ABI name (uname -r).
DEBIAN_KVER=${DEBIAN_KVER:-7.3.4-1~bpo13+1}
DEBIAN_KREL_BASE=${DEBIAN_KREL_BASE:-7.3.4+deb13}
DEBIAN_KREL=$DEBIAN_KREL_BASE-amd64
# The packages, unpacked (scripts/debian-kernel.sh).
DEBIAN_DIR=$MMAP3_CACHE/debian-kernel-$DEBIAN_KVER
# The trixie chroot: Debian's toolchain of that kernel and its packaging
# tools, keyed by its package list. Trixie's gcc-14, rustc and bindgen are
# what the image's .config names (CONFIG_CC_VERSION_TEXT,
# CONFIG_RUSTC_VERSION_TEXT, CONFIG_BINDGEN_VERSION_TEXT);
# scripts/debian-module.sh checks that they still are. openssl: the .config
# has CONFIG_OPENSSL_SUPPORTS_ML_DSA=y, which Kconfig sets by running it.
# build-essential to dh-dkms: scripts/debian-dkms.sh builds the module's
# Debian package; gcc-14-for-host and linux-base: what Debian's
# linux-headers-* depend on, installed there as a user has them.
DEBIAN_CHROOT_PKGS=(gcc-14 gcc make flex bison bc libelf-dev libssl-dev kmod dwarves cpio
	rustc rust-src bindgen libclang-dev python3 xz-utils openssl
	build-essential dpkg-dev debhelper dh-dkms dkms fakeroot gcc-14-for-host linux-base)
DEBIAN_CHROOT=$MMAP3_CACHE/debian-chroot-trixie-$(printf '%s\n' "${DEBIAN_CHROOT_PKGS[@]}" | sha256sum | cut -c1-8)

# in_chroot CMD...: run CMD in the chroot as root, with /proc and /dev, in
# a mount namespace of its own (the mounts end with it), with a clean
# environment.
in_chroot() {
	unshare --mount --propagation private sh -c '
		r=$1; shift
		mount -t proc proc "$r/proc" && mount --rbind /dev "$r/dev" &&
		exec chroot "$r" /usr/bin/env -i HOME=/root LANG=C.UTF-8 \
			PATH=/usr/local/bin:/usr/bin:/bin:/usr/sbin:/sbin "$@"' sh "$DEBIAN_CHROOT" "$@"
}

# The module built for that kernel (scripts/debian-module.sh), per checkout.
DEBIAN_MODULE_DIR=$MMAP3_WORK/debian-$DEBIAN_KVER
DEBIAN_MODULE=$DEBIAN_MODULE_DIR/mmap3.ko
