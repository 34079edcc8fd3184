// SPDX-License-Identifier: GPL-2.0
/*
 * The BPF half of mmap3_build_id: on each event mmap3:build_id (one
 * executable mapping with its build-id, or the status that says why there
 * is none), of one process or of all, a record into a ring buffer that
 * user space reads. Reads the event's context through the format file's
 * layout (mmap3_build_id.h): no vmlinux BTF, no CO-RE.
 */
#include <linux/types.h>
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

#include "mmap3_build_id.h"

/*
 * Set by user space before it attaches the program: the process to
 * follow; read by it at the end: the events lost. A map of its own rather
 * than global variables (.rodata, .bss): libbpf creates those only once a
 * socket filter program loads, which a kernel without CONFIG_NET (the
 * project's test guest) refuses.
 */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct mmap3_build_id_state);
} state SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 256 * 1024);
} events SEC(".maps");

SEC("tp/mmap3/build_id")
int mmap3_build_id(struct mmap3_build_id_ctx *ctx)
{
	struct mmap3_build_id_state *s;
	struct mmap3_build_id_event *e;
	__u32 key = 0, loc;

	s = bpf_map_lookup_elem(&state, &key);
	if (!s || (s->pid && ctx->pid != s->pid))
		return 0;
	e = bpf_ringbuf_reserve(&events, sizeof(*e), 0);
	if (!e) {
		__sync_fetch_and_add(&s->lost, 1);
		return 0;
	}
	e->pid = ctx->pid;
	e->tid = ctx->tid;
	e->addr = ctx->addr;
	e->len = ctx->len;
	e->pgoff = ctx->pgoff;
	e->maj = ctx->maj;
	e->min = ctx->min;
	e->ino = ctx->ino;
	e->ino_generation = ctx->ino_generation;
	e->prot = ctx->prot;
	e->flags = ctx->flags;
	e->build_id_size = ctx->build_id_size;
	e->build_id_status = ctx->build_id_status;
	__builtin_memcpy(e->build_id, ctx->build_id, sizeof(e->build_id));
	e->time = ctx->time;
	/* __data_loc: the name lies in the event, at the low 16 bits' offset. */
	loc = ctx->filename;
	if (bpf_probe_read_kernel_str(e->filename, sizeof(e->filename),
				      (void *)ctx + (loc & 0xffff)) < 0)
		e->filename[0] = '\0';
	bpf_ringbuf_submit(e, 0);
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
