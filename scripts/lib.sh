# SPDX-License-Identifier: GPL-2.0
# Common settings for the mmap3 scripts; sourced, never run.
#
# Everything built or downloaded lives in $MMAP3_CACHE (default
# ${XDG_CACHE_HOME:-~/.cache}/mmap3), never in the repository.

set -euo pipefail

log() { printf '[mmap3] %s\n' "$*" >&2; }
die() { printf '[mmap3] error: %s\n' "$*" >&2; exit 1; }

MMAP3_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
MMAP3_CACHE=${MMAP3_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/mmap3}

# Which kernel (MMAP3_KVER):
#   7.3   Debian's linux-source-7.3 (trixie-backports, fetched into the
#         cache by scripts/kernel-source.sh, never installed), with the
#         series of patches/: the upstream-facing series (the default);
#   6.12  Debian's linux-source-6.12 (installed by scripts/deps.sh), with
#         the series' backport in patches/6.12/ (its cover letter says what
#         differs) and the selftests patch of patches/, which applies to both.
# Each version has its own source tree and build directories, so switching
# does not rebuild the other one; 6.12's keep the names they had before 7.3.
MMAP3_KVER=${MMAP3_KVER:-7.3}
# kver_pin VER: the Debian version of linux-source-VER the series is
# written against (DESIGN.md); a newer one is taken, with a log line, when
# that one is no longer served.
kver_pin() {
	case "$1" in
	7.3) echo 7.3.4-1~bpo13+1 ;;
	6.12) echo 6.12.117-1~deb12u1 ;;
	*) die "MMAP3_KVER must be 7.3 or 6.12, not $1" ;;
	esac
}
# ksrc VER: the git repository of linux-source-VER (tag mmap3-base; branch
# mmap3 with the kernel series applied), made by scripts/kernel-source.sh.
ksrc() { echo "$MMAP3_CACHE/linux-source-$1"; }
# kpatches VER: the folder of VER's kernel series.
kpatches() {
	case "$1" in
	7.3) echo "$MMAP3_ROOT/patches" ;;
	6.12) echo "$MMAP3_ROOT/patches/6.12" ;;
	*) die "MMAP3_KVER must be 7.3 or 6.12, not $1" ;;
	esac
}
# ktag VER: the suffix of what is built for VER: none for 6.12.
ktag() { [ "$1" = 6.12 ] || echo "-$1"; }
KVER_PIN=$(kver_pin "$MMAP3_KVER")
KSRC=$(ksrc "$MMAP3_KVER")
KPATCHES=$(kpatches "$MMAP3_KVER")
# The series' selftests patch of $MMAP3_KVER (the same tests; 6.12's take
# kselftest_harness.h from the directory above).
SELFTESTS_PATCH=$KPATCHES/0005-selftests-perf_events-Add-PERF_RECORD_MMAP3-tests.patch
KTAG=$(ktag "$MMAP3_KVER")

# Which kernel the scripts build and boot (MMAP3_KERNEL):
#   test      the series, tinyconfig + configs/mmap3.config and
#             configs/$MMAP3_KVER.config (the default);
#   debug     the same + configs/debug.config (KASAN, lockdep, kmemleak,
#             PREEMPT, fault injection, ...);
#   kcsan     the same + configs/kcsan.config (the data race detector, which
#             excludes KASAN);
#   upstream  no series (a worktree at mmap3-base): the benchmarks' baseline.
MMAP3_KERNEL=${MMAP3_KERNEL:-test}
KCONFIG_FRAGMENTS=("$MMAP3_ROOT/configs/mmap3.config" "$MMAP3_ROOT/configs/$MMAP3_KVER.config")
# kobj VER: the build directory of VER's kernel of this variant.
kobj() {
	case "$MMAP3_KERNEL" in
	test) echo "$MMAP3_CACHE/kernel-build$(ktag "$1")" ;;
	debug | kcsan | upstream) echo "$MMAP3_CACHE/kernel-$MMAP3_KERNEL$(ktag "$1")" ;;
	*) die "MMAP3_KERNEL must be test, debug, kcsan or upstream, not $MMAP3_KERNEL" ;;
	esac
}
KOBJ=$(kobj "$MMAP3_KVER")
case "$MMAP3_KERNEL" in
debug | kcsan) KCONFIG_FRAGMENTS+=("$MMAP3_ROOT/configs/$MMAP3_KERNEL.config") ;;
esac
# What is built from this checkout for this kernel and variant (module,
# second provider, dkms tree): module-$MMAP3_BUILD and so on.
MMAP3_BUILD=$MMAP3_KERNEL$KTAG
# What is built from this checkout (module, guest files): one directory per
# checkout, so that two checkouts can test side by side on one kernel.
MMAP3_WORK=$MMAP3_CACHE/work/$(printf '%s' "$MMAP3_ROOT" | sha256sum | cut -c1-8)

# perf (scripts/perf.sh), per checkout like the module, and one perf for
# both kernels (it runs on either): built from the tree of PERF_KVER, the
# version the perf series (patches/perf/) is written against. Its source
# tree, a worktree of $(ksrc $PERF_KVER) at mmap3-base with that version's
# kernel series and the perf series as commits, and the builds from it (the
# patched perf; with --asan, the same built with AddressSanitizer for the
# host tests) and of upstream's perf from $(upstream_src $PERF_KVER)
# (MMAP3_KERNEL=upstream).
PERF_KVER=7.3
PERF_SRC=$MMAP3_WORK/linux-perf
PERF_BUILD=$MMAP3_WORK/perf-build
PERF_ASAN_BUILD=$MMAP3_WORK/perf-asan
PERF_UPSTREAM_BUILD=$MMAP3_WORK/perf-upstream

# perf as distributions build it as far as the tests go: with libelf and
# zlib, libtraceevent (the distribution's, libtraceevent-dev: what
# `perf script` and `perf evlist` print tracepoints' fields with, for
# `perf record -e mmap3:build_id`) and libbpf, which perf record needs to
# write the bpf_prog_info of BPF programs (PERF_RECORD_BPF_EVENT) into
# perf.data: perf's default, a static build of the tree's own
# tools/lib/bpf (libbpf 1.8, what 7.3's perf is written against), not
# bookworm's libbpf-dev (1.1.2: it passes 7.3's check, 1.0 or newer, for
# LIBBPF_DYNAMIC=1, but is seven releases older, and the guest would need
# one more library). Without the BPF skeletons (BUILD_BPF_SKEL=0: bpftool,
# bperf counters, off-CPU, lock contention, sample filters): each of the
# three builds would also build bpftool and compile the BPF programs with
# clang, for features no test uses, whose CO-RE programs need the kernel's
# BTF, which the test kernels do not have (no CONFIG_DEBUG_INFO_BTF).
# Everything else optional (python, perl, libunwind, libdw, slang,
# libLLVM, ...) is off. NO_LIBDW is 7.3's name for what NO_DWARF was;
# NO_RUST leaves out 7.3's Rust test workload (perf test -w
# code_with_type), which ar fails to archive here ("LLVM ERROR: Invalid
# encoding": the LLVMgold plugins of LLVM 14 and 19 that ar loads do not
# read the objects of the machine's newer rustc).
PERF_MAKE_FLAGS=(
	BUILD_BPF_SKEL=0
	NO_LIBPYTHON=1 NO_LIBPERL=1 NO_LIBLLVM=1
	NO_JVMTI=1 NO_LIBUNWIND=1 NO_LIBDW_DWARF_UNWIND=1 NO_DWARF=1 NO_LIBDW=1
	NO_LIBDEBUGINFOD=1 NO_SLANG=1 NO_GTK2=1 NO_LIBBABELTRACE=1 NO_LIBNUMA=1
	NO_LIBCAP=1 NO_LIBPFM4=1 NO_DEMANGLE=1 NO_LIBZSTD=1 NO_LIBCRYPTO=1
	NO_LZMA=1 NO_CAPSTONE=1 NO_LIBAUDIT=1 NO_SDT=1 NO_SHELLCHECK=1
	NO_JEVENTS=1 NO_RUST=1
)

export PATH=/usr/lib/llvm-19/bin:$HOME/.cargo/bin:$PATH
# One make job more than CPUs: a core is not left idle while a job waits
# for make to walk the tree, the linker or the disk.
JOBS=${JOBS:-$(($(nproc) + 1))}

mkdir -p "$MMAP3_CACHE"

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

# kseries VER: what the test kernel of VER carries, in order, without cover
# letters: the series of its folder (its selftests patch, 0005, last), then
# the provider add-on of its provider/ folder (not for upstream).
kseries() {
	local dir
	dir=$(kpatches "$1")
	series "$dir"
	series "$dir/provider"
}

# image_series VER: the patches of VER's kernel series that change the
# kernel itself: any file outside tools/testing/selftests/ and MAINTAINERS.
# The selftests patch is left to scripts/kselftest-install.sh, so that a
# change of a test does not rebuild the kernel.
image_series() {
	local p
	for p in $(kseries "$1"); do
		grep '^diff --git a/' "$p" |
			grep -qvE '^diff --git a/(tools/testing/selftests/|MAINTAINERS )' && echo "$p"
	done
	return 0
}

# upstream_src VER: $MMAP3_CACHE/linux-upstream (6.12; -7.3 for 7.3), a
# worktree of VER's tree at mmap3-base: no series.
upstream_src() { echo "$MMAP3_CACHE/linux-upstream$(ktag "$1")"; }
UPSTREAM_SRC=$(upstream_src "$MMAP3_KVER")
# upstream_worktree [VER]: make or reset upstream_src VER (default
# $MMAP3_KVER) when it is not at mmap3-base.
upstream_worktree() {
	local ver=${1:-$MMAP3_KVER} src dir
	src=$(ksrc "$ver")
	dir=$(upstream_src "$ver")
	if [ "$(git -C "$dir" rev-parse HEAD 2>/dev/null)" != "$(git -C "$src" rev-parse mmap3-base)" ]; then
		log "making the upstream worktree $dir (mmap3-base)"
		rm -rf "$dir"
		git -C "$src" worktree prune
		git -C "$src" worktree add -q --detach "$dir" mmap3-base
	fi
}

# debian_archive: set DEBIAN_URI and DEBIAN_KEYRING ("-" when the entry
# names none) to the URI and keyring of the machine's own Debian archive:
# the apt source entry of its release (deb822 .sources or one-line
# sources.list). Nothing names a mirror: it is the machine's.
debian_archive() {
	local codename uri keyring
	codename=$(. /etc/os-release && echo "${VERSION_CODENAME:-}")
	[ -n "$codename" ] || die "no VERSION_CODENAME in /etc/os-release"
	read -r uri keyring < <(
		{
			cat /etc/apt/sources.list.d/*.sources 2>/dev/null
			echo
		} | awk -v suite="$codename" '
			function flush() {
				if (deb && uri != "" && (" " suites " ") ~ (" " suite " "))
					print uri, (key == "" ? "-" : key)
				deb = 0; uri = ""; suites = ""; key = ""
			}
			/^[ \t]*$/ { flush(); next }
			tolower($1) == "types:" { for (i = 2; i <= NF; i++) if ($i == "deb") deb = 1 }
			tolower($1) == "uris:" { uri = $2 }
			tolower($1) == "suites:" { suites = ""; for (i = 2; i <= NF; i++) suites = suites " " $i }
			tolower($1) == "signed-by:" && NF == 2 { key = $2 }
			END { flush() }' | head -n 1
	)
	if [ -z "${uri:-}" ]; then
		read -r uri keyring < <(
			cat /etc/apt/sources.list /etc/apt/sources.list.d/*.list 2>/dev/null |
				awk -v suite="$codename" '$1 == "deb" {
					key = "-"; i = 2
					if ($2 ~ /^\[/) {
						for (; i <= NF; i++) {
							if ($i ~ /^\[?signed-by=/) { key = $i; sub(/^\[?signed-by=/, "", key); sub(/\]$/, "", key) }
							if ($i ~ /\]$/) { i++; break }
						}
					}
					if ($(i + 1) == suite) { print $i, key; exit }
				}'
		)
	fi
	[ -n "${uri:-}" ] || die "no Debian archive for $codename in the machine's apt sources"
	DEBIAN_URI=$uri
	DEBIAN_KEYRING=$keyring
}

# private_apt DIR SUITE [COMPONENTS]: a scratch apt state in DIR (sources
# list, lists, cache) for SUITE of the machine's own Debian archive
# (components: main unless given), without touching the machine's apt
# configuration; APT_OPTS then holds the options that make apt-get and
# apt-cache use it. Runs apt-get update: apt verifies SUITE's Release file
# with the machine's keyring and every package downloaded later against it;
# nothing here weakens that, and a failed verification stops the run.
private_apt() {
	local dir=$1 suite=$2 comps=${3:-main} opts=
	debian_archive
	[ "$DEBIAN_KEYRING" = - ] || opts="[signed-by=$DEBIAN_KEYRING] "
	# _apt, which apt downloads as, must be able to enter DIR.
	chmod 755 "$dir"
	mkdir -p "$dir/sources.list.d" "$dir/lists/partial" "$dir/cache/archives/partial"
	echo "deb $opts$DEBIAN_URI $suite $comps" >"$dir/sources.list"
	APT_OPTS=(-q -o Dir::Etc::SourceList="$dir/sources.list"
		-o Dir::Etc::SourceParts="$dir/sources.list.d" -o Dir::State::Lists="$dir/lists"
		-o Dir::Cache="$dir/cache")
	log "fetching the $suite index (a private sources list: $suite $comps of the machine's mirror)"
	if ! apt-get "${APT_OPTS[@]}" update >"$dir/update.log" 2>&1 ||
	   grep -qE '^(W|E): .*(GPG|[Ss]ign|NO_PUBKEY|EXPKEYSIG|not signed)' "$dir/update.log"; then
		cat "$dir/update.log" >&2
		grep -q NO_PUBKEY "$dir/update.log" &&
			log "the keyring ${DEBIAN_KEYRING/#-/of apt} lacks the key $suite is signed with: upgrade debian-archive-keyring"
		die "apt-get update of $suite failed (above); its signature is not checked away"
	fi
}
