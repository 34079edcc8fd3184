// SPDX-License-Identifier: GPL-2.0
/*
 * The C side of rust/compat.rs: what the stand-ins for the kernel crate's
 * abstractions need, on kernels whose crate lacks them (Kbuild defines
 * MMAP3_KERNEL_<name> for those it has).
 */
#include "helpers.h"

#include <linux/debugfs.h>
#include <linux/fs.h>
#include <linux/seq_file.h>

#ifndef MMAP3_KERNEL_DEBUGFS
/* compat::DebugfsFile: a file shown by a Rust function. */
static int mmap3_show_show(struct seq_file *m, void *unused)
{
	const struct mmap3_show *show = m->private;

	return show->show(m, show->data);
}
DEFINE_SHOW_ATTRIBUTE(mmap3_show);

/*
 * The directory @dir at the debugfs root holding the read-only file @file
 * that @show shows; @show lives until mmap3_debugfs_remove(). Errors are
 * ignored, as debugfs callers do: then there is no file.
 */
struct dentry *mmap3_debugfs_create(const char *dir, const char *file,
				    const struct mmap3_show *show)
{
	struct dentry *d = debugfs_create_dir(dir, NULL);

	debugfs_create_file(file, 0400, d, (void *)show, &mmap3_show_fops);
	return d;
}

/* Removes @dir and its file; returns once no reader is in the file. */
void mmap3_debugfs_remove(struct dentry *dir)
{
	debugfs_remove(dir);
}
#endif
