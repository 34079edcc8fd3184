// SPDX-License-Identifier: GPL-2.0

//! PERF_RECORD_MMAP3 provider: each mapping with its ELF build-id, found
//! without file I/O under `mmap_lock`.
//!
//! The lookup runs under `mmap_lock`, without sleeping. It answers from a
//! cache of build-ids, or from the page cache when every page the note
//! needs is there (no I/O, as the kernel's own `build_id_parse_nofault()`);
//! otherwise it defers: the kernel pins the file and, before the mapping
//! task returns to user space, has the module read the pages it needs
//! through the page cache, holding no lock. The kernel writes the records,
//! one per mapping, in the order of the mappings.

use kernel::{prelude::*, ThisModule};

#[path = "../rust/answer.rs"]
mod answer;
#[path = "buildid.rs"]
pub mod buildid;
#[path = "cache.rs"]
pub mod cache;
#[path = "../rust/compat.rs"]
mod compat;
#[path = "../rust/file.rs"]
mod file;
#[path = "../rust/params.rs"]
mod params;
#[path = "../rust/probe.rs"]
mod probe;
#[cfg(mmap3_series)]
#[path = "../rust/provider.rs"]
mod provider;
#[path = "../rust/stats.rs"]
mod stats;
#[path = "status.rs"]
mod status;

use answer::{BuildIdOut, Defer, Provider};
use compat::{File, InPlaceModule, VmaRef};
use file::{Fetched, FileExt as _, Identity, PageReader, Superblocks, UnlockedFile, VmaFile as _};
use stats::Stat;
use status::Status;

compat::module! {
    type: Mmap3,
    name: "mmap3",
    authors: ["mmap3 developers"],
    description: "PERF_RECORD_MMAP3 provider: mappings with their ELF build-id",
    license: "GPL",
}

/// What a lookup found out.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Answer {
    Found(buildid::BuildId),
    Missing(Status),
    /// From the cache, as [`Answer::to_value`] put it there.
    Cached(cache::Value),
}

impl Answer {
    /// Gives the answer to the kernel.
    fn write(&self, out: &mut BuildIdOut) {
        match self {
            Answer::Found(id) => out.found(id.padded(), id.size()),
            Answer::Missing(status) => out.missing(*status),
            Answer::Cached(value) => match Status::from_u8(value.status()) {
                Some(Status::Found) => {
                    let (id, len) = value.padded_build_id();
                    out.found(id, len)
                }
                // The cache holds only what `to_value` made.
                status => out.missing(status.unwrap_or(Status::IoError)),
            },
        }
    }

    /// The answer as the cache holds it; none for a read error, which is
    /// never cached.
    fn to_value(self) -> Option<cache::Value> {
        match self {
            Answer::Found(id) => cache::Value::new(Status::Found as u8, id.as_bytes()),
            Answer::Missing(Status::IoError) => None,
            Answer::Missing(status) => cache::Value::new(status as u8, &[]),
            Answer::Cached(value) => Some(value),
        }
    }
}

/// The cache of answers by file: lookups take no lock (`src/cache.rs`
/// says how), in sets allocated at load.
type Cache = cache::Cache<KVVec<cache::Set>>;

/// File systems whose files are not program images, or whose reads have
/// side effects or are not plain data: their mappings get [`Status::Skipped`].
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
fn readable(id: &Identity) -> bool {
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
fn cacheable(id: &Identity) -> bool {
    regular(id)
        && !id.writers
        && ((id.versioned && VERSIONED_FS.contains(&id.fs_magic))
            || IMAGE_FS.contains(&id.fs_magic))
}

/// The provider: the cache of answers.
pub(crate) struct Mmap3Provider {
    cache: Cache,
}

impl Mmap3Provider {
    /// The provider with an empty cache of at least `cache_entries` entries
    /// (the module parameter), in whole sets.
    fn new() -> Result<Self> {
        let len = Cache::sets_for(params::cache_entries());
        let mut sets = KVVec::with_capacity(len, GFP_KERNEL)?;
        for _ in 0..len {
            sets.push(cache::Set::new(), GFP_KERNEL)?;
        }
        let cache = Cache::new(sets);
        stats::add(Stat::Capacity, cache.capacity() as i64);
        Ok(Mmap3Provider { cache })
    }

    /// Whether the answer for a file goes through the cache: [`cacheable`],
    /// and the cache has room (none with `cache_entries=0`: then no
    /// superblock is looked up or numbered for it either).
    fn caches(&self, id: &Identity) -> bool {
        self.cache.capacity() != 0 && cacheable(id)
    }

    /// A file's key in the cache: which file. `sb` is the serial of its
    /// superblock, as `FileExt::sb_serial` or `FileExt::register_sb` gave it.
    fn key(sb: u64, id: &Identity) -> cache::Key {
        cache::Key {
            sb,
            ino: id.ino,
            generation: id.generation,
        }
    }

    /// A file's version in the cache: what changes when the file does.
    fn version(id: &Identity) -> cache::Version {
        [id.change, id.size as u64, id.ctime_ns as u64]
    }

    /// The cached answer for `file`, whose identity is `id`, if it has not
    /// changed since: none for a superblock the module has not numbered (no
    /// entry can be for it).
    fn cached(&self, file: &File, id: &Identity) -> Option<Answer> {
        let sb = file.sb_serial()?;
        match self.cache.lookup(&Self::key(sb, id), &Self::version(id)) {
            cache::Lookup::Hit(value) => Some(Answer::Cached(value)),
            // A stale entry stays until the insert after the read replaces
            // it, or CLOCK evicts it.
            cache::Lookup::Stale | cache::Lookup::Miss => None,
        }
    }

    /// Caches `answer` for the file `id` on the superblock numbered `sb`,
    /// unless another CPU is writing the same set: the next miss reads the
    /// file again.
    fn insert(&self, sb: u64, id: &Identity, answer: Answer) {
        let Some(value) = answer.to_value() else {
            return;
        };
        match self
            .cache
            .insert(&Self::key(sb, id), &Self::version(id), &value)
        {
            cache::Insert::New => stats::add(Stat::Entries, 1),
            cache::Insert::Evicted(_) => stats::add(Stat::Evictions, 1),
            cache::Insert::Replaced | cache::Insert::Busy | cache::Insert::Disabled => (),
        }
    }

    /// Caches what was read from `file`, whose identity was `id` from
    /// before the read to after it, when [`cacheable`] allows it, numbering
    /// its superblock first if need be (`FileExt::register_sb`, which may
    /// sleep; the file keeps its superblock alive meanwhile).
    fn remember(&self, file: &File, id: &Identity, answer: Answer) {
        if !self.caches(id) {
            return;
        }
        if let Some(sb) = file.register_sb() {
            self.insert(sb, id, answer);
        }
    }
}

/// Where a [`FileReader`] gets the bytes.
#[derive(Clone, Copy)]
enum Source<'a> {
    /// Only what the page cache holds (under `mmap_lock`).
    Cached(&'a File),
    /// Whatever it takes (no lock held).
    Io(UnlockedFile<'a>),
}

impl Source<'_> {
    /// The file read.
    fn file(&self) -> &File {
        match self {
            Source::Cached(file) => file,
            Source::Io(file) => file,
        }
    }
}

/// [`buildid::Reader`] over a file, reading through the page cache; keeps
/// the first error.
struct FileReader<'a> {
    reader: PageReader<'a>,
    error: Option<Error>,
}

impl buildid::Reader for FileReader<'_> {
    type Bytes<'b>
        = Fetched<'b>
    where
        Self: 'b;

    fn fetch(&mut self, offset: u64, len: usize) -> Result<Fetched<'_>, buildid::ReadError> {
        self.reader.fetch(offset, len).map_err(|e| {
            self.error.get_or_insert(e);
            buildid::ReadError
        })
    }
}

/// Parses the build-id note of a file. `Err` when a page needed is not in
/// the page cache ([`Source::Cached`] only).
fn parse(source: Source<'_>) -> Result<Answer, Error> {
    let mut reader = FileReader {
        reader: match source {
            Source::Cached(file) => file.cached_reader(),
            Source::Io(file) => file.reader(),
        },
        error: None,
    };
    Ok(match buildid::find_build_id(&mut reader) {
        Ok(id) => Answer::Found(id),
        Err(buildid::Error::NotElf) => Answer::Missing(Status::NotElf),
        Err(buildid::Error::NoBuildId) => Answer::Missing(Status::NoBuildId),
        Err(buildid::Error::Malformed) => Answer::Missing(Status::Malformed),
        // A file whose data is not in the page cache (no ->read_folio,
        // DAX): the module does not read it.
        Err(buildid::Error::Io) if reader.error.map(Error::to_errno) == Some(-EOPNOTSUPP) => {
            Answer::Missing(Status::Skipped)
        }
        Err(buildid::Error::Io) => match (source, reader.error) {
            (Source::Cached(_), Some(e)) => return Err(e),
            _ => Answer::Missing(Status::IoError),
        },
    })
}

/// Parses the note of a file that may be changing under the read; returns
/// the answer and whether the file had no writer and kept the identity
/// `first` (read by the caller just before) from before the parse to after
/// it ([`FileExt::unchanged`]): only then may the answer be cached for
/// `first`.
///
/// A `write()` in progress, or a writer through a shared mapping, can leave
/// the note half old and half new when it is read: an id the file never
/// had. When the file has a writer, or its identity moved, the note is read
/// again until two reads agree; a file that keeps changing gives
/// [`Status::IoError`].
// Inlined: its answer would otherwise be copied out of one more frame on
// every mapping that misses the cache.
#[inline(always)]
fn parse_stable(source: Source<'_>, first: &Identity) -> Result<(Answer, bool), Error> {
    let mut answer = parse(source)?;
    if source.file().unchanged(first) {
        return Ok((answer, true));
    }
    for _ in 0..4 {
        let again = parse(source)?;
        if again == answer {
            return Ok((answer, false));
        }
        answer = again;
    }
    Ok((Answer::Missing(Status::IoError), false))
}

impl Provider for Mmap3Provider {
    fn lookup(&self, vma: &VmaRef, out: &mut BuildIdOut) -> Result<(), Defer> {
        let Some(file) = vma.file() else {
            out.missing(Status::NoFile);
            return Ok(());
        };
        // The identity is read once per mapping on this path, into the one
        // place every step borrows it from.
        let id = file.identity();
        // The kernel's internal shmem file behind shared anonymous memory,
        // shared /dev/zero and SysV shared memory is anonymous memory. memfd
        // files are real files (programs run from them) and are read. (A
        // private /dev/zero mapping keeps /dev/zero as its file: a character
        // device, not read.)
        if id.private {
            out.missing(Status::NoFile);
            return Ok(());
        }
        self.lookup_file(file, &id, out).inspect_err(|_| {
            stats::add(Stat::Deferred, 1);
        })
    }

    fn read(&self, file: UnlockedFile<'_>, out: &mut BuildIdOut) {
        self.read_file(file).write(out);
    }
}

impl Mmap3Provider {
    /// Looks a mapped file up under `mmap_lock`, without sleeping: the
    /// cache, then (on a file system the module reads) the page cache.
    /// Deferred when a page is missing, or when the answer could be cached
    /// but the file's superblock has no serial yet (numbering it may sleep:
    /// [`Mmap3Provider::read_file`] does). The answer goes straight into
    /// `out`, not through the caller's frame.
    fn lookup_file(&self, file: &File, id: &Identity, out: &mut BuildIdOut) -> Result<(), Defer> {
        let caches = self.caches(id);
        if caches {
            if let Some(answer) = self.cached(file, id) {
                stats::add(Stat::Hits, 1);
                answer.write(out);
                return Ok(());
            }
        }
        // Only a file that missed the cache is looked at against the file
        // systems not read: a cacheable one is readable.
        if !readable(id) {
            out.missing(Status::Skipped);
            return Ok(());
        }
        stats::add(Stat::Misses, 1);
        let (answer, unchanged) = parse_stable(Source::Cached(file), id).map_err(|_| Defer)?;
        if unchanged && caches {
            let sb = file.sb_serial().ok_or(Defer)?;
            self.insert(sb, id, answer);
        }
        answer.write(out);
        Ok(())
    }

    /// Reads a file's build-id, with no lock held: the cache first, where
    /// another mapping of the same file (another segment of one binary) may
    /// have put it since the lookup.
    fn read_file(&self, file: UnlockedFile<'_>) -> Answer {
        let before = file.identity();
        if self.caches(&before) {
            if let Some(answer) = self.cached(&file, &before) {
                return answer;
            }
        }
        // The server of a FUSE mount would wait for itself: a read of its
        // own file system needs a reply that only it can give.
        if before.fs_magic == FUSE_SUPER_MAGIC && file::serves_fuse() {
            return Answer::Missing(Status::Skipped);
        }
        match parse_stable(Source::Io(file), &before) {
            Ok((answer, unchanged)) => {
                if unchanged {
                    self.remember(&file, &before, answer);
                }
                answer
            }
            Err(_) => Answer::Missing(Status::IoError),
        }
    }
}

const FUSE_SUPER_MAGIC: core::ffi::c_ulong = 0x65735546;

/// No page cache behind the file (`mmap3_file_read()`).
const EOPNOTSUPP: i32 = kernel::bindings::EOPNOTSUPP as i32;

/// Where the provider lives: in the series' registration, which the
/// kernel calls for its mmap3 perf events, or in the module alone.
#[cfg(mmap3_series)]
type Home = provider::Registration<Mmap3Provider>;
#[cfg(not(mmap3_series))]
type Home = Mmap3Provider;

#[cfg(mmap3_series)]
impl probe::AsProvider for Home {
    fn provider(&self) -> &Mmap3Provider {
        provider::Registration::provider(self)
    }
}

#[cfg(not(mmap3_series))]
impl probe::AsProvider for Home {
    fn provider(&self) -> &Mmap3Provider {
        self
    }
}

/// The provider in its [`Home`], registered with the series' hook.
#[cfg(mmap3_series)]
fn new_home(module: &'static ThisModule) -> Result<impl PinInit<Home, Error>> {
    Ok(provider::Registration::new(module, Mmap3Provider::new()?))
}

/// The provider in its [`Home`].
#[cfg(not(mmap3_series))]
fn new_home(_module: &'static ThisModule) -> Result<impl PinInit<Home, Error>> {
    // A `Result` initialises in place what it holds.
    Ok(Mmap3Provider::new())
}

/// The module's state; dropped field by field, in this order: the trace
/// event first (its drop waits for its deferred reads), then the provider
/// it holds, so that no hook runs when the superblocks' serials go.
#[pin_data(PinnedDrop)]
struct Mmap3 {
    #[pin]
    event: probe::Event<Home>,
    _superblocks: Superblocks,
    #[pin]
    _stats: stats::Stats,
}

impl InPlaceModule for Mmap3 {
    fn init(module: &'static ThisModule) -> impl PinInit<Self, Error> {
        try_pin_init!(Mmap3 {
            _stats <- stats::new()?,
            _superblocks: Superblocks::new()?,
            event <- probe::Event::new(new_home(module)?),
        })
        .pin_chain(|mmap3| {
            pr_info!(
                "loaded, cache of {} entries of {} bytes; trace event mmap3:build_id{}\n",
                probe::AsProvider::provider(mmap3.event.home())
                    .cache
                    .capacity(),
                core::mem::size_of::<cache::Set>() / cache::WAYS,
                if cfg!(mmap3_series) {
                    ", MMAP3 provider"
                } else {
                    ""
                }
            );
            Ok(())
        })
    }
}

#[pinned_drop]
impl PinnedDrop for Mmap3 {
    fn drop(self: Pin<&mut Self>) {
        pr_info!("unloaded\n");
    }
}
