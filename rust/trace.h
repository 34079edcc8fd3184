/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The trace event mmap3:build_id (DESIGN.md, "The build-id trace event"):
 * one executable mapping with its build-id, or the status that says why
 * there is none. rust/probe.c defines it (CREATE_TRACE_POINTS) and emits it.
 */
#undef TRACE_SYSTEM
#define TRACE_SYSTEM mmap3

#if !defined(_MMAP3_TRACE_H) || defined(TRACE_HEADER_MULTI_READ)
#define _MMAP3_TRACE_H

#include <linux/tracepoint.h>
#include "helpers.h"

TRACE_EVENT_FN(build_id,

	TP_PROTO(const struct mmap3_mapping *m),

	TP_ARGS(m),

	TP_STRUCT__entry(
		__field(u32, pid)
		__field(u32, tid)
		__field(u64, addr)
		__field(u64, len)
		__field(u64, pgoff)
		__field(u32, maj)
		__field(u32, min)
		__field(u64, ino)
		__field(u64, ino_generation)
		__field(u32, prot)
		__field(u32, flags)
		__field(u8, build_id_size)
		__field(u8, build_id_status)
		__array(u8, build_id, MMAP3_BUILD_ID_MAX)
		__field(u64, time)
		__string(filename, m->name)
	),

	TP_fast_assign(
		__entry->pid = m->pid;
		__entry->tid = m->tid;
		__entry->addr = m->addr;
		__entry->len = m->len;
		__entry->pgoff = m->pgoff;
		__entry->maj = m->maj;
		__entry->min = m->min;
		__entry->ino = m->ino;
		__entry->ino_generation = m->ino_generation;
		__entry->prot = m->prot;
		__entry->flags = m->flags;
		__entry->build_id_size = m->id.size;
		__entry->build_id_status = m->id.status;
		memcpy(__entry->build_id, m->id.data, MMAP3_BUILD_ID_MAX);
		__entry->time = m->time;
		__assign_str(filename);
	),

	TP_printk("pid=%u tid=%u addr=0x%llx len=0x%llx pgoff=0x%llx dev=%u:%u ino=%llu gen=%llu prot=0x%x flags=0x%x status=%s build_id=%s time=%llu file=%s",
		  __entry->pid, __entry->tid, __entry->addr, __entry->len,
		  __entry->pgoff, __entry->maj, __entry->min, __entry->ino,
		  __entry->ino_generation, __entry->prot, __entry->flags,
		  __print_symbolic(__entry->build_id_status,
				   { 1, "FOUND" }, { 2, "NO_FILE" }, { 3, "NOT_ELF" },
				   { 4, "NO_BUILD_ID" }, { 5, "MALFORMED" },
				   { 6, "IO_ERROR" }, { 7, "SKIPPED" }),
		  __entry->build_id_size ?
			__print_hex_str(__entry->build_id, __entry->build_id_size) : "-",
		  __entry->time, __get_str(filename)),

	mmap3_event_reg, mmap3_event_unreg
);

#endif /* _MMAP3_TRACE_H */

/* The module's directory is on the include path (Kbuild). */
#undef TRACE_INCLUDE_PATH
#define TRACE_INCLUDE_PATH .
#undef TRACE_INCLUDE_FILE
#define TRACE_INCLUDE_FILE trace
#include <trace/define_trace.h>
