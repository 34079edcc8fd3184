# SPDX-License-Identifier: GPL-2.0
# Common settings for the mmap3 scripts; sourced, never run.
#
# Everything built or downloaded lives in $MMAP3_CACHE (default
# ${XDG_CACHE_HOME:-~/.cache}/mmap3), never in the repository.

set -euo pipefail

MMAP3_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
MMAP3_CACHE=${MMAP3_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/mmap3}

# The kernel the series is written against (DESIGN.md).
KVER_PIN=6.12.117-1~deb12u1
KSRC_TARBALL=/usr/src/linux-source-6.12.tar.xz
KSRC=$MMAP3_CACHE/linux-source-6.12        # git repository, patches applied

# Which kernel the scripts build and boot (MMAP3_KERNEL):
#   test      the series, tinyconfig + kernel/mmap3.config (the default);
#   debug     the same + kernel/debug.config (KASAN, lockdep, kmemleak,
#             PREEMPT, fault injection, ...);
#   kcsan     the same + kernel/kcsan.config (the data race detector, which
#             excludes KASAN);
#   upstream  no series (a worktree at mmap3-base): the benchmarks' baseline.
MMAP3_KERNEL=${MMAP3_KERNEL:-test}
KCONFIG_FRAGMENTS=("$MMAP3_ROOT/kernel/mmap3.config")
case "$MMAP3_KERNEL" in
test) KOBJ=$MMAP3_CACHE/kernel-build ;;
debug)
	KOBJ=$MMAP3_CACHE/kernel-debug
	KCONFIG_FRAGMENTS+=("$MMAP3_ROOT/kernel/debug.config")
	;;
kcsan)
	KOBJ=$MMAP3_CACHE/kernel-kcsan
	KCONFIG_FRAGMENTS+=("$MMAP3_ROOT/kernel/kcsan.config")
	;;
upstream) KOBJ=$MMAP3_CACHE/kernel-upstream ;;
*) printf 'MMAP3_KERNEL must be test, debug, kcsan or upstream\n' >&2; exit 1 ;;
esac
# What is built from this checkout (module, guest files): one directory per
# checkout, so that two checkouts can test side by side on one kernel.
MMAP3_WORK=$MMAP3_CACHE/work/$(printf '%s' "$MMAP3_ROOT" | sha256sum | cut -c1-8)

# perf (scripts/perf.sh), per checkout like the module: its source tree, a
# worktree of $KSRC at mmap3-base with this checkout's kernel series and perf
# series as commits, and the builds from it (the patched perf; with
# --asan, the same built with AddressSanitizer for the host tests) and of
# upstream's perf from $UPSTREAM_SRC (MMAP3_KERNEL=upstream).
PERF_SRC=$MMAP3_WORK/linux-perf
PERF_BUILD=$MMAP3_WORK/perf-build
PERF_ASAN_BUILD=$MMAP3_WORK/perf-asan
PERF_UPSTREAM_BUILD=$MMAP3_WORK/perf-upstream

# perf without the optional libraries (python, perl, libtraceevent, libbpf,
# libunwind, libdw, slang, libLLVM, ...): libelf and zlib only.
PERF_MAKE_FLAGS=(
	NO_LIBPYTHON=1 NO_LIBPERL=1 NO_LIBTRACEEVENT=1 NO_LIBLLVM=1 NO_LIBBPF=1
	NO_JVMTI=1 NO_LIBUNWIND=1 NO_LIBDW_DWARF_UNWIND=1 NO_DWARF=1
	NO_LIBDEBUGINFOD=1 NO_SLANG=1 NO_GTK2=1 NO_LIBBABELTRACE=1 NO_LIBNUMA=1
	NO_LIBCAP=1 NO_LIBPFM4=1 NO_DEMANGLE=1 NO_LIBZSTD=1 NO_LIBCRYPTO=1
	NO_LZMA=1 NO_CAPSTONE=1 NO_LIBAUDIT=1 NO_SDT=1 NO_SHELLCHECK=1
	NO_JEVENTS=1
)

export PATH=/usr/lib/llvm-19/bin:$HOME/.cargo/bin:$PATH
JOBS=${JOBS:-$(nproc)}

mkdir -p "$MMAP3_CACHE"

log() { printf '[mmap3] %s\n' "$*" >&2; }
die() { printf '[mmap3] error: %s\n' "$*" >&2; exit 1; }

# hash_of FILE... : one stable hash over the named files' names and contents.
hash_of() {
	local f
	for f in "$@"; do
		printf '%s\n' "${f#"$MMAP3_ROOT"/}"
		cat "$f"
	done | sha256sum | cut -c1-16
}

# series DIR: the patches of a series, in order, without its cover letter.
series() {
	local p
	for p in "$1"/*.patch; do
		case "$p" in */0000-cover-letter.patch | "$1/*.patch") ;; *) echo "$p" ;; esac
	done
}

# image_series DIR: the patches of DIR's series that change the kernel
# itself: any file outside tools/testing/selftests/ and MAINTAINERS. The
# selftests patch is left to scripts/kselftest-install.sh, so that a change
# of a test does not rebuild the kernel.
image_series() {
	local p
	for p in $(series "$1"); do
		grep '^diff --git a/' "$p" |
			grep -qvE '^diff --git a/(tools/testing/selftests/|MAINTAINERS )' && echo "$p"
	done
	return 0
}

# upstream_worktree: $MMAP3_CACHE/linux-upstream, a worktree of $KSRC at
# mmap3-base (no series), made or reset when it is not there.
UPSTREAM_SRC=$MMAP3_CACHE/linux-upstream
upstream_worktree() {
	if [ "$(git -C "$UPSTREAM_SRC" rev-parse HEAD 2>/dev/null)" != "$(git -C "$KSRC" rev-parse mmap3-base)" ]; then
		log "making the upstream worktree $UPSTREAM_SRC (mmap3-base)"
		rm -rf "$UPSTREAM_SRC"
		git -C "$KSRC" worktree prune
		git -C "$KSRC" worktree add -q --detach "$UPSTREAM_SRC" mmap3-base
	fi
}
