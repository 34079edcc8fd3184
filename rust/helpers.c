// SPDX-License-Identifier: GPL-2.0
/*
 * C helpers of the mmap3 module: what Rust cannot call directly (static
 * inline functions, module_param(), MODULE_VERSION(), debugfs boilerplate).
 * No policy lives here: the Rust files in rust/ wrap each helper,
 * src/mmap3.rs decides.
 */
#include "helpers.h"

#include <linux/debugfs.h>
#include <linux/fs.h>
#include <linux/lockdep.h>
#include <linux/mm_types.h>
#include <linux/module.h>
#include <linux/percpu.h>
#include <linux/sched.h>
#include <linux/seq_file.h>
#include <linux/time64.h>

static unsigned int cache_entries = 4096;
module_param(cache_entries, uint, 0444);
MODULE_PARM_DESC(cache_entries,
		 "Build-ids remembered, by (dev, ino, generation); 0 disables the cache (default 4096)");

/* dkms.conf's PACKAGE_VERSION, passed by Kbuild. */
MODULE_VERSION(MMAP3_VERSION);

unsigned int mmap3_param_cache_entries(void)
{
	return cache_entries;
}

void mmap3_get_file(struct file *file)
{
	get_file(file);
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

const size_t mmap3_identity_size = sizeof(struct mmap3_identity);

void mmap3_file_identity(struct file *file, struct mmap3_identity *id)
{
	struct inode *inode = file_inode(file);
	struct timespec64 ctime = inode_get_ctime(inode);
	struct timespec64 now;

	ktime_get_coarse_real_ts64(&now);
	now = timestamp_truncate(now, inode);

	id->ino = inode->i_ino;
	id->ctime_sec = ctime.tv_sec;
	id->ctime_nsec = ctime.tv_nsec;
	id->size = i_size_read(inode);
	id->dev = inode->i_sb->s_dev;
	id->generation = inode->i_generation;
	id->mode = inode->i_mode;
	id->fs_magic = inode->i_sb->s_magic;
	/*
	 * ctime is taken from the same coarse clock, truncated to the file
	 * system's granularity: once that clock has moved past ctime, any new
	 * change of the file stamps a different ctime. Before that, a change
	 * within the same tick would keep ctime and size, so what is read now
	 * must not be trusted later.
	 */
	id->settled = timespec64_compare(&now, &ctime) > 0;
}

/*
 * Counters, in the order of rust/stats.rs's enum Stat: events since load
 * (hits, misses, evictions, deferred reads, records), then gauges (cache
 * entries in use and capacity). Per CPU: the hook counts every mapping on
 * every CPU, and one shared counter would bounce its cache line between
 * them; the debugfs file shows the sums.
 */
static const char *const mmap3_stat_names[] = {
	"hits", "misses", "evictions", "deferred", "emitted", "entries", "capacity",
};
#define MMAP3_NR_STATS ARRAY_SIZE(mmap3_stat_names)

struct mmap3_stats {
	s64 count[MMAP3_NR_STATS];
};

/* From mmap3_debugfs_create() to mmap3_debugfs_remove(). */
static struct mmap3_stats __percpu *mmap3_stats;
static struct dentry *mmap3_debugfs;

const unsigned int mmap3_nr_stats = MMAP3_NR_STATS;

void mmap3_stat_add(unsigned int stat, s64 delta)
{
	if (WARN_ON_ONCE(stat >= MMAP3_NR_STATS || !mmap3_stats))
		return;
	this_cpu_add(mmap3_stats->count[stat], delta);
}

static int mmap3_stats_show(struct seq_file *m, void *unused)
{
	unsigned int i;
	int cpu;

	for (i = 0; i < MMAP3_NR_STATS; i++) {
		s64 sum = 0;

		/*
		 * Other CPUs keep counting meanwhile: the sum is a snapshot
		 * of no single instant, as any counter read while it runs.
		 */
		for_each_possible_cpu(cpu)
			sum += READ_ONCE(per_cpu_ptr(mmap3_stats, cpu)->count[i]);
		seq_printf(m, "%s %lld\n", mmap3_stat_names[i], sum);
	}
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(mmap3_stats);

/*
 * Zeroed counters, and /sys/kernel/debug/mmap3/stats, from load to unload.
 * Return: 0, or -ENOMEM.
 */
int mmap3_debugfs_create(void)
{
	mmap3_stats = alloc_percpu(struct mmap3_stats);
	if (!mmap3_stats)
		return -ENOMEM;
	mmap3_debugfs = debugfs_create_dir("mmap3", NULL);
	debugfs_create_file("stats", 0444, mmap3_debugfs, NULL, &mmap3_stats_fops);
	return 0;
}

/* Once nothing counts any more: after the provider is unregistered. */
void mmap3_debugfs_remove(void)
{
	/* Waits for readers of the file: then no one reads the counters. */
	debugfs_remove(mmap3_debugfs);
	free_percpu(mmap3_stats);
	mmap3_stats = NULL;
}
