#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# `make rust-analyzer [KDIR=<kernel tree or build directory>]`: write
# rust-project.json (gitignored) at the top of the repository, for editors
# that run rust-analyzer, with the kernel's own generator:
#
#   make -C <kdir> M=<repository> rust-analyzer
#
# KDIR is the Makefile's, the running kernel's build directory by default;
# when that does not exist, the kernel of `make test` in $MMAP3_CACHE is used.
# Two things 6.12's generator does not do for this module are done here:
# - with a build directory apart from the source (O=, and distribution
#   headers), it looks for rust/Makefile in the build directory: it is run
#   with VPATH set to the source tree;
# - it takes a .rs file as a crate root only when the Kbuild or Makefile of
#   the file's own directory names it, and ours is one level up: the crate
#   mmap3 (src/mmap3.rs, which includes src/buildid.rs and rust/*.rs, hence
#   both directories as its source) is added after it, with the kernel
#   crate's cfgs, as the generator adds in-tree modules, and the
#   `mmap3_kernel_*` cfgs Kbuild gives it for this kernel (rust/compat.rs).
. "$(dirname "$0")/lib.sh"

kdir=${1:?usage: scripts/rust-analyzer.sh KDIR}
if [ ! -f "$kdir/.config" ] && [ "$kdir" = "/lib/modules/$(uname -r)/build" ] &&
   [ -f "$KOBJ/.config" ]; then
	log "no $kdir: using the kernel of make test, $KOBJ"
	kdir=$KOBJ
fi
[ -f "$kdir/.config" ] || die "no configured kernel at $kdir: pass KDIR=<kernel tree or build directory> (or run make kernel)"

args=()
# LLVM=1 for a kernel built with clang, unless given (make ... LLVM=-19).
if [ -n "${LLVM:-}" ]; then
	args+=("LLVM=$LLVM")
elif grep -q '^CONFIG_CC_IS_CLANG=y' "$kdir/.config"; then
	args+=(LLVM=1)
fi
srctree=$kdir
if [ ! -f "$kdir/rust/Makefile" ]; then
	srctree=$(sed -n 's/^include \(.*\)\/Makefile$/\1/p' "$kdir/Makefile")
	[ -f "$srctree/rust/Makefile" ] || die "cannot find the kernel source tree of $kdir"
	args+=("VPATH=$srctree")
fi
# The kernel crate's abstractions Kbuild finds in this kernel's sources.
features=$(printf 'include Kbuild\nall:\n\t@echo $(mmap3-kernel)\n' |
	make -s --no-print-directory -C "$MMAP3_ROOT" -f - srctree="$srctree" src="$MMAP3_ROOT") ||
	die "cannot read the kernel features Kbuild detects"

out=$MMAP3_ROOT/rust-project.json
rm -f "$out"
make -s -C "$kdir" M="$MMAP3_ROOT" "${args[@]}" rust-analyzer ||
	die "make -C $kdir M=$MMAP3_ROOT ${args[*]} rust-analyzer failed"
python3 - "$out" "$MMAP3_ROOT" "$features" <<'EOF'
import json
import sys

path, top, features = sys.argv[1:]
root = top + "/src/mmap3.rs"
with open(path) as f:
    project = json.load(f)
crates = project["crates"]
index = {crate["display_name"]: i for i, crate in enumerate(crates)}
if not any(crate["root_module"] == root for crate in crates):
    crates.append({
        "display_name": "mmap3",
        "root_module": root,
        "is_workspace_member": True,
        "is_proc_macro": False,
        "deps": [{"crate": index[dep], "name": dep} for dep in ("core", "kernel")],
        "cfg": crates[index["kernel"]]["cfg"]
            + ["mmap3_kernel_" + feature for feature in features.split()],
        "edition": "2021",
        "env": {"RUST_MODFILE": "This is only for rust-analyzer"},
        # The files the crate includes by #[path]: src/ and rust/.
        "source": {"include_dirs": [top + "/src", top + "/rust"], "exclude_dirs": []},
    })
with open(path, "w") as f:
    json.dump(project, f, sort_keys=True, indent=4)
    f.write("\n")
EOF
python3 -m json.tool "$out" >/dev/null || die "$out is not valid JSON"
log "wrote $out (crate mmap3: src/mmap3.rs, against $kdir)"
