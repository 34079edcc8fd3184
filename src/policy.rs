// SPDX-License-Identifier: GPL-2.0

//! The policy: which files the module reads, and which answers it may
//! cache, with the argument that a cache hit is the mapped file's current
//! build-id.

use crate::file::{self, Identity};

/// File systems whose files are not program images, or whose reads have
/// side effects or are not plain data: their mappings get [`Missing::Skipped`].
const SKIPPED_FS: &[core::ffi::c_ulong] = &[
    0x9fa0,     // PROC_SUPER_MAGIC
    0x62656572, // SYSFS_MAGIC
    0x64626720, // DEBUGFS_MAGIC
    0x74726163, // TRACEFS_MAGIC
    0x73636673, // SECURITYFS_MAGIC
    0x27e0eb,   // CGROUP_SUPER_MAGIC
    0x63677270, // CGROUP2_SUPER_MAGIC
    0xcafe4a11, // BPF_FS_MAGIC
    0x62656570, // CONFIGFS_MAGIC
    0xde5e81e4, // EFIVARFS_MAGIC
    0x6165676c, // PSTOREFS_MAGIC
    0x5345434d, // SECRETMEM_MAGIC: secret memory is never read
];

/// Whether a file is a regular file.
fn regular(id: &Identity) -> bool {
    const S_IFMT: u32 = 0o170000;
    const S_IFREG: u32 = 0o100000;
    id.mode & S_IFMT == S_IFREG
}

/// Whether the module may read a file: a regular file on a file system that
/// holds data.
pub(crate) fn readable(id: &Identity) -> bool {
    regular(id) && !SKIPPED_FS.contains(&id.fs_magic)
}

/// File systems that keep `i_version` and bump it, once queried, on every
/// change of a file's data, including the first write through a shared
/// mapping after its pages were cleaned (`->page_mkwrite` calls
/// `file_update_time()`), truncation, hole punching and reflinks; checked in
/// their sources. ext2 and ext3 images mounted by ext4 are ext4 here (ext4
/// sets `SB_I_VERSION` unconditionally). XFS keeps it on v5 (CRC) file
/// systems; [`Identity::versioned`] is checked per file all the same.
const VERSIONED_FS: &[core::ffi::c_ulong] = &[
    0xef53,     // EXT4_SUPER_MAGIC (ext2, ext3, ext4)
    0x58465342, // XFS_SUPER_MAGIC
];

/// Read-only image file systems: no write path at all, so a file's bytes
/// are fixed for the life of its superblock.
const IMAGE_FS: &[core::ffi::c_ulong] = &[
    0x73717368, // SQUASHFS_MAGIC
    0xe0f5e1e2, // EROFS_SUPER_MAGIC_V1
    0x9660,     // ISOFS_SUPER_MAGIC
];

/// Whether an answer for this file may be cached now, or taken from the
/// cache: the rule that makes a hit the mapped file's current build-id.
///
/// An entry is keyed by (superblock serial, ino, generation) and valid for
/// one version (`i_version`, size, ctime); it holds what was parsed from
/// the file while its identity did not move ([`parse_stable`]: read before
/// the parse, found unchanged after it, no writer either time). A hit says that the
/// file mapped now holds the bytes that were parsed. That follows from:
///
/// 1. **The same file system instance.** The serial (`FileExt::sb_serial`,
///    `rust/helpers.c`) is a 64-bit count that is never reused, given to a
///    superblock by the module and forgotten when that superblock is shut
///    down, before it is freed: an entry with the serial of the mapped
///    file's superblock was made for a file of this very instance. Two
///    images mounted in turn on one loop device, a partition rewritten while
///    unmounted, a file system mounted again: each is a new superblock with
///    a new serial. (`s_dev` and the superblock's address are reused, and
///    an image's UUID, times and inode numbers are copied with it, so none
///    of those can tell instances apart.)
/// 2. **The same file in it.** Within one instance an inode number names one
///    file at a time; a number freed and handed out again gets another
///    generation (XFS increments it when it frees the inode; ext4 draws a
///    new random 32-bit one, so only a 1 in 2^32 draw keeps it) and the
///    ctime of its creation, both in the key or version. On [`IMAGE_FS`] nothing is ever freed.
///    Hard links and bind mounts reach the same inode, so the same answer is
///    right for them. An overlayfs mapping maps the real (upper or lower)
///    file, whose own superblock and inode are what the hook sees.
/// 3. **Unchanged since the parse.** On [`VERSIONED_FS`] the version holds
///    `i_version`, queried when the identity is read: by its contract
///    (`linux/iversion.h`) any later change of the file's data or metadata
///    makes it larger, whatever the clock says (a clock stepped back can
///    give a rewrite the old ctime, not the old `i_version`). ext4 and XFS
///    keep it in the on-disk inode, so it survives the inode's eviction
///    (except on ext2 file systems made by GNU Hurd, where ext4 keeps it
///    in memory only: there a rewrite after an eviction would also need
///    the old ctime again to hit). But `write()`
///    bumps it *before* it copies the data, and a writable shared mapping
///    bumps it at its first write fault only, so while the file has a writer
///    (open for writing, or mapped shared and writable) the bytes can change
///    under an unchanged version: nothing is cached or served then
///    (`writers`, checked at lookup, before and after the parse). Once no
///    writer is left, a new change needs a new writer, whose change bumps
///    the queried counter. On [`IMAGE_FS`] the bytes cannot change at all.
///
/// What is assumed, and not checked: nobody writes the block device (or
/// image file) under a mounted file system. The file system's own caches
/// are wrong then too, and Linux can forbid it
/// (`CONFIG_BLK_DEV_WRITE_MOUNTED=n`).
///
/// Everything else is parsed at every mapping, from the page cache when it
/// holds the pages: file systems without `i_version`; btrfs, whose
/// snapshots share one superblock with the original and copy its inode
/// numbers, generations and `i_version`s (a subvolume is not visible in the
/// inode without btrfs' own types); tmpfs and ramfs, which stamp nothing on
/// writes through a shared mapping; network file systems and FUSE, whose
/// servers set the file's metadata.
/// A cacheable file is [`readable`]: none of these file systems is in
/// [`SKIPPED_FS`].
pub(crate) fn cacheable(id: &Identity) -> bool {
    regular(id)
        && !id.writers
        && ((id.versioned && VERSIONED_FS.contains(&id.fs_magic))
            || IMAGE_FS.contains(&id.fs_magic))
}

const FUSE_SUPER_MAGIC: core::ffi::c_ulong = 0x65735546;

/// Whether a read of the file would wait for the reading task itself: the
/// server of a FUSE mount reading a file of it, which needs a reply that
/// only the server can give. Such a file is not read.
pub(crate) fn reads_own_fuse(id: &Identity) -> bool {
    id.fs_magic == FUSE_SUPER_MAGIC && file::serves_fuse()
}
