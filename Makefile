# SPDX-License-Identifier: GPL-2.0
#
# The mmap3 module, built the standard out-of-tree way:
#
#   make KDIR=<kernel tree or build directory> LLVM=1
#
# and the project's commands (they install what they need on first use):
#
#   make demo           boot the patched kernel in QEMU and show MMAP3 at work
#   make test           every test: host tests, build checks, kselftests in QEMU
#   make test-debug     the same on the debug kernel (KASAN, lockdep, kmemleak,
#                       PREEMPT, fault injection)
#   make test-kcsan     the same on the KCSAN kernel (data races)
#   make test-event     the trace event mmap3:build_id on the kernel without
#                       the series (make test runs it for 7.3)
#   make test-debian    the module as Debian's package builds it, on Debian's
#                       own 7.3 kernel in QEMU (README; not part of make test)
#   make kernel         only build the patched kernel into the cache
#   make check-patches  apply the kernel series to a clean tree, build after
#                       each patch, run checkpatch.pl --strict
#
# MMAP3_KVER=6.12 (for any of them) takes Linux 6.12 and patches/6.12/
# instead of Linux 7.3 and patches/.
#   make rust-analyzer  rust-project.json for editors, against KDIR (or, when
#                       the running kernel has no build directory, the
#                       kernel of make test)
#   make bench          MMAP3 against MMAP2 and upstream build-ids, in QEMU
#   make profile        the instructions of one mapping, function by function,
#                       for each configuration of make bench (gdb, QEMU)

KDIR ?= /lib/modules/$(shell uname -r)/build

# A Rust module needs the kernel crate's metadata (rust/libkernel.rmeta
# and the rest of rust/*.rmeta, scripts/target.json) in the kernel's build
# directory, which distributions' headers packages (Debian's
# linux-headers-*) do not ship: say so instead of rustc's "can't find
# crate for `kernel`".
modules:
	@if grep -qs '^CONFIG_RUST=y' $(KDIR)/.config && [ ! -e $(KDIR)/rust/libkernel.rmeta ]; then \
		echo "mmap3: $(KDIR) has CONFIG_RUST=y but no Rust metadata (rust/libkernel.rmeta):" >&2; \
		echo "mmap3: its headers package does not ship what out-of-tree Rust modules are built" >&2; \
		echo "mmap3: with; build against the kernel's build tree (README: Debian's own kernel)." >&2; \
		exit 1; \
	fi
	$(MAKE) -C $(KDIR) M=$(CURDIR) modules

clean:
	$(MAKE) -C $(KDIR) M=$(CURDIR) clean

demo:
	scripts/demo.sh

test:
	scripts/test.sh

test-debug:
	MMAP3_KERNEL=debug MMAP3_STRESS_SECONDS=$${MMAP3_STRESS_SECONDS:-30} scripts/test.sh

test-kcsan:
	MMAP3_KERNEL=kcsan MMAP3_STRESS_SECONDS=$${MMAP3_STRESS_SECONDS:-60} scripts/test.sh

test-event:
	scripts/test-event.sh

test-debian:
	scripts/debian-test.sh dkms all

kernel:
	scripts/kernel.sh

check-patches:
	scripts/check-patches.sh

rust-analyzer:
	scripts/rust-analyzer.sh $(KDIR)

bench:
	scripts/bench.sh

profile:
	scripts/profile.sh

.PHONY: modules clean demo test test-debug test-kcsan test-event test-debian kernel check-patches rust-analyzer bench profile
