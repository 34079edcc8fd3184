# SPDX-License-Identifier: GPL-2.0
# The guest script of `make demo`: programs whose files sit on a cold
# block device (ext2 on a loop device, page cache dropped), each run under
# mmap3_demo, which prints what MMAP3 and upstream's MMAP2+build_id say of
# every executable mapping, next to what readelf -n said on the host.
insmod /tests/mmap3.ko

demo() {
	name=$1
	shift
	echo "mmap3-test: begin $name"
	echo 3 >/proc/sys/vm/drop_caches
	echo "\$ mmap3_demo $*"
	./mmap3_demo "$@"
	echo "mmap3-test: end $name rc=$?"
}

# exec reads the ELF header before mapping, and so does ld.so: the first
# page, with the note in it, is then in the page cache for MMAP2 too.
demo busybox /mnt/busybox true
demo dynamic /mnt/ld-linux-x86-64.so.2 --library-path /mnt /mnt/dynamic.elf
# A mapping made without reading the file first, and a note past the first
# page: MMAP2's no-fault parser gives up, MMAP3 reads.
demo mmap-only --map /mnt/bid20.elf /mnt/latenote.elf
