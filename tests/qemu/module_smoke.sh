# SPDX-License-Identifier: GPL-2.0
# The module loads, says so in the kernel log, and unloads (TAP).
echo "TAP version 13"
echo "1..3"
if insmod /tests/mmap3.ko; then echo "ok 1 insmod"; else echo "not ok 1 insmod"; fi
if dmesg | grep -q 'mmap3: loaded'; then echo "ok 2 load logged"; else echo "not ok 2 load logged"; fi
if rmmod mmap3; then echo "ok 3 rmmod"; else echo "not ok 3 rmmod"; fi
