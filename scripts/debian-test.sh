#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# The trace event mmap3:build_id on Debian's own, unmodified 7.3 kernel,
# in QEMU (issue #41); a command of its own, not part of make test:
#
#   scripts/debian-test.sh [dkms] [all]
#
# 1. Debian's packages and the module built for them with Debian's
#    toolchain (scripts/debian-module.sh, which runs
#    scripts/debian-kernel.sh; cached); with `dkms`, the module that DKMS
#    built from the Debian package mmap3-dkms instead
#    (scripts/debian-dkms.sh), installed in the guest under /lib/modules
#    and loaded with modprobe;
# 2. a guest: Debian's vmlinuz as it is packaged, and an initramfs with
#    busybox, Debian's own loop, ext4, dm_mod and dm_delay modules and
#    what they depend on
#    (from linux-modules-*, decompressed, loaded with insmod by
#    tests/qemu/init before it mounts the ext2 disk), the fixtures and
#    their MANIFEST, the module, and the trace event's checks of
#    tests/qemu/event.sh (its first section, tracefs read with busybox
#    alone: insmod, the format file, no probe while disabled, cold and warm
#    build-ids against MANIFEST, one event per executable mapping in
#    mapping order, a dynamic program's libraries, rmmod with the event
#    enabled); with `all`, the whole of tests/qemu/event.sh as make
#    test-event stages it (scripts/guest.sh event.sh: the event's
#    selftest, the BPF example, the bpftrace one-liner, perf record -e
#    mmap3:build_id, perf record --mmap3 and perf inject --convert-mmap3,
#    with the perf of scripts/perf.sh and upstream's, built first);
# 3. tests/qemu/run.sh boots it (TCG, 2 CPUs) and reads the TAP, as for
#    the kernel without the series (MMAP3_KERNEL=upstream: its expected
#    skips and the guest's mmap3.kernel=).
# Ends with "N passed, N failed, N skipped"; exits non-zero on a failure.
. "$(dirname "$0")/lib.sh"
. "$MMAP3_ROOT/scripts/debian-lib.sh"

module=make what=event
for a in "$@"; do
	case "$a" in
	dkms) module=dkms ;;
	all) what=all ;;
	*) die "usage: scripts/debian-test.sh [dkms] [all]" ;;
	esac
done
if [ "$module" = dkms ]; then
	"$MMAP3_ROOT/scripts/debian-dkms.sh"
	ko=$DEBIAN_MODULE_DIR/mmap3-dkms.ko
else
	"$MMAP3_ROOT/scripts/debian-module.sh"
	ko=$DEBIAN_MODULE
fi

mods=$DEBIAN_DIR/image/usr/lib/modules/$DEBIAN_KREL
guest=$MMAP3_WORK/guest
extra=$MMAP3_WORK/debian-guest-extra
rm -rf "$guest" "$extra"
mkdir -p "$guest" "$extra/modules"

# Debian's modules that the guest's /init needs, each after what it
# depends on (modinfo's depends=, resolved by name in modules.order).
declare -A seen=()
order=()
add_module() {
	local name=${1//-/_} path dep
	[ -z "${seen[$name]:-}" ] || return 0
	seen[$name]=1
	path=$(grep -E "/${name//_/[-_]}\\.ko\$" "$mods/modules.order" | head -n 1 || true)
	[ -n "$path" ] || die "no module $name in Debian's modules.order"
	path=$mods/$path
	[ -e "$path.xz" ] || die "no $path.xz in linux-modules-$DEBIAN_KREL"
	for dep in $(modinfo -F depends "$path.xz" | tr ',' ' '); do
		add_module "$dep"
	done
	xz -dc "$path.xz" >"$extra/modules/${path##*/}"
	order+=("${path##*/}")
}
# dm_mod, dm_delay: the slow disk of the event's selftest (tests/event/,
# tests/kselftest/mmap3_dm.h), for `all`.
for m in loop ext4 dm_mod dm_delay; do
	add_module "$m"
done
printf '%s\n' "${order[@]}" >"$extra/modules/order"
log "Debian's modules in the initramfs: ${order[*]}"
# The DKMS-built module where dkms installed it, with depmod's index: the
# guest loads it with modprobe, as its user does (tests/qemu/guest-lib.sh).
if [ "$module" = dkms ]; then
	mkdir -p "$extra/lib/modules/$DEBIAN_KREL/updates/dkms"
	cp "$ko" "$extra/lib/modules/$DEBIAN_KREL/updates/dkms/mmap3.ko"
	depmod -b "$extra" "$DEBIAN_KREL" || die "depmod of the DKMS-built module failed"
	grep -q '^updates/dkms/mmap3.ko:' "$extra/lib/modules/$DEBIAN_KREL/modules.dep" ||
		die "depmod did not list updates/dkms/mmap3.ko"
fi

# The guest's files (scripts/guest.sh event.sh for `all`).
export MMAP3_BZIMAGE=$mods/vmlinuz MMAP3_KCONFIG=$mods/config MMAP3_GUEST_EXTRA=$extra
export MMAP3_KERNEL=upstream MMAP3_SMP=${MMAP3_SMP:-2} MMAP3_MODULE=$ko
if [ "$what" = all ]; then
	# perf and upstream's, as make test-event builds them (cached; a few
	# minutes each the first time): without perf, event.sh's perf sections
	# are skips, which fail; without upstream's, its check of perf inject
	# --convert-mmap3's output fails.
	MMAP3_KERNEL=test "$MMAP3_ROOT/scripts/perf.sh" || log "perf did not build"
	"$MMAP3_ROOT/scripts/perf.sh" || log "upstream's perf did not build"
	run=(env MMAP3_KVER=7.3 "$MMAP3_ROOT/scripts/guest.sh" event.sh "${MMAP3_TIMEOUT:-900}")
else
	log "building the fixtures"
	"$MMAP3_ROOT/tests/kselftest/fixtures.py" "$guest/fixtures" >&2
	cp "$ko" "$guest/mmap3.ko"
	cp "$MMAP3_ROOT/tests/qemu/guest-lib.sh" "$guest/"
	# event.sh's first section: the trace event through tracefs, busybox
	# alone.
	sed -n '1,/^run mmap3_event event_tests$/p' "$MMAP3_ROOT/tests/qemu/event.sh" >"$guest/debian-event.sh"
	grep -q '^run mmap3_event event_tests$' "$guest/debian-event.sh" ||
		die "tests/qemu/event.sh has no line 'run mmap3_event event_tests'"
	run=("$MMAP3_ROOT/tests/qemu/run.sh" debian-event.sh "${MMAP3_TIMEOUT:-600}")
fi

t0=$SECONDS
read -r p f s < <("${run[@]}" | tail -n 1)
log "the guest: $((SECONDS - t0)) s"
echo "${p:-0} passed, ${f:-1} failed, ${s:-0} skipped"
[ "${f:-1}" = 0 ]
