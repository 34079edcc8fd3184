#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Install what the build, the guest and the tests need, once: Debian packages,
# rustup's rust-src and bindgen-cli. Safe to run again; does nothing then.
. "$(dirname "$0")/lib.sh"

# linux-source-6.12: the 6.12 kernel (MMAP3_KVER=6.12). linux-source-7.3,
# the 7.3 kernel and the tree perf is built from for both kernels
# (PERF_KVER, scripts/lib.sh), is not a bookworm package:
# scripts/kernel-source.sh downloads it. perf needs nothing more than the
# kernel: libelf-dev, zlib1g-dev, flex, bison, make, gcc. valgrind:
# buildid/callgrind-hit.sh, in make bench (which installs it too, run alone).
APT_PKGS=(linux-source-6.12 clang-19 lld-19 llvm-19 libclang-19-dev flex bison bc
	  libelf-dev libssl-dev pahole kmod cpio busybox-static qemu-system-x86
	  e2fsprogs make gcc libc6-dev binutils python3 rsync zlib1g-dev dkms
	  squashfs-tools erofs-utils btrfs-progs valgrind hotspot libtraceevent-dev)
BINDGEN_VERSION=0.73.2

missing=()
for p in "${APT_PKGS[@]}"; do
	dpkg-query -W -f='${Status}\n' "$p" 2>/dev/null | grep -q '^install ok installed' ||
		missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
	log "installing Debian packages: ${missing[*]}"
	[ "$(id -u)" = 0 ] || die "run as root (apt-get needs it), or install: ${missing[*]}"
	export DEBIAN_FRONTEND=noninteractive
	apt-get update -q >/dev/null
	pins=()
	for p in "${missing[@]}"; do
		if [ "$p" = linux-source-6.12 ] &&
		   apt-cache madison linux-source-6.12 | grep -F "| $(kver_pin 6.12) |" >/dev/null; then
			pins+=("linux-source-6.12=$(kver_pin 6.12)")
		elif [ "$p" = linux-source-6.12 ]; then
			log "linux-source-6.12 $(kver_pin 6.12) is no longer served; taking the newest 6.12"
			pins+=("$p")
		else
			pins+=("$p")
		fi
	done
	apt-get install -y -q --no-install-recommends "${pins[@]}" >/dev/null
fi

command -v rustup >/dev/null || die "rustup not found: install Rust with rustup first"
if ! rustup component list --installed 2>/dev/null | grep -q '^rust-src'; then
	log "adding rustup component rust-src"
	rustup component add rust-src >/dev/null
fi
if ! bindgen --version 2>/dev/null | grep -qF "$BINDGEN_VERSION"; then
	log "installing bindgen-cli $BINDGEN_VERSION (cargo install, a few minutes)"
	cargo install --locked --quiet bindgen-cli --version "$BINDGEN_VERSION"
fi
