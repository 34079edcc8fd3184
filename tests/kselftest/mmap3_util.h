/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Helpers shared by the MMAP3 selftests: perf_event_open(), ring buffer
 * draining, the record layouts of include/uapi/linux/perf_event.h, and the
 * fixture manifest that says which build-id each test file was linked with.
 */
#ifndef MMAP3_UTIL_H
#define MMAP3_UTIL_H

#define _GNU_SOURCE
#include <assert.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdalign.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <linux/loop.h>
#include <linux/perf_event.h>
#include <linux/types.h>

#define BUILD_ID_SIZE_MAX	20

#ifndef ARRAY_SIZE
#define ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))
#endif

/* C11's alignment specifier: put it before the name, with the type. */
#ifndef __aligned
#define __aligned(x)	alignas(x)
#endif

/*
 * A flag that other threads or processes set or read: READ_ONCE() and
 * WRITE_ONCE() with acquire and release ordering.
 */
static inline int load_acquire(const int *p)
{
	return __atomic_load_n(p, __ATOMIC_ACQUIRE);
}

static inline void store_release(int *p, int v)
{
	__atomic_store_n(p, v, __ATOMIC_RELEASE);
}

/* A system call failed because the kernel does not have it. */
static inline bool no_such_syscall(long ret)
{
	return ret < 0 && errno == ENOSYS;
}

/* PERF_RECORD_MMAP3 up to the file name, as the uapi header lays it out. */
struct mmap3_record {
	struct perf_event_header header;
	__u32 pid, tid;
	__u64 addr, len, pgoff;
	__u32 maj, min;
	__u64 ino, ino_generation;
	__u32 prot, flags;
	__u8 build_id_size;
	__u8 build_id_status;
	__u16 reserved;		/* zero; the reader's MMAP3_RESOLVED once answered */
	__u8 build_id[BUILD_ID_SIZE_MAX];
	char filename[];
};

static_assert(sizeof(struct mmap3_record) == 96,
	      "the uapi: 96 bytes before the file name, a multiple of 8");

/* PERF_RECORD_MMAP3_BUILD_ID, the answer of a PENDING MMAP3 record, up to sample_id. */
struct mmap3_answer {
	struct perf_event_header header;
	__u32 pid, tid;
	__u64 addr, len, pgoff;
	__u32 maj, min;
	__u64 ino, ino_generation;
	__u8 build_id_size;
	__u8 build_id_status;
	__u16 reserved;
	__u8 build_id[BUILD_ID_SIZE_MAX];
};

static_assert(sizeof(struct mmap3_answer) == 88, "the uapi: 88 bytes before sample_id");

/* The status names of enum perf_mmap3_build_id_status, indexed by value. */
static const char *const mmap3_status_names[] = {
	"UNKNOWN", "FOUND", "NO_FILE", "NOT_ELF", "NO_BUILD_ID", "MALFORMED",
	"IO_ERROR", "SKIPPED", "PENDING",
};

/* The name of status @status, "?" for a value the uapi does not define. */
static inline const char *status_name(int status)
{
	return status >= 0 && status < (int)ARRAY_SIZE(mmap3_status_names) ?
	       mmap3_status_names[status] : "?";
}

static inline int mmap3_status(const char *name)
{
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(mmap3_status_names); i++)
		if (!strcmp(name, mmap3_status_names[i]))
			return i;
	return -1;
}

/* PERF_RECORD_MMAP2 up to the file name. */
struct mmap2_record {
	struct perf_event_header header;
	__u32 pid, tid;
	__u64 addr, len, pgoff;
	union {
		struct {
			__u32 maj, min;
			__u64 ino, ino_generation;
		};
		struct {
			__u8 build_id_size;
			__u8 reserved_1;
			__u16 reserved_2;
			__u8 build_id[BUILD_ID_SIZE_MAX];
		};
	};
	__u32 prot, flags;
	char filename[];
};

static inline int sys_perf_event_open(struct perf_event_attr *attr, pid_t pid,
				      int cpu, int group_fd, unsigned long flags)
{
	return syscall(__NR_perf_event_open, attr, pid, cpu, group_fd, flags);
}

/*
 * A software dummy event on the calling task: side-band records only. Their
 * time is CLOCK_MONOTONIC's, one clock for all CPUs, by which the records
 * of per-CPU rings are put in order (rings_drain()).
 */
static inline void side_band_attr(struct perf_event_attr *attr)
{
	memset(attr, 0, sizeof(*attr));
	attr->size = sizeof(*attr);
	attr->type = PERF_TYPE_SOFTWARE;
	attr->config = PERF_COUNT_SW_DUMMY;
	attr->sample_id_all = 1;
	attr->sample_type = PERF_SAMPLE_TID | PERF_SAMPLE_TIME;
	attr->use_clockid = 1;
	attr->clockid = CLOCK_MONOTONIC;
	attr->exclude_kernel = 1;
	attr->exclude_hv = 1;
}

/* CLOCK_MONOTONIC, in ns: the clock of side_band_attr()'s records. */
static inline __u64 now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

/* The time of a record of a side_band_attr() event: the last field of its sample_id. */
static inline __u64 record_time(const struct perf_event_header *h)
{
	__u64 time;

	memcpy(&time, (const char *)h + h->size - sizeof(time), sizeof(time));
	return time;
}

/* The records read from a ring, each copied out, in ring order. */
struct records {
	struct perf_event_header **v;
	int n, cap;
};

static inline void records_add(const struct perf_event_header *h, void *ctx)
{
	struct records *rs = ctx;
	struct perf_event_header *copy;

	if (rs->n == rs->cap) {
		int cap = rs->cap ? 2 * rs->cap : 64;
		void *v = realloc(rs->v, cap * sizeof(*rs->v));

		if (!v)
			abort();
		rs->v = v;
		rs->cap = cap;
	}
	copy = malloc(h->size);
	if (!copy)
		abort();
	memcpy(copy, h, h->size);
	rs->v[rs->n++] = copy;
}

static inline void records_free(struct records *rs)
{
	int i;

	for (i = 0; i < rs->n; i++)
		free(rs->v[i]);
	free(rs->v);
	memset(rs, 0, sizeof(*rs));
}

/*
 * What breaks the uapi's rules for the build-id fields of an MMAP3 or
 * MMAP3_BUILD_ID record, or NULL: the status is one of the enum's, UNKNOWN
 * (0) never, PENDING only in an MMAP3 record (@pending); build_id_size is
 * at most 20, and non-zero exactly when the status is FOUND; the build-id
 * bytes past it and __reserved are zero.
 */
static inline const char *build_id_error(__u8 size, __u8 status, __u16 reserved,
					 const __u8 *id, bool pending)
{
	int i;

	if (status == PERF_MMAP3_BUILD_ID_UNKNOWN)
		return "status UNKNOWN (0), which is never emitted";
	if (status > PERF_MMAP3_BUILD_ID_PENDING)
		return "status not in enum perf_mmap3_build_id_status";
	if (status == PERF_MMAP3_BUILD_ID_PENDING && !pending)
		return "status PENDING in an answer, whose status is final";
	if (size > BUILD_ID_SIZE_MAX)
		return "build_id_size over 20";
	if (status == PERF_MMAP3_BUILD_ID_FOUND && !size)
		return "status FOUND without a build-id";
	if (status != PERF_MMAP3_BUILD_ID_FOUND && size)
		return "a build-id with a status other than FOUND";
	if (reserved)
		return "__reserved is not zero";
	for (i = size; i < BUILD_ID_SIZE_MAX; i++)
		if (id[i])
			return "build-id bytes past build_id_size are not zero";
	return NULL;
}

/*
 * Every MMAP3 and MMAP3_BUILD_ID record a test reads passes here
 * (ring_drain()): a record that breaks a rule of build_id_error(), or whose
 * size is not a multiple of 8 with room for what follows the fields (an
 * MMAP3 record's file name), ends the test at once (SIGABRT, a failure),
 * with the record on stderr, whatever the test was looking for.
 */
static inline void mmap3_record_check(const struct perf_event_header *h)
{
	const struct mmap3_answer *a = (const void *)h;
	const struct mmap3_record *r = (const void *)h;
	bool answer = h->type == PERF_RECORD_MMAP3_BUILD_ID;
	const char *err;

	if (h->size % 8 || h->size < (answer ? sizeof(*a) : sizeof(*r) + 8))
		err = "size not a multiple of 8, or too small for the record";
	else if (answer)
		err = build_id_error(a->build_id_size, a->build_id_status, a->reserved,
				     a->build_id, false);
	else
		err = build_id_error(r->build_id_size, r->build_id_status, r->reserved,
				     r->build_id, true);
	if (!err)
		return;
	fprintf(stderr,
		"# %s record against the uapi: %s: pid %u tid %u addr %#llx status %u build_id_size %u size %u%s%.*s\n",
		answer ? "MMAP3_BUILD_ID" : "MMAP3", err, r->pid, r->tid,
		(unsigned long long)r->addr, answer ? a->build_id_status : r->build_id_status,
		answer ? a->build_id_size : r->build_id_size, h->size, answer ? "" : " file ",
		!answer && h->size > sizeof(*r) ? (int)(h->size - sizeof(*r)) : 0, r->filename);
	abort();
}

/*
 * The reader of every ring (ring_drain(), rings_drain()). A PENDING MMAP3
 * record is held back, with every record after it, until its
 * PERF_RECORD_MMAP3_BUILD_ID comes: then the tests get the MMAP3 record in
 * its place, resolved (the answer's status and build-id, and
 * mmap3_was_pending() true), the records after it, and the answer in its
 * own place. The uapi's pairing rules are checked on the way: each PENDING
 * record gets exactly one answer, from its tid, naming the same mapping
 * (pid, addr, len, pgoff, maj, min, ino, ino_generation, misc), the
 * answers of one tid in the order of its PENDING records. A stream of
 * CPU-wide events (@cpu_wide) may miss an answer (its task answered on
 * another CPU: the record is given PENDING at the end of the stream,
 * counted in @unanswered) or have an answer without its MMAP3 record (given
 * too, counted in @orphans; after a PERF_RECORD_LOST, any stream may);
 * anything else against these rules ends the test at once (SIGABRT), the
 * records on stderr.
 */
struct mmap3_held {
	struct perf_event_header *h;	/* a copy */
	bool waiting;			/* a PENDING MMAP3 record without its answer */
};

struct mmap3_reader {
	bool cpu_wide;
	bool lost;
	struct mmap3_held *held;
	int head, n, cap;
	__u64 pending;		/* PENDING MMAP3 records read */
	__u64 answered;		/* of those, answered */
	__u64 unanswered;	/* of those, given without an answer */
	__u64 orphans;		/* answers without their MMAP3 record */
};

/* In the records the tests get: the kernel's record said PENDING, this is its answer. */
#define MMAP3_RESOLVED	0x8000

static inline bool mmap3_was_pending(const struct mmap3_record *r)
{
	return r->reserved == MMAP3_RESOLVED;
}

/*
 * Prints the mapping @h names, an MMAP3 or MMAP3_BUILD_ID record: the
 * fields they share are at the same offsets.
 */
static inline void mmap3_print(const struct perf_event_header *h)
{
	const struct mmap3_answer *a = (const void *)h;
	bool answer = h->type == PERF_RECORD_MMAP3_BUILD_ID;
	const char *what = answer ? status_name(a->build_id_status) :
				    ((const struct mmap3_record *)h)->filename;

	fprintf(stderr,
		"#   %s: pid %u tid %u addr %#llx len %#llx pgoff %#llx dev %u:%u ino %llu gen %llu misc %#x %s\n",
		answer ? "MMAP3_BUILD_ID" : "MMAP3", a->pid, a->tid, (unsigned long long)a->addr,
		(unsigned long long)a->len, (unsigned long long)a->pgoff, a->maj, a->min,
		(unsigned long long)a->ino, (unsigned long long)a->ino_generation, h->misc, what);
}

static inline void mmap3_pairing_fail(const char *why, const struct mmap3_answer *a,
				       const struct perf_event_header *pending)
{
	fprintf(stderr, "# MMAP3 pairing against the uapi: %s\n", why);
	if (a)
		mmap3_print(&a->header);
	if (pending)
		mmap3_print(pending);
	abort();
}

/* Whether @a answers the PENDING record @r: from its tid, of the same mapping. */
static inline bool mmap3_answers(const struct mmap3_answer *a, const struct mmap3_record *r)
{
	return a->pid == r->pid && a->tid == r->tid && a->addr == r->addr && a->len == r->len &&
	       a->pgoff == r->pgoff && a->maj == r->maj && a->min == r->min &&
	       a->ino == r->ino && a->ino_generation == r->ino_generation &&
	       a->header.misc == r->header.misc;
}

/* Resolves the held PENDING record @a answers, or counts an orphan answer. */
static inline void mmap3_reader_answer(struct mmap3_reader *rd, const struct mmap3_answer *a)
{
	bool lenient = rd->cpu_wide || rd->lost;
	int i, first = -1, match = -1;
	struct mmap3_record *r;

	for (i = rd->head; i < rd->n && match < 0; i++) {
		r = (void *)rd->held[i].h;
		if (!rd->held[i].waiting || r->tid != a->tid)
			continue;
		if (first < 0)
			first = i;
		if (mmap3_answers(a, r))
			match = i;
	}
	if (match < 0) {
		if (!lenient)
			mmap3_pairing_fail(first < 0 ?
					   "an answer, and no PENDING MMAP3 record of its tid before it" :
					   "an answer naming another mapping than its tid's PENDING records",
					   a, first < 0 ? NULL : rd->held[first].h);
		rd->orphans++;
		return;
	}
	if (match != first) {
		if (!lenient)
			mmap3_pairing_fail("an answer before the answer of its tid's first PENDING record",
					   a, rd->held[first].h);
		/* The tid answered those on another CPU. */
		for (i = first; i < match; i++) {
			r = (void *)rd->held[i].h;
			if (rd->held[i].waiting && r->tid == a->tid) {
				rd->held[i].waiting = false;
				rd->unanswered++;
			}
		}
	}
	r = (void *)rd->held[match].h;
	r->build_id_status = a->build_id_status;
	r->build_id_size = a->build_id_size;
	memcpy(r->build_id, a->build_id, BUILD_ID_SIZE_MAX);
	r->reserved = MMAP3_RESOLVED;
	rd->held[match].waiting = false;
	rd->answered++;
}

/* Gives the held records up to the first one still waiting for its answer. */
static inline void mmap3_reader_give(struct mmap3_reader *rd,
				     void (*fn)(const struct perf_event_header *h, void *ctx),
				     void *ctx)
{
	while (rd->head < rd->n && !rd->held[rd->head].waiting) {
		if (fn)
			fn(rd->held[rd->head].h, ctx);
		free(rd->held[rd->head++].h);
	}
	if (rd->head == rd->n)
		rd->head = rd->n = 0;
}

/* Reads one record @h: checks it, and gives it, or holds it back. */
static inline void mmap3_reader_feed(struct mmap3_reader *rd, const struct perf_event_header *h,
				     void (*fn)(const struct perf_event_header *h, void *ctx),
				     void *ctx)
{
	bool waiting = false;

	switch (h->type) {
	case PERF_RECORD_MMAP3:
		mmap3_record_check(h);
		waiting = ((const struct mmap3_record *)h)->build_id_status ==
			  PERF_MMAP3_BUILD_ID_PENDING;
		rd->pending += waiting;
		break;
	case PERF_RECORD_MMAP3_BUILD_ID:
		mmap3_record_check(h);
		mmap3_reader_answer(rd, (const void *)h);
		break;
	case PERF_RECORD_LOST:
		rd->lost = true;
		break;
	}
	if (!waiting && rd->head == rd->n) {
		if (fn)
			fn(h, ctx);
		return;
	}
	if (rd->n == rd->cap) {
		rd->cap = rd->cap ? 2 * rd->cap : 64;
		rd->held = realloc(rd->held, rd->cap * sizeof(*rd->held));
		if (!rd->held)
			abort();
	}
	rd->held[rd->n].h = malloc(h->size);
	if (!rd->held[rd->n].h)
		abort();
	memcpy(rd->held[rd->n].h, h, h->size);
	rd->held[rd->n++].waiting = waiting;
	mmap3_reader_give(rd, fn, ctx);
}

/*
 * The end of the stream: gives every record held. A PENDING record still
 * without its answer is given as it is on a stream that may miss answers,
 * and ends the test on any other.
 */
static inline void mmap3_reader_end(struct mmap3_reader *rd,
				    void (*fn)(const struct perf_event_header *h, void *ctx),
				    void *ctx)
{
	int i;

	for (i = rd->head; i < rd->n; i++) {
		if (!rd->held[i].waiting)
			continue;
		if (!rd->cpu_wide && !rd->lost)
			mmap3_pairing_fail("a PENDING MMAP3 record without its answer", NULL,
					   rd->held[i].h);
		rd->held[i].waiting = false;
		rd->unanswered++;
	}
	mmap3_reader_give(rd, fn, ctx);
	free(rd->held);
	rd->held = NULL;
	rd->cap = 0;
}

struct ring {
	int fd;
	size_t data_size;
	struct perf_event_mmap_page *meta;
	unsigned char *data;
	unsigned char *copy;	/* one record, contiguous */
	__u64 lost;		/* sum of PERF_RECORD_LOST */
	struct mmap3_reader rd;	/* of ring_drain() */
};

/* Maps the ring of @fd with @pages data pages (a power of two). */
static inline int ring_map(struct ring *r, int fd, size_t pages)
{
	size_t psz = sysconf(_SC_PAGESIZE);
	void *p = mmap(NULL, (pages + 1) * psz, PROT_READ | PROT_WRITE,
		       MAP_SHARED, fd, 0);

	memset(r, 0, sizeof(*r));
	r->fd = -1;
	if (p == MAP_FAILED)
		return -1;
	r->fd = fd;
	r->meta = p;
	r->data = (unsigned char *)p + psz;
	r->data_size = pages * psz;
	r->copy = malloc(65536);
	return r->copy ? 0 : -1;
}

/*
 * Calls @fn on each record written since the last call, in ring order,
 * copied out contiguously, and counts PERF_RECORD_LOST. Returns the number
 * of records.
 */
static inline int ring_read_raw(struct ring *r,
				void (*fn)(const struct perf_event_header *h, void *ctx),
				void *ctx)
{
	__u64 head = __atomic_load_n(&r->meta->data_head, __ATOMIC_ACQUIRE);
	__u64 tail = r->meta->data_tail;
	int n = 0;

	while (tail < head) {
		size_t off = tail % r->data_size, i;
		struct perf_event_header *h;
		__u16 size;

		/* The header itself can wrap: copy it byte by byte. */
		for (i = 0; i < sizeof(*h); i++)
			r->copy[i] = r->data[(off + i) % r->data_size];
		size = ((struct perf_event_header *)r->copy)->size;
		for (i = 0; i < size; i++)
			r->copy[i] = r->data[(off + i) % r->data_size];
		h = (void *)r->copy;
		if (h->type == PERF_RECORD_LOST)
			r->lost += ((__u64 *)(h + 1))[1];
		fn(h, ctx);
		n++;
		tail += size;
	}
	__atomic_store_n(&r->meta->data_tail, tail, __ATOMIC_RELEASE);
	return n;
}

struct ring_feed {
	struct mmap3_reader *rd;
	void (*fn)(const struct perf_event_header *h, void *ctx);
	void *ctx;
};

static inline void ring_feed(const struct perf_event_header *h, void *ctx)
{
	struct ring_feed *f = ctx;

	mmap3_reader_feed(f->rd, h, f->fn, f->ctx);
}

/*
 * Calls @fn on each record written since the last call, in ring order,
 * through the ring's reader (struct mmap3_reader: a PENDING MMAP3 record
 * and those after it come once it is answered, resolved). Returns the
 * number of records read from the ring. @fn may be NULL.
 */
static inline int ring_drain(struct ring *r,
			     void (*fn)(const struct perf_event_header *h, void *ctx),
			     void *ctx)
{
	struct ring_feed f = { &r->rd, fn, ctx };

	return ring_read_raw(r, ring_feed, &f);
}

/* Appends the records written to @r since the last read to @rs. */
static inline int ring_read(struct ring *r, struct records *rs)
{
	return ring_drain(r, records_add, rs);
}

/*
 * The last read of a ring: ring_drain(), then the records still held (a
 * PENDING record of a CPU-wide event whose answer never came, as it is).
 */
static inline void ring_flush(struct ring *r,
			      void (*fn)(const struct perf_event_header *h, void *ctx),
			      void *ctx)
{
	ring_drain(r, fn, ctx);
	mmap3_reader_end(&r->rd, fn, ctx);
}

/* Unmaps and closes the ring, without reading it. */
static inline void ring_close(struct ring *r)
{
	if (!r->meta)
		return;
	munmap(r->meta, r->data_size + sysconf(_SC_PAGESIZE));
	free(r->copy);
	close(r->fd);
	memset(r, 0, sizeof(*r));
	r->fd = -1;
}

/*
 * Unmaps and closes the ring, after a last read (ring_flush()) whose
 * records go nowhere: a PENDING record of the task's events that never got
 * its answer ends the test there.
 */
static inline void ring_unmap(struct ring *r)
{
	if (r->meta)
		ring_flush(r, NULL, NULL);
	ring_close(r);
}

/*
 * The rings of per-CPU events of one session, one per CPU (as perf record
 * opens them), read as one stream of records, by a reader of its own: a
 * mapping's MMAP3 record and its answer may be in two rings. Their events
 * are side_band_attr()'s: their records are put in time order as perf puts
 * them, by rounds (perf's ordered events): rings_drain() reads every ring,
 * and gives the records up to the newest time the round before read, all
 * of which were written by then (a task's record is written before its
 * next one is timed); rings_flush(), once nothing writes to the rings any
 * more, gives them all.
 */
#define RING_SET_MAX	64

struct ring_set {
	int n;
	struct ring ring[RING_SET_MAX];
	struct records q[RING_SET_MAX];	/* read, not given yet, in ring order */
	int head[RING_SET_MAX];
	__u64 until;			/* the newest time read so far */
	struct mmap3_reader rd;
};

/* Gives the records read up to time @until, in time order. */
static inline void rings_give(struct ring_set *s, __u64 until,
			      void (*fn)(const struct perf_event_header *h, void *ctx),
			      void *ctx)
{
	int i, next;

	for (;;) {
		__u64 t, best = 0;

		next = -1;
		for (i = 0; i < s->n; i++) {
			const struct perf_event_header *h;

			if (s->head[i] == s->q[i].n)
				continue;
			h = s->q[i].v[s->head[i]];
			/* One time: an answer after the other records. */
			t = 2 * record_time(h) + (h->type == PERF_RECORD_MMAP3_BUILD_ID);
			if (t > 2 * until + 1 || (next >= 0 && t >= best))
				continue;
			next = i;
			best = t;
		}
		if (next < 0)
			break;
		mmap3_reader_feed(&s->rd, s->q[next].v[s->head[next]], fn, ctx);
		free(s->q[next].v[s->head[next]++]);
	}
	/* What is left of each ring's queue, to its start. */
	for (i = 0; i < s->n; i++) {
		if (!s->head[i])
			continue;
		memmove(s->q[i].v, s->q[i].v + s->head[i],
			(s->q[i].n - s->head[i]) * sizeof(*s->q[i].v));
		s->q[i].n -= s->head[i];
		s->head[i] = 0;
	}
}

/* Reads every ring of @s, and gives what the round before read (see struct ring_set). */
static inline void rings_drain(struct ring_set *s,
			       void (*fn)(const struct perf_event_header *h, void *ctx),
			       void *ctx)
{
	__u64 until = s->until;
	int i, j;

	for (i = 0; i < s->n; i++) {
		j = s->q[i].n;
		ring_read_raw(&s->ring[i], records_add, &s->q[i]);
		for (; j < s->q[i].n; j++)
			if (record_time(s->q[i].v[j]) > s->until)
				s->until = record_time(s->q[i].v[j]);
	}
	rings_give(s, until, fn, ctx);
}

/* The last read of @s: every record, those still held too (see ring_flush()). */
static inline void rings_flush(struct ring_set *s,
			       void (*fn)(const struct perf_event_header *h, void *ctx),
			       void *ctx)
{
	rings_drain(s, fn, ctx);
	rings_give(s, UINT64_MAX / 2, fn, ctx);
	mmap3_reader_end(&s->rd, fn, ctx);
}

/* The records lost in the rings of @s. */
static inline __u64 rings_lost(const struct ring_set *s)
{
	__u64 lost = 0;
	int i;

	for (i = 0; i < s->n; i++)
		lost += s->ring[i].lost;
	return lost;
}

/* rings_flush() to nowhere (see ring_unmap()), then each ring unmapped. */
static inline void rings_unmap(struct ring_set *s)
{
	int i;

	if (!s->n)
		return;
	rings_flush(s, NULL, NULL);
	for (i = 0; i < s->n; i++) {
		ring_close(&s->ring[i]);
		records_free(&s->q[i]);
	}
	memset(s, 0, sizeof(*s));
}

/*
 * A child held until the test writes a byte to *@go, then it execs @path;
 * without @path it exits 0 when the test closes *@go. Returns its pid and
 * *@go, the pipe's write end, the test's to close; or -1 (*@go -1).
 */
static inline pid_t fork_held(const char *path, int *go)
{
	int p[2];
	pid_t child;
	char c;

	if (pipe(p))
		return -1;
	child = fork();
	if (child) {
		close(p[0]);
		if (child < 0)
			close(p[1]);
		*go = child < 0 ? -1 : p[1];
		return child;
	}
	close(p[1]);
	if (!path)
		_exit(read(p[0], &c, 1) == 0 ? 0 : 1);
	if (read(p[0], &c, 1) != 1)
		_exit(1);
	execl(path, path, NULL);
	_exit(127);
}

/* One line of the fixture manifest: <file> <build-id hex | none> <status>. */
struct fixture {
	char path[PATH_MAX + 256];
	__u8 build_id[BUILD_ID_SIZE_MAX];
	int build_id_size;
	char status[32];
};

static inline int hex_to_bytes(const char *hex, __u8 *out, int max)
{
	int n = 0;

	while (hex[0] && hex[1] && n < max) {
		unsigned int b;

		if (sscanf(hex, "%2x", &b) != 1)
			return -1;
		out[n++] = b;
		hex += 2;
	}
	return hex[0] ? -1 : n;
}

/*
 * The fixtures (fixtures.py's output): $MMAP3_FIXTURES, else "fixtures" in
 * the current directory (where `make` here puts them, and where
 * run_kselftest.sh runs the tests from), else "fixtures" beside the test
 * program. The cold copy, on a block device whose page cache the tests
 * drop: $MMAP3_COLD_FIXTURES, else /mnt (the tests skip when the fixtures
 * are not there).
 */
static inline const char *fixtures_warm(void)
{
	static char here[PATH_MAX];
	char exe[PATH_MAX - 16], *slash;
	ssize_t n;

	if (getenv("MMAP3_FIXTURES"))
		return getenv("MMAP3_FIXTURES");
	if (here[0])
		return here;
	/* Absolute, as the kernel reports file names. */
	if (!access("fixtures/MANIFEST", R_OK) && realpath("fixtures", here))
		return here;
	n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	exe[n > 0 ? n : 0] = 0;
	slash = strrchr(exe, '/');
	if (slash)
		*slash = 0;
	snprintf(here, sizeof(here), "%s/fixtures", exe);
	return here;
}

static inline const char *fixtures_cold(void)
{
	return getenv("MMAP3_COLD_FIXTURES") ?: "/mnt";
}

/* @dir/@name in a static buffer (one of four, used in turn). */
static inline const char *fixture_path(const char *dir, const char *name)
{
	static char bufs[4][PATH_MAX + 256];
	static int next;
	char *buf = bufs[next++ % 4];

	snprintf(buf, sizeof(bufs[0]), "%s/%s", dir, name);
	return buf;
}

/*
 * Looks up @name (a file name without directory) in the MANIFEST that
 * fixtures.py wrote from the build-ids it linked the files with; the file
 * is @dir/@name (@dir: fixtures_warm() or fixtures_cold()) and must exist.
 */
static inline int fixture_get_in(const char *dir, const char *name,
				 struct fixture *f)
{
	char path[PATH_MAX + 16], line[512], file[256], bid[64], status[32];
	FILE *fp;
	int ret = -1;

	snprintf(path, sizeof(path), "%s/MANIFEST", fixtures_warm());
	fp = fopen(path, "r");
	if (!fp)
		return -1;
	while (fgets(line, sizeof(line), fp)) {
		if (sscanf(line, "%255s %63s %31s", file, bid, status) != 3 ||
		    strcmp(file, name))
			continue;
		snprintf(f->path, sizeof(f->path), "%s/%s", dir, name);
		snprintf(f->status, sizeof(f->status), "%s", status);
		f->build_id_size = strcmp(bid, "none") ?
			hex_to_bytes(bid, f->build_id, BUILD_ID_SIZE_MAX) : 0;
		ret = f->build_id_size < 0 || access(f->path, F_OK) ? -1 : 0;
		break;
	}
	fclose(fp);
	return ret;
}

static inline void build_id_hex(const __u8 *id, int size, char *out)
{
	int i;

	for (i = 0; i < size; i++)
		sprintf(out + 2 * i, "%02x", id[i]);
	out[2 * size] = 0;
}

static inline int fixture_get(const char *name, struct fixture *f)
{
	return fixture_get_in(fixtures_warm(), name, f);
}

/* /proc/sys/kernel/perf_event_paranoid, or -100 when unreadable. */
static inline int paranoid_level(void)
{
	FILE *fp = fopen("/proc/sys/kernel/perf_event_paranoid", "r");
	int val = -100;

	if (fp) {
		if (fscanf(fp, "%d", &val) != 1)
			val = -100;
		fclose(fp);
	}
	return val;
}

/*
 * Why perf_event_open() failing with @err makes a test SKIP rather than
 * fail, or NULL (a failure): a kernel without attr.mmap3 (EINVAL, for an
 * event with @mmap3 only), or perf_event_paranoid forbidding the event to
 * this user (EACCES, EPERM). A kernel with the series always has its
 * built-in lookup: EOPNOTSUPP is a failure.
 */
static inline const char *perf_open_skip(int err, bool mmap3)
{
	static char buf[128];

	switch (err) {
	case EINVAL:
		return mmap3 ? "kernel without attr.mmap3 (EINVAL)" : NULL;
	case EACCES:
	case EPERM:
		snprintf(buf, sizeof(buf), "perf_event_open: %s (perf_event_paranoid %d)",
			 strerror(err), paranoid_level());
		return buf;
	}
	return NULL;
}

/*
 * Why this process cannot run tests that drop the page cache, load
 * modules or set up block devices, or NULL.
 */
static inline const char *need_root(void)
{
	if (geteuid())
		return "not root (the test drops caches, loads modules, sets up devices)";
	return NULL;
}

/* Opens a side-band event with attr.mmap3 on the calling task. */
static inline int mmap3_open(int mmap_data, int inherit)
{
	struct perf_event_attr attr;

	side_band_attr(&attr);
	attr.mmap3 = 1;
	attr.mmap_data = mmap_data;
	attr.inherit = inherit;
	return sys_perf_event_open(&attr, 0, -1, -1, 0);
}

/* Drops the page cache, so that files on fixtures_cold() are read from disk. */
static inline int drop_page_cache(void)
{
	int fd = open("/proc/sys/vm/drop_caches", O_WRONLY);
	int ret;

	if (fd < 0)
		return -1;
	sync();
	ret = write(fd, "3\n", 2) == 2 ? 0 : -1;
	close(fd);
	return ret;
}

/* Side-band attr for MMAP3 (@mmap3) or MMAP2 records, data mappings too with @mmap_data. */
static inline void mmap_attr(struct perf_event_attr *attr, bool mmap3, int mmap_data)
{
	side_band_attr(attr);
	if (mmap3) {
		attr->mmap3 = 1;
	} else {
		attr->mmap = 1;
		attr->mmap2 = 1;
	}
	attr->mmap_data = mmap_data;
}

/*
 * One counter of /sys/kernel/debug/mmap3/stats ("<name> <value>" lines),
 * or -1 when the file or the counter is not there.
 */
static inline long long mmap3_stat(const char *name)
{
	char key[64];
	long long val, ret = -1;
	FILE *fp = fopen("/sys/kernel/debug/mmap3/stats", "r");

	if (!fp)
		return -1;
	while (fscanf(fp, "%63s %lld", key, &val) == 2) {
		if (!strcmp(key, name)) {
			ret = val;
			break;
		}
	}
	fclose(fp);
	return ret;
}

/*
 * Whether the mmap3 module provides the build-ids; if not, the kernel's
 * built-in provider does, which has no cache, no counters and reads files
 * as build_id_parse_file() does. A test that checks one of these says
 * which provider it checks.
 */
static inline bool mmap3_module_loaded(void)
{
	return access("/sys/module/mmap3", F_OK) == 0;
}

/*
 * Whether the first page of file @fd is in the page cache (mincore() of a
 * read-only data mapping of it), or -1. Of a cold file, a provider that
 * read its build-id has read that page.
 */
static inline int page0_cached(int fd)
{
	long page = sysconf(_SC_PAGESIZE);
	unsigned char vec = 0;
	void *p;
	int ret;

	p = mmap(NULL, page, PROT_READ, MAP_SHARED, fd, 0);
	if (p == MAP_FAILED)
		return -1;
	ret = mincore(p, page, &vec) ? -1 : vec & 1;
	munmap(p, page);
	return ret;
}

/* The module's work so far: the sum of its hits, misses and deferred lookups, or -1. */
static inline long long mmap3_module_work(void)
{
	long long hits = mmap3_stat("hits"), misses = mmap3_stat("misses");
	long long deferred = mmap3_stat("deferred");

	if (hits < 0 || misses < 0 || deferred < 0)
		return -1;
	return hits + misses + deferred;
}

/*
 * How many of the cold files open as @fd[0..@n) were read since they were
 * dropped from the page cache (their first page is there again), by the
 * built-in read or the module's; -1 when it cannot tell. The lookups under
 * mmap_lock read nothing: only a mapping an event took as PENDING is read.
 */
static inline int files_read(const int *fd, int n)
{
	int i, cached, read = 0;

	for (i = 0; i < n; i++) {
		cached = page0_cached(fd[i]);
		if (cached < 0)
			return -1;
		read += cached;
	}
	return read;
}

/* Whether @fs is in /proc/filesystems. */
static inline bool fs_supported(const char *fs)
{
	char line[128], name[64];
	bool found = false;
	FILE *fp = fopen("/proc/filesystems", "re");

	if (!fp)
		return false;
	while (!found && fgets(line, sizeof(line), fp))
		found = sscanf(line, "nodev %63s", name) == 1 ?
			!strcmp(name, fs) :
			sscanf(line, "%63s", name) == 1 && !strcmp(name, fs);
	fclose(fp);
	return found;
}

/* Copies @from to a new file @to, mode 0755, and syncs it; 0 or -1. */
static inline int copy_file(const char *from, const char *to)
{
	char buf[65536];
	int in, out, ret = -1;
	ssize_t n;

	in = open(from, O_RDONLY);
	if (in < 0)
		return -1;
	out = open(to, O_WRONLY | O_CREAT | O_EXCL, 0755);
	if (out < 0)
		goto out_in;
	while ((n = read(in, buf, sizeof(buf))) > 0)
		if (write(out, buf, n) != n)
			goto out_out;
	if (!n && !fsync(out))
		ret = 0;
out_out:
	close(out);
out_in:
	close(in);
	return ret;
}

/*
 * The GNU build-id of an ELF64 little-endian image, found the way
 * `readelf -n` finds it: through the PT_NOTE program headers. Returns its
 * size (and copies it to @id), 0 when there is no build-id note, -1 when
 * @data is not such an ELF image or its headers point outside it. The tests
 * use it to say what a file they made holds, independently of the module.
 */
static inline int elf_build_id(const uint8_t *data, size_t size, uint8_t *id)
{
	uint16_t phentsize, phnum, i;
	uint64_t phoff;

	if (size < 64 || memcmp(data, "\177ELF", 4) || data[4] != 2 || data[5] != 1)
		return -1;
	memcpy(&phoff, data + 0x20, 8);
	memcpy(&phentsize, data + 0x36, 2);
	memcpy(&phnum, data + 0x38, 2);
	if (phentsize < 56 || phoff > size || phnum > (size - phoff) / phentsize)
		return -1;
	for (i = 0; i < phnum; i++) {
		const uint8_t *ph = data + phoff + (uint64_t)i * phentsize;
		uint64_t off, filesz, pos, end;
		uint32_t type;

		memcpy(&type, ph, 4);
		memcpy(&off, ph + 8, 8);
		memcpy(&filesz, ph + 32, 8);
		if (type != 4)	/* PT_NOTE */
			continue;
		if (off > size || filesz > size - off)
			return -1;
		for (pos = off, end = off + filesz; end - pos >= 12;) {
			uint32_t namesz, descsz, ntype;
			uint64_t desc, next;

			memcpy(&namesz, data + pos, 4);
			memcpy(&descsz, data + pos + 4, 4);
			memcpy(&ntype, data + pos + 8, 4);
			desc = pos + 12 + (((uint64_t)namesz + 3) & ~3ULL);
			next = desc + (((uint64_t)descsz + 3) & ~3ULL);
			if (next > end)
				return -1;
			if (ntype == 3 && namesz == 4 && !memcmp(data + pos + 12, "GNU", 4)) {
				if (!descsz || descsz > BUILD_ID_SIZE_MAX)
					return -1;
				memcpy(id, data + desc, descsz);
				return descsz;
			}
			pos = next;
		}
	}
	return 0;
}

/*
 * A fixture's bytes in memory, zero-padded to @pad bytes (0: its own size),
 * in a page-aligned buffer, with what MANIFEST says of it. Returns -1 when
 * the file or its MANIFEST line is missing, or when the build-id its bytes
 * hold is not the one MANIFEST gives a FOUND file.
 */
struct elf_file {
	struct fixture fx;
	const char *name;
	uint8_t *data;
	size_t size;		/* of the fixture itself */
	size_t padded;		/* of data: what the tests write */
};

static inline int elf_file_load(const char *name, size_t pad, struct elf_file *e)
{
	uint8_t id[BUILD_ID_SIZE_MAX];
	struct stat st;
	ssize_t n;
	int fd;

	memset(e, 0, sizeof(*e));
	e->name = name;
	if (fixture_get(name, &e->fx))
		return -1;
	fd = open(e->fx.path, O_RDONLY);
	if (fd < 0 || fstat(fd, &st))
		return -1;
	e->size = st.st_size;
	e->padded = pad > e->size ? pad : e->size;
	e->data = aligned_alloc(4096, (e->padded + 4095) / 4096 * 4096);
	if (!e->data) {
		close(fd);
		return -1;
	}
	memset(e->data, 0, (e->padded + 4095) / 4096 * 4096);
	n = pread(fd, e->data, e->size, 0);
	close(fd);
	if (n != (ssize_t)e->size)
		return -1;
	if (!strcmp(e->fx.status, "FOUND") &&
	    (elf_build_id(e->data, e->padded, id) != e->fx.build_id_size ||
	     memcmp(id, e->fx.build_id, e->fx.build_id_size)))
		return -1;
	return 0;
}

static inline void elf_file_free(struct elf_file *e)
{
	free(e->data);
	e->data = NULL;
}

/*
 * The fixtures @names[0..@n), each zero-padded to the size of the largest
 * (which keeps their notes), into @e[0..@n). 0, or -1 as elf_file_load().
 */
static inline int load_same_size(const char *const *names, int n, struct elf_file *e)
{
	size_t pad = 0;
	int i;

	for (i = 0; i < n; i++) {
		if (elf_file_load(names[i], 0, &e[i]))
			return -1;
		if (e[i].padded > pad)
			pad = e[i].padded;
	}
	for (i = 0; i < n; i++) {
		if (e[i].padded == pad)
			continue;
		elf_file_free(&e[i]);
		if (elf_file_load(names[i], pad, &e[i]) || e[i].padded != pad)
			return -1;
	}
	return 0;
}

/* Two fixtures, zero-padded to the same size (load_same_size()). */
static inline int load_pair(const char *na, const char *nb, struct elf_file *a,
			    struct elf_file *b)
{
	const char *const names[] = { na, nb };
	struct elf_file e[2];
	int ret = load_same_size(names, 2, e);

	*a = e[0];
	*b = e[1];
	return ret;
}

/*
 * Creates @path holding @len bytes of @data, written with write(2).
 * Returns its fd, open for reading and writing, or -1.
 */
static inline int create_file(const char *path, const void *data, size_t len)
{
	int fd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0755);

	if (fd < 0)
		return -1;
	if (len && pwrite(fd, data, len, 0) != (ssize_t)len) {
		close(fd);
		return -1;
	}
	return fd;
}

/* Reads all of @path (at most @max bytes) into a new buffer, or NULL. */
static inline uint8_t *read_all(const char *path, size_t max, size_t *size)
{
	uint8_t *buf;
	ssize_t n = 0, r;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return NULL;
	buf = malloc(max);
	while (buf && (size_t)n < max && (r = read(fd, buf + n, max - n)) > 0)
		n += r;
	close(fd);
	*size = n;
	return buf;
}

/*
 * Attaches the loop device open as @loop_fd, which must be free, to @img
 * (opened with @oflags) with @lo_flags (LO_FLAGS_*). 0, or -1 with errno.
 */
static inline int loop_configure(int loop_fd, const char *img, int oflags,
				 __u32 lo_flags)
{
	struct loop_config cfg = { .info.lo_flags = lo_flags };
	int ret, err;

	cfg.fd = open(img, oflags | O_CLOEXEC);
	if (cfg.fd < 0)
		return -1;
	ret = ioctl(loop_fd, LOOP_CONFIGURE, &cfg);
	err = errno;
	close(cfg.fd);
	errno = err;
	return ret;
}

/*
 * Puts @img on the loop device @dev, open as *@loop_fd, in place of what
 * it holds, nothing being mounted from it: LOOP_CLR_FD, the last close
 * detaches it, and LOOP_CONFIGURE of the same device, opened again into
 * *@loop_fd (tried again while the detach is not done). 0, or -1 with
 * errno.
 */
static inline int loop_reattach(const char *dev, int *loop_fd, const char *img,
				int oflags, __u32 lo_flags)
{
	int i;

	if (ioctl(*loop_fd, LOOP_CLR_FD, 0))
		return -1;
	close(*loop_fd);
	for (i = 0; i < 500; i++) {
		*loop_fd = open(dev, O_RDWR | O_CLOEXEC);
		if (*loop_fd < 0)
			return -1;
		if (!loop_configure(*loop_fd, img, oflags, lo_flags))
			return 0;
		if (errno != EBUSY)
			break;
		close(*loop_fd);
		usleep(10000);
	}
	i = errno;
	close(*loop_fd);
	*loop_fd = -1;
	errno = i;
	return -1;
}

/* The first @m bytes of @hay (@n bytes) equal to @needle's, or NULL. */
static inline uint8_t *bytes_find(uint8_t *hay, size_t n, const uint8_t *needle, size_t m)
{
	size_t i;

	for (i = 0; m && i + m <= n; i++)
		if (hay[i] == needle[0] && !memcmp(hay + i, needle, m))
			return hay + i;
	return NULL;
}

/*
 * Two images of one file system with the same metadata, which differ in
 * the build-id of one file only: *@a, the image @path (at most @max bytes),
 * in which @fx's build-id must be found exactly once, and *@b, the same
 * bytes with that build-id replaced by random bytes. Returns the offset of
 * the build-id (in *@size bytes each), or -1 (*@why says why).
 */
static inline long image_pair(const char *path, size_t max, const struct fixture *fx,
			      uint8_t **a, uint8_t **b, size_t *size, const char **why)
{
	uint8_t *at;

	*b = NULL;
	*a = read_all(path, max, size);
	*why = "cannot read the image";
	if (!*a)
		return -1;
	at = bytes_find(*a, *size, fx->build_id, fx->build_id_size);
	*why = "the image does not hold the build-id";
	if (!at)
		return -1;
	*why = "the image holds the build-id more than once";
	if (bytes_find(at + 1, *size - (at + 1 - *a), fx->build_id, fx->build_id_size))
		return -1;
	*why = "out of memory, or no random bytes";
	*b = malloc(*size);
	if (!*b)
		return -1;
	memcpy(*b, *a, *size);
	if (getentropy(*b + (at - *a), fx->build_id_size))
		return -1;
	return at - *a;
}

/*
 * A free loop device attached to @img as loop_configure() does, its name
 * in @dev. Returns its open fd, or -1.
 */
static inline int loop_attach(const char *img, int oflags, __u32 lo_flags,
			      char *dev, size_t size)
{
	int ctl, fd = -1, tries, n;

	ctl = open("/dev/loop-control", O_RDWR | O_CLOEXEC);
	for (tries = 0; tries < 10 && ctl >= 0 && fd < 0; tries++) {
		n = ioctl(ctl, LOOP_CTL_GET_FREE);
		if (n < 0)
			break;
		snprintf(dev, size, "/dev/loop%d", n);
		fd = open(dev, O_RDWR | O_CLOEXEC);
		if (fd >= 0 && loop_configure(fd, img, oflags, lo_flags)) {
			close(fd);
			fd = -1;	/* taken meanwhile: another one */
		}
	}
	if (ctl >= 0)
		close(ctl);
	return fd;
}

/*
 * Waits until the coarse clock, the one that stamps ctime, has moved past
 * the second of @fd's ctime: from then on any change that updates ctime
 * gives the file a different one, so a cache validated by ctime may keep
 * what it reads now. The tests wait so, to give such a cache every chance
 * to be wrong.
 */
static inline int wait_past_ctime(int fd)
{
	struct timespec now;
	struct stat st;
	int i;

	if (fstat(fd, &st))
		return -1;
	for (i = 0; i < 300; i++) {
		clock_gettime(CLOCK_REALTIME_COARSE, &now);
		if (now.tv_sec > st.st_ctim.tv_sec)
			return 0;
		usleep(10000);
	}
	return -1;
}

/* The MMAP3 record(s) of one mapping, as mmap3_map() saw them. */
struct mmap3_capture {
	uint64_t addr;
	int n;			/* MMAP3 records with that address */
	int n_other;		/* other MMAP3 records */
	/* The last record of the mapping, up to PATH_MAX of its file name. */
	unsigned char __aligned(8) rec[sizeof(struct mmap3_record) + PATH_MAX];
};

static inline const struct mmap3_record *captured(const struct mmap3_capture *c)
{
	return (const struct mmap3_record *)c->rec;
}

static inline void mmap3_capture_one(const struct perf_event_header *h, void *ctx)
{
	struct mmap3_capture *c = ctx;
	const struct mmap3_record *r = (const void *)h;
	size_t size = h->size;

	if (h->type != PERF_RECORD_MMAP3)
		return;
	if (r->addr != c->addr) {
		c->n_other++;
		return;
	}
	c->n++;
	if (size > sizeof(c->rec))
		size = sizeof(c->rec);
	memset(c->rec, 0, sizeof(c->rec));
	memcpy(c->rec, h, size);
	c->rec[sizeof(c->rec) - 1] = 0;
}

/*
 * Maps @len bytes of @fd with @prot and @flags, with an mmap3 event
 * (attr.mmap_data set) on the calling thread open around it, unmaps it, and
 * captures its MMAP3 record(s) in @c, resolved (ring_drain()). Returns 0,
 * or -1 with errno set.
 */
static inline int mmap3_map(int fd, size_t len, int prot, int flags,
			    struct mmap3_capture *c)
{
	struct ring ring;
	void *p;
	int ev;

	memset(c, 0, sizeof(*c));
	ev = mmap3_open(1, 0);
	if (ev < 0)
		return -1;
	if (ring_map(&ring, ev, 16)) {
		close(ev);
		return -1;
	}
	p = mmap(NULL, len, prot, flags, fd, 0);
	if (p == MAP_FAILED) {
		int err = errno;

		ring_unmap(&ring);
		errno = err;
		return -1;
	}
	c->addr = (uintptr_t)p;
	ring_drain(&ring, mmap3_capture_one, c);
	munmap(p, len);
	ring_unmap(&ring);
	return 0;
}

/* One page of @fd, PROT_READ | PROT_EXEC: what a loader maps. */
static inline int mmap3_map_exec(int fd, struct mmap3_capture *c)
{
	return mmap3_map(fd, 4096, PROT_READ | PROT_EXEC, MAP_PRIVATE, c);
}

/* The copies a test made, unlinked by its teardown. */
static char copies[16][PATH_MAX + 256];
static int ncopies;

/*
 * A new copy of the fixture @name on fixtures_cold(), in @fx with its
 * MANIFEST line: a new inode, which no cache has seen.
 */
static inline int fresh_copy(const char *name, struct fixture *fx)
{
	char *path;

	if (ncopies == ARRAY_SIZE(copies) ||
	    fixture_get_in(fixtures_cold(), name, fx))
		return -1;
	path = copies[ncopies];
	snprintf(path, sizeof(copies[0]), "%s/mmap3-%d-%d-%s", fixtures_cold(),
		 getpid(), ncopies, name);
	if (copy_file(fx->path, path))
		return -1;
	ncopies++;
	snprintf(fx->path, sizeof(fx->path), "%s", path);
	return 0;
}

static inline void unlink_copies(void)
{
	while (ncopies)
		unlink(copies[--ncopies]);
}

/*
 * Why the tests that copy fixtures to fixtures_cold() and drop the page
 * cache cannot run, or NULL.
 */
static inline const char *no_cold_fixtures(void)
{
	static char why[512];
	struct fixture fx;

	if (need_root())
		return need_root();
	if (!fixture_get_in(fixtures_cold(), "bid20.elf", &fx))
		return NULL;
	snprintf(why, sizeof(why), "no block-backed fixtures in %.400s (MMAP3_COLD_FIXTURES)",
		 fixtures_cold());
	return why;
}

/*
 * The state letter of /proc/@pid/stat ('R', 'S', 'D', ...), or 0; @pid may
 * be a thread's id.
 */
static inline char task_state(pid_t pid)
{
	char path[64], buf[512], *p;
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/stat", pid);
	fd = open(path, O_RDONLY);
	if (fd < 0)
		return 0;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return 0;
	buf[n] = 0;
	p = strrchr(buf, ')');
	return p && p[1] == ' ' ? p[2] : 0;
}

#endif /* MMAP3_UTIL_H */
