// SPDX-License-Identifier: GPL-2.0
/*
 * C helpers of the mmap3 module: what Rust cannot call directly (static
 * inline functions, module_param(), MODULE_VERSION(), per-CPU counters).
 * No policy lives here: the Rust files in rust/ wrap each helper,
 * src/mmap3.rs decides.
 */
#include "helpers.h"

#include <linux/fdtable.h>
#include <linux/fs.h>
#include <linux/fsnotify_backend.h>
#include <linux/hashtable.h>
#include <linux/highmem.h>
#include <linux/iversion.h>
#include <linux/kdev_t.h>
#include <linux/lockdep.h>
#include <linux/miscdevice.h>
#include <linux/mm.h>
#include <linux/mm_types.h>
#include <linux/module.h>
#include <linux/percpu.h>
#include <linux/pagemap.h>
#include <linux/sched.h>
#include <linux/sched/signal.h>
#include <linux/shmem_fs.h>

static unsigned int cache_entries = 4096;
module_param(cache_entries, uint, 0444);
MODULE_PARM_DESC(cache_entries,
		 "Build-ids remembered, by (superblock, ino, generation); 0 disables the cache (default 4096)");

/* dkms.conf's PACKAGE_VERSION, passed by Kbuild. */
MODULE_VERSION(MMAP3_VERSION);

unsigned int mmap3_param_cache_entries(void)
{
	return cache_entries;
}

/*
 * The module never reads a file under mmap_lock: with lockdep, say so
 * loudly if it ever does (a WARNING, which fails the test run).
 */
void mmap3_assert_no_mmap_lock(void)
{
	if (current->mm)
		lockdep_assert_not_held(&current->mm->mmap_lock);
}

/*
 * Superblock instances.
 *
 * A cached build-id must never answer for a file of another file system
 * that took the first one's place: the next image on a loop device, a
 * partition rewritten while unmounted, a tmpfs mounted again. s_dev is
 * reused (a block device's number, or the lowest free anonymous one), and
 * so is the address of a freed superblock; nothing in a superblock names
 * its instance. So the module numbers the superblocks it caches answers
 * for itself: a serial from a 64-bit counter that only counts up, never
 * reused, held with an fsnotify mark on the superblock. The mark has an
 * empty mask (it receives no event); it is there for ->freeing_mark,
 * which fsnotify_sb_delete() calls from generic_shutdown_super() when
 * the superblock is shut down, before it is freed and before its address
 * or its s_dev can be given to another: the serial is forgotten then. So
 * a serial found for a superblock was given to this very instance, and
 * a cache entry keyed by it is an entry for a file of this instance.
 *
 * Lookups take no lock (RCU); registering takes the group's mutex and
 * allocates, once per superblock.
 */
struct mmap3_sb {
	struct fsnotify_mark mark;	/* on the superblock, no events */
	struct super_block *sb;
	u64 serial;
	struct hlist_node node;		/* in mmap3_sbs, under mmap3_sbs_lock */
	bool dead;			/* ->freeing_mark() was called */
	struct rcu_head rcu;
};

static struct fsnotify_group *mmap3_group;
static DEFINE_SPINLOCK(mmap3_sbs_lock);
static DEFINE_HASHTABLE(mmap3_sbs, 6);
static u64 mmap3_sbs_next;		/* under mmap3_sbs_lock */
static atomic_t mmap3_sbs_marks = ATOMIC_INIT(0);	/* not yet freed */

/* The serial of @sb, or 0 when the module has not numbered it. */
static u64 mmap3_sb_serial(struct super_block *sb)
{
	struct mmap3_sb *s;
	u64 serial = 0;

	rcu_read_lock();
	hash_for_each_possible_rcu(mmap3_sbs, s, node, (unsigned long)sb) {
		if (s->sb == sb) {
			serial = s->serial;
			break;
		}
	}
	rcu_read_unlock();
	return serial;
}

/* The superblock is shut down (or the module unloads): forget its serial. */
static void mmap3_sb_freeing_mark(struct fsnotify_mark *mark, struct fsnotify_group *group)
{
	struct mmap3_sb *s = container_of(mark, struct mmap3_sb, mark);

	spin_lock(&mmap3_sbs_lock);
	s->dead = true;
	if (!hlist_unhashed(&s->node))
		hash_del_rcu(&s->node);
	spin_unlock(&mmap3_sbs_lock);
}

static void mmap3_sb_free_mark(struct fsnotify_mark *mark)
{
	struct mmap3_sb *s = container_of(mark, struct mmap3_sb, mark);

	/* Lookups may still be walking past it. */
	kfree_rcu(s, rcu);
	atomic_dec(&mmap3_sbs_marks);
	wake_up_var(&mmap3_sbs_marks);
}

/* The mark's mask is empty: fsnotify has no event to give it. */
static int mmap3_sb_handle_event(struct fsnotify_mark *mark, u32 mask, struct inode *inode,
				 struct inode *dir, const struct qstr *name, u32 cookie)
{
	return 0;
}

static const struct fsnotify_ops mmap3_sb_ops = {
	.handle_inode_event = mmap3_sb_handle_event,
	.freeing_mark = mmap3_sb_freeing_mark,
	.free_mark = mmap3_sb_free_mark,
};

/* The serial of @file's superblock, or 0 when the module has not numbered it. */
u64 mmap3_sb_find(struct file *file)
{
	return mmap3_sb_serial(file_inode(file)->i_sb);
}

/*
 * Numbers the superblock of @file if it is not yet, which its caller keeps
 * alive (a mapping or a reference): then it cannot be shut down meanwhile.
 * May sleep. Return: the serial, or 0 when there was no memory for it.
 */
u64 mmap3_sb_register(struct file *file)
{
	struct super_block *sb = file_inode(file)->i_sb;
	struct mmap3_sb *s;
	u64 serial;
	int err;

	serial = mmap3_sb_serial(sb);
	if (serial)
		return serial;
	s = kzalloc(sizeof(*s), GFP_KERNEL);
	if (!s)
		return 0;
	s->sb = sb;
	INIT_HLIST_NODE(&s->node);
	atomic_inc(&mmap3_sbs_marks);
	fsnotify_init_mark(&s->mark, mmap3_group);
	err = fsnotify_add_mark(&s->mark, sb, FSNOTIFY_OBJ_TYPE_SB, 0);
	if (!err) {
		spin_lock(&mmap3_sbs_lock);
		if (!s->dead) {
			s->serial = ++mmap3_sbs_next;
			hash_add_rcu(mmap3_sbs, &s->node, (unsigned long)sb);
			serial = s->serial;
		}
		spin_unlock(&mmap3_sbs_lock);
	} else if (err == -EEXIST) {
		/* Another task numbered it meanwhile (0 until it is hashed). */
		serial = mmap3_sb_serial(sb);
	}
	/* The reference of fsnotify_init_mark(); the mark keeps its own. */
	fsnotify_put_mark(&s->mark);
	return serial;
}

/* At load. Return: 0, or -ENOMEM. */
int mmap3_sbs_init(void)
{
	mmap3_group = fsnotify_alloc_group(&mmap3_sb_ops, 0);
	return PTR_ERR_OR_ZERO(mmap3_group);
}

/*
 * At unload, once no hook runs: drops every mark, and waits until fsnotify
 * has freed them all (their last step is a call into this module).
 */
void mmap3_sbs_exit(void)
{
	struct mmap3_sb *s;
	int bkt;

	for (;;) {
		struct fsnotify_mark *mark = NULL;

		spin_lock(&mmap3_sbs_lock);
		hash_for_each(mmap3_sbs, bkt, s, node) {
			/* Hashed: not yet through ->freeing_mark, so referenced. */
			if (refcount_inc_not_zero(&s->mark.refcnt)) {
				mark = &s->mark;
				break;
			}
		}
		spin_unlock(&mmap3_sbs_lock);
		if (!mark)
			break;
		fsnotify_destroy_mark(mark, mmap3_group);
		fsnotify_put_mark(mark);
	}
	fsnotify_put_group(mmap3_group);
	/* Marks of superblocks shut down meanwhile may still be on their way. */
	do {
		fsnotify_wait_marks_destroyed();
	} while (wait_var_event_timeout(&mmap3_sbs_marks, !atomic_read(&mmap3_sbs_marks), HZ) == 0);
	/* The reaper may still be returning from the last mmap3_sb_free_mark(). */
	fsnotify_wait_marks_destroyed();
}

const size_t mmap3_identity_size = sizeof(struct mmap3_identity);

/* Open for writing, or mapped shared and writable. */
static bool mmap3_file_writers(struct file *file)
{
	return atomic_read(&file_inode(file)->i_writecount) > 0 ||
	       mapping_writably_mapped(file->f_mapping);
}

void mmap3_file_identity(struct file *file, struct mmap3_identity *id)
{
	struct inode *inode = file_inode(file);
	struct timespec64 ctime = inode_get_ctime(inode);

	id->ino = inode->i_ino;
	/*
	 * Queried, so that the next change of the file's data or metadata
	 * makes it larger (the i_version contract, linux/iversion.h).
	 */
	id->versioned = IS_I_VERSION(inode);
	id->change = id->versioned ? inode_query_iversion(inode) : 0;
	id->size = i_size_read(inode);
	id->ctime_ns = timespec64_to_ns(&ctime);
	id->generation = inode->i_generation;
	id->mode = inode->i_mode;
	id->fs_magic = inode->i_sb->s_magic;
	id->writers = mmap3_file_writers(file);
	id->private = IS_PRIVATE(inode);
}

/*
 * Whether @file had no writer when mmap3_file_identity() gave @id for it,
 * has none now, and what mmap3_file_identity() would give now equals @id.
 * Only the fields that can move are read again: an open file keeps its
 * inode (ino, generation, private) and superblock (fs_magic, versioned).
 */
bool mmap3_file_unchanged(struct file *file, const struct mmap3_identity *id)
{
	struct inode *inode = file_inode(file);
	struct timespec64 ctime = inode_get_ctime(inode);

	return !id->writers && !mmap3_file_writers(file) &&
	       (!id->versioned || inode_query_iversion(inode) == id->change) &&
	       i_size_read(inode) == id->size && timespec64_to_ns(&ctime) == id->ctime_ns &&
	       inode->i_mode == id->mode;
}

/* One folio of @mapping at @index, or an ERR_PTR; NULL for a shmem hole. */
static struct folio *mmap3_get_folio(struct file *file, pgoff_t index, bool may_io)
{
	struct address_space *mapping = file->f_mapping;
	struct folio *folio;
	int tries = 0, err;

	if (!may_io) {
		folio = filemap_get_folio(mapping, index);
		if (IS_ERR(folio))
			return ERR_PTR(-EAGAIN);
		if (!folio_test_uptodate(folio)) {
			folio_put(folio);
			return ERR_PTR(-EAGAIN);
		}
		return folio;
	}
	if (shmem_mapping(mapping)) {
		/* SGP_READ: a hole reads as zeroes and is not filled. */
		err = shmem_get_folio(mapping->host, index, 0, &folio, SGP_READ);
		if (err)
			return ERR_PTR(err);
		if (folio)
			folio_unlock(folio);
		return folio;
	}
	/*
	 * A signal that is not fatal does not make the read fail: retry a few
	 * times what a file system gave up on for it (FUSE, network file
	 * systems), so that the status does not depend on signal timing. A
	 * file system that reads through iomap (FUSE on 7.3) reports such
	 * a read as a folio left !uptodate, -EIO, with the signal pending.
	 */
	for (;;) {
		/*
		 * read_cache_folio() expects the invalidate_lock held (its
		 * kernel-doc): without it, a folio read while a hole is punched
		 * or the file truncated can be instantiated with the blocks
		 * being freed, and stay in the page cache, stale, for every
		 * reader after the punch. lib/buildid.c took it too before it
		 * moved to __kernel_read() (777a8560fd29), which is not exported
		 * to modules (and kernel_read() would add fsnotify events,
		 * permission hooks and atime, which this reader promises not to).
		 */
		filemap_invalidate_lock_shared(mapping);
		folio = read_cache_folio(mapping, index, NULL, file);
		filemap_invalidate_unlock_shared(mapping);
		if (!IS_ERR(folio) || ++tries > 3 || fatal_signal_pending(current))
			return folio;
		err = PTR_ERR(folio);
		if (err != -EINTR && err != -ERESTARTSYS && err != -EAGAIN &&
		    !(err == -EIO && signal_pending(current)))
			return folio;
	}
}

const size_t mmap3_reader_size = sizeof(struct mmap3_reader);

void mmap3_read_done(struct mmap3_reader *r)
{
	if (r->addr)
		kunmap_local(r->addr);
	if (r->folio)
		folio_put(r->folio);
	r->addr = NULL;
	r->folio = NULL;
	r->start = r->end = 0;
}

/*
 * The page of @folio that holds @pos becomes the reader's mapped page,
 * holding the bytes of the file from its start to the end of the page or
 * of the file, whichever comes first.
 */
static void mmap3_read_map(struct mmap3_reader *r, struct folio *folio, loff_t pos)
{
	size_t off = offset_in_folio(folio, pos) & PAGE_MASK;

	r->folio = folio;
	r->addr = kmap_local_folio(folio, off);
	r->start = folio_pos(folio) + off;
	r->end = min_t(loff_t, r->start + PAGE_SIZE, r->size);
}

static ssize_t mmap3_read_slow(struct mmap3_reader *r, loff_t pos, void *buf, size_t len)
{
	struct address_space *mapping = r->file->f_mapping;
	size_t done = 0;

	if (r->size < 0) {
		struct inode *inode = mapping->host;

		if (IS_DAX(inode) || (!shmem_mapping(mapping) && !mapping->a_ops->read_folio))
			return -EOPNOTSUPP;
		r->size = i_size_read(inode);
	}
	if (pos < 0)
		return -EINVAL;
	if (pos >= r->size)
		return 0;
	len = min_t(loff_t, len, r->size - pos);
	while (done < len) {
		loff_t at = pos + done;
		pgoff_t index = at >> PAGE_SHIFT;
		struct folio *folio = r->folio;
		size_t n;

		if (at < r->start || at >= r->end) {
			if (folio && index >= folio->index && index < folio_next_index(folio)) {
				/* Another page of the folio kept. */
				kunmap_local(r->addr);
			} else {
				mmap3_read_done(r);
				folio = mmap3_get_folio(r->file, index, r->may_io);
				if (IS_ERR(folio))
					return PTR_ERR(folio);
				if (!folio) {
					n = min_t(size_t, len - done, PAGE_SIZE - offset_in_page(at));
					memset(buf + done, 0, n);
					done += n;
					continue;
				}
			}
			mmap3_read_map(r, folio, at);
		}
		n = min_t(size_t, len - done, r->end - at);
		memcpy(buf + done, r->addr + (at - r->start), n);
		done += n;
	}
	return done;
}

/*
 * The @len bytes at @pos of @r->file, @len at most MMAP3_FETCH_MAX, read
 * through its page cache as the kernel's own build-id reader (lib/buildid.c,
 * its freader) reads: folio by folio, keeping the last folio and the page of
 * it mapped for the next fetch (a parse reads the ELF header, the program
 * headers and the notes, most often all in the first page), so that no
 * fsnotify event (no fanotify permission event, no inotify IN_ACCESS), no
 * atime update, no permission check against current's credentials is
 * involved, O_DIRECT does not apply, and only the pages holding the bytes
 * asked for are read from the disk (no readahead). *@bytes points at them,
 * in the mapped page when it holds them all (most fetches), else in
 * @r->buf, until the next fetch or mmap3_read_done(); they may change under
 * the reader (write(), a shared mapping) when they are in place: load each
 * once. Without @r->may_io, only what is in the page cache is used: -EAGAIN
 * when a page is not there. Returns how many bytes, short at the end of the
 * file (its size at the first fetch); -EOPNOTSUPP for a file whose data is
 * not in the page cache (no ->read_folio, DAX). mmap3_read_done() drops the
 * folio kept.
 */
ssize_t mmap3_fetch(struct mmap3_reader *r, loff_t pos, size_t len, const void **bytes)
{
	if (likely(pos >= r->start && pos <= r->end && len <= r->end - pos && r->addr)) {
		*bytes = r->addr + (pos - r->start);
		return len;
	}
	if (len > sizeof(r->buf))
		return -EINVAL;
	*bytes = r->buf;
	return mmap3_read_slow(r, pos, r->buf, len);
}

static int mmap3_is_fuse_dev(const void *unused, struct file *file, unsigned int fd)
{
	struct inode *inode = file_inode(file);

	return S_ISCHR(inode->i_mode) && inode->i_rdev == MKDEV(MISC_MAJOR, FUSE_MINOR);
}

/*
 * Whether current holds an open /dev/fuse: then it may be the server of a
 * FUSE mount, and a read of a file of that mount would wait for a reply
 * that only current can give.
 */
bool mmap3_serves_fuse(void)
{
	return current->files && iterate_fd(current->files, 0, mmap3_is_fuse_dev, NULL);
}

/*
 * Counters, as many as rust/stats.rs's enum Stat has (it checks): events
 * since load (hits, misses, evictions, deferred reads, records), then gauges
 * (cache entries in use and capacity). Per CPU: the hook counts every
 * mapping on every CPU, and one shared counter would bounce its cache line
 * between them; the debugfs file shows the sums.
 */
#define MMAP3_NR_STATS 6

struct mmap3_stats {
	s64 count[MMAP3_NR_STATS];
};

/* From mmap3_stats_alloc() to mmap3_stats_free(). */
static struct mmap3_stats __percpu *mmap3_stats;

const unsigned int mmap3_nr_stats = MMAP3_NR_STATS;

/* Zeroed counters, from load to unload. Return: 0, or -ENOMEM. */
int mmap3_stats_alloc(void)
{
	mmap3_stats = alloc_percpu(struct mmap3_stats);
	return mmap3_stats ? 0 : -ENOMEM;
}

/* Once nothing counts or reads the counters any more. */
void mmap3_stats_free(void)
{
	free_percpu(mmap3_stats);
	mmap3_stats = NULL;
}

void mmap3_stat_add(unsigned int stat, s64 delta)
{
	if (WARN_ON_ONCE(stat >= MMAP3_NR_STATS || !mmap3_stats))
		return;
	this_cpu_add(mmap3_stats->count[stat], delta);
}

/*
 * The sum of @stat over the CPUs. Other CPUs keep counting meanwhile: the
 * sum is a snapshot of no single instant, as any counter read while it runs.
 */
s64 mmap3_stat_sum(unsigned int stat)
{
	s64 sum = 0;
	int cpu;

	if (WARN_ON_ONCE(stat >= MMAP3_NR_STATS || !mmap3_stats))
		return 0;
	for_each_possible_cpu(cpu)
		sum += READ_ONCE(per_cpu_ptr(mmap3_stats, cpu)->count[stat]);
	return sum;
}
