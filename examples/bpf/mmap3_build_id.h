/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What the BPF program (mmap3_build_id.bpf.c) and its user space
 * (mmap3_build_id.c) share: the context of the trace event mmap3:build_id
 * and the record the program sends through its ring buffer.
 *
 * The context mirrors the event's format file
 * (/sys/kernel/tracing/events/mmap3/build_id/format), whose fields, names
 * and types DESIGN.md fixes: so the program needs no vmlinux BTF and no
 * CO-RE. User space checks each field's offset and size against the
 * format file before it loads the program.
 */
#ifndef MMAP3_BUILD_ID_H
#define MMAP3_BUILD_ID_H

#include <linux/types.h>

#define MMAP3_BUILD_ID_MAX	20
/* Longer file names are cut (the ring buffer's records are of one size). */
#define MMAP3_NAME_MAX		256

/* The values of build_id_status: the uapi's enum perf_mmap3_build_id_status. */
enum {
	MMAP3_FOUND = 1,
	MMAP3_NO_FILE,
	MMAP3_NOT_ELF,
	MMAP3_NO_BUILD_ID,
	MMAP3_MALFORMED,
	MMAP3_IO_ERROR,
	MMAP3_SKIPPED,
};

/* The event as a tracepoint program sees it: the format file's layout. */
struct mmap3_build_id_ctx {
	__u16 common_type;
	__u8 common_flags;
	__u8 common_preempt_count;
	__s32 common_pid;

	__u32 pid;		/* thread group */
	__u32 tid;
	__u64 addr;
	__u64 len;
	__u64 pgoff;		/* bytes, as MMAP2's */
	__u32 maj;
	__u32 min;
	__u64 ino;
	__u64 ino_generation;
	__u32 prot;
	__u32 flags;
	__u8 build_id_size;
	__u8 build_id_status;
	__u8 build_id[MMAP3_BUILD_ID_MAX];	/* zero past build_id_size */
	__u64 time;		/* local_clock(): perf's default clock */
	__u32 filename;		/* __data_loc: offset | length << 16 */
};

/* The one value of the map "state": what user space sets, what BPF counts. */
struct mmap3_build_id_state {
	__u32 pid;		/* the process to follow, 0 for all */
	__u32 reserved;
	__u64 lost;		/* events dropped: the ring buffer was full */
};

/* One event, as the ring buffer carries it to user space. */
struct mmap3_build_id_event {
	__u64 addr;
	__u64 len;
	__u64 pgoff;
	__u64 ino;
	__u64 ino_generation;
	__u64 time;
	__u32 pid;
	__u32 tid;
	__u32 maj;
	__u32 min;
	__u32 prot;
	__u32 flags;
	__u8 build_id_size;
	__u8 build_id_status;
	__u8 build_id[MMAP3_BUILD_ID_MAX];
	char filename[MMAP3_NAME_MAX];
};

#endif /* MMAP3_BUILD_ID_H */
