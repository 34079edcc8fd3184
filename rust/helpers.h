/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The C helpers of the mmap3 module (rust/helpers.c, and rust/compat.c for
 * older kernels), as the Rust files in rust/ declare them.
 */
#ifndef MMAP3_HELPERS_H
#define MMAP3_HELPERS_H

#include <linux/types.h>

struct file;
struct dentry;
struct seq_file;

/* What src/mmap3.rs knows of a file; mirrored by rust/file.rs. */
struct mmap3_identity {
	u64 ino;
	/* i_version when the file system keeps one (versioned), else 0. */
	u64 change;
	s64 size;
	/* ctime in nanoseconds (saturated, as timespec64_to_ns()). */
	s64 ctime_ns;
	u32 generation;
	u32 mode;
	unsigned long fs_magic;
	/* IS_I_VERSION(): change moves with every change of the file. */
	bool versioned;
	/* Open for writing, or mapped shared and writable. */
	bool writers;
	/* A kernel-internal file (S_PRIVATE): shared anonymous memory, SysV shm. */
	bool private;
};

/* The most bytes one mmap3_fetch() returns: src/buildid.rs's FETCH_MAX. */
#define MMAP3_FETCH_MAX 64

/*
 * A read of a file through its page cache, folio by folio, that keeps the
 * last folio it used, and the page of it it mapped, for the next read;
 * mirrored by rust/file.rs, which starts it with @file and @may_io set,
 * @size -1 and the other fields zero.
 */
struct mmap3_reader {
	struct file *file;
	struct folio *folio;	/* a reference, or NULL */
	const void *addr;	/* a page of @folio, mapped (kmap_local) */
	loff_t start, end;	/* which bytes of the file @addr holds */
	loff_t size;		/* the file's size at the first read, or -1 */
	u8 buf[MMAP3_FETCH_MAX];	/* bytes that are not in the page mapped */
	bool may_io;		/* read what is missing (may sleep) */
};

extern const size_t mmap3_identity_size;
extern const size_t mmap3_reader_size;
extern const unsigned int mmap3_nr_stats;

unsigned int mmap3_param_cache_entries(void);
void mmap3_assert_no_mmap_lock(void);
void mmap3_file_identity(struct file *file, struct mmap3_identity *id);
bool mmap3_file_unchanged(struct file *file, const struct mmap3_identity *id);
u64 mmap3_sb_find(struct file *file);
u64 mmap3_sb_register(struct file *file);
int mmap3_sbs_init(void);
void mmap3_sbs_exit(void);
ssize_t mmap3_fetch(struct mmap3_reader *r, loff_t pos, size_t len, const void **bytes);
void mmap3_read_done(struct mmap3_reader *r);
bool mmap3_serves_fuse(void);
int mmap3_stats_alloc(void);
void mmap3_stats_free(void);
void mmap3_stat_add(unsigned int stat, s64 delta);
s64 mmap3_stat_sum(unsigned int stat);

/* The longest build-id a record or the trace event holds. */
#define MMAP3_BUILD_ID_MAX 20

/*
 * enum perf_mmap3_build_id_status of the series' uapi, which a kernel
 * without the series lacks: the numbers the module gives (src/status.rs);
 * rust/probe.c checks them against the uapi's where the series is.
 */
#define MMAP3_STATUS_FOUND	1
#define MMAP3_STATUS_IO_ERROR	6
#define MMAP3_STATUS_SKIPPED	7

/* A build-id or the status of its absence: struct perf_mmap3_build_id. */
struct mmap3_build_id {
	u8 size;
	u8 status;
	u8 data[MMAP3_BUILD_ID_MAX];
};

/* One mapping as the trace event mmap3:build_id shows it (rust/trace.h). */
struct mmap3_mapping {
	u64 addr, len, pgoff;
	u64 ino, ino_generation;
	u64 time;
	u32 pid, tid;
	u32 maj, min;
	u32 prot, flags;
	struct mmap3_build_id id;
	const char *name;
};

/* rust/probe.c: the probe on perf_event_mmap() and the trace event. */
struct vm_area_struct;
struct callback_head;
extern const size_t mmap3_mapping_size;
int mmap3_event_init(const void *ctx);
void mmap3_event_stop(void);
void mmap3_event_exit(bool deferred);
int mmap3_event_reg(void);
void mmap3_event_unreg(void);
void mmap3_trace(const struct mmap3_mapping *m);
int mmap3_task_work_add(struct callback_head *work, void (*func)(struct callback_head *));
int mmap3_current_state(void);
void mmap3_file_get(struct file *file);
void mmap3_file_put(struct file *file);
/* rust/probe.rs: one mapping, with the ctx of mmap3_event_init(). */
void mmap3_probe_mapping(const void *ctx, void *vma, struct mmap3_mapping *m);

/* rust/compat.c */
#ifndef MMAP3_KERNEL_DEBUGFS
/* What compat::DebugfsFile shows: struct Show in rust/compat.rs. */
struct mmap3_show {
	int (*show)(struct seq_file *m, const void *data);
	const void *data;
};

struct dentry *mmap3_debugfs_create(const char *dir, const char *file,
				    const struct mmap3_show *show);
void mmap3_debugfs_remove(struct dentry *dir);
#endif

#endif /* MMAP3_HELPERS_H */
