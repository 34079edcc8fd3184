// SPDX-License-Identifier: GPL-2.0

//! PERF_RECORD_MMAP3 provider: each mapping with its ELF build-id, found
//! without file I/O under `mmap_lock`.
//!
//! The hook runs under `mmap_lock`. It answers from a cache of build-ids
//! when it can; otherwise it pins the file and defers the lookup to
//! task_work, where the mapping task, holding no lock, reads the file with
//! `kernel_read()` through [`buildid`] before it returns to user space.
//! Either way exactly one record is written per mapping.

use kernel::{prelude::*, ThisModule};

#[path = "buildid.rs"]
pub mod buildid;
#[path = "cache.rs"]
pub mod cache;
#[path = "../rust/file.rs"]
mod file;
#[path = "../rust/provider.rs"]
mod provider;
#[path = "../rust/stats.rs"]
mod stats;

use file::{Identity, PinnedFile, Vma};
use provider::{MapInfo, OwnedMapInfo, Registration, Status};
use stats::Stat;

module! {
    type: Mmap3,
    name: "mmap3",
    author: "mmap3 developers",
    description: "PERF_RECORD_MMAP3 provider: mappings with their ELF build-id",
    license: "GPL",
}

/// What a lookup found out, as cached: everything but read errors.
#[derive(Clone, Copy)]
enum Answer {
    Found(buildid::BuildId),
    Missing(Status),
}

impl Answer {
    fn emit(&self, info: &MapInfo) {
        let result = match self {
            Answer::Found(id) => info.emit(Status::Found, id.as_bytes()),
            Answer::Missing(status) => info.emit(*status, &[]),
        };
        if result.is_ok() {
            stats::add(Stat::Emitted, 1);
        }
    }
}

impl Answer {
    /// The answer as the cache holds it.
    fn to_value(self) -> Option<cache::Value> {
        match self {
            Answer::Found(id) => cache::Value::new(Status::Found as u8, id.as_bytes()),
            Answer::Missing(status) => cache::Value::new(status as u8, &[]),
        }
    }
}

/// An answer from the cache.
struct Cached(cache::Value);

impl Cached {
    fn emit(&self, info: &MapInfo) {
        const ALL: [Status; 7] = [
            Status::Found,
            Status::NoFile,
            Status::NotElf,
            Status::NoBuildId,
            Status::Malformed,
            Status::IoError,
            Status::Skipped,
        ];
        // The cache holds only what `Answer::to_value` made.
        let status = ALL
            .into_iter()
            .find(|s| *s as u8 == self.0.status())
            .unwrap_or(Status::IoError);
        if info.emit(status, self.0.build_id()).is_ok() {
            stats::add(Stat::Emitted, 1);
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

/// Whether the module may read a file: a regular file on a file system that
/// holds data.
fn readable(id: &Identity) -> bool {
    const S_IFMT: u32 = 0o170000;
    const S_IFREG: u32 = 0o100000;
    id.mode & S_IFMT == S_IFREG && !SKIPPED_FS.contains(&id.fs_magic)
}

/// The provider: the cache of answers.
struct Mmap3Provider {
    cache: Cache,
}

impl Mmap3Provider {
    /// An empty cache of at least `entries` entries, in whole sets.
    fn new_cache(entries: usize) -> Result<Cache> {
        let len = Cache::sets_for(entries);
        let mut sets = KVVec::with_capacity(len, GFP_KERNEL)?;
        for _ in 0..len {
            sets.push(cache::Set::new(), GFP_KERNEL)?;
        }
        Ok(Cache::new(sets))
    }

    /// A file's key in the cache: which file.
    fn key(id: &Identity) -> cache::Key {
        cache::Key {
            dev: id.dev,
            ino: id.ino,
            generation: id.generation,
        }
    }

    /// A file's version in the cache: what changes when the file does.
    fn version(id: &Identity) -> cache::Version {
        [
            id.ctime_sec as u64,
            id.size as u64,
            u64::from(id.ctime_nsec),
        ]
    }

    /// The cached answer for the file `id`, if it has not changed since.
    fn cached(&self, id: &Identity) -> Option<Cached> {
        match self.cache.lookup(&Self::key(id), &Self::version(id)) {
            cache::Lookup::Hit(value) => Some(Cached(value)),
            // A stale entry stays until the insert after the read replaces
            // it, or CLOCK evicts it.
            cache::Lookup::Stale | cache::Lookup::Miss => None,
        }
    }

    /// Caches `answer` for the file `id`, unless another CPU is writing the
    /// same set: the next miss reads the file again.
    fn insert(&self, id: &Identity, answer: Answer) {
        let Some(value) = answer.to_value() else {
            return;
        };
        match self
            .cache
            .insert(&Self::key(id), &Self::version(id), &value)
        {
            cache::Insert::New => stats::add(Stat::Entries, 1),
            cache::Insert::Evicted(_) => stats::add(Stat::Evictions, 1),
            cache::Insert::Replaced | cache::Insert::Busy | cache::Insert::Disabled => (),
        }
    }
}

impl provider::Provider for Mmap3Provider {
    fn mmap(registration: &Registration<Self>, vma: &Vma, info: &MapInfo) {
        let this = registration.provider();
        let Some(file) = vma.file() else {
            return Answer::Missing(Status::NoFile).emit(info);
        };
        let id = file.identity();
        if !readable(&id) {
            return Answer::Missing(Status::Skipped).emit(info);
        }
        if let Some(answer) = this.cached(&id) {
            stats::add(Stat::Hits, 1);
            return answer.emit(info);
        }
        stats::add(Stat::Misses, 1);

        // Not here: mmap_lock is held. Pin the file and read it on the way
        // back to user space.
        let Ok(owned) = info.to_owned() else {
            return Answer::Missing(Status::IoError).emit(info);
        };
        let lookup = Lookup {
            info: owned,
            file: file.pin(),
        };
        match registration.defer(lookup) {
            Ok(()) => stats::add(Stat::Deferred, 1),
            // A kernel thread or an exiting task never returns to user
            // space: no read for them. Out of memory: the read cannot be
            // done either.
            Err((lookup, e)) => {
                let status = if e == ENOMEM {
                    Status::IoError
                } else {
                    Status::Skipped
                };
                Answer::Missing(status).emit(&lookup.info);
            }
        }
    }
}

/// A deferred lookup: runs in the mapping task, no lock held.
struct Lookup {
    info: OwnedMapInfo,
    file: PinnedFile,
}

/// [`buildid::Reader`] over a pinned file.
struct FileReader<'a>(&'a PinnedFile);

impl buildid::Reader for FileReader<'_> {
    fn read_at(&mut self, offset: u64, buf: &mut [u8]) -> Result<usize, buildid::ReadError> {
        let mut done = 0;
        while let Some(rest) = buf.get_mut(done..).filter(|r| !r.is_empty()) {
            let pos = offset.checked_add(done as u64).ok_or(buildid::ReadError)?;
            match self.0.read_at(pos, rest) {
                Ok(0) => break,
                Ok(n) => done += n,
                Err(_) => return Err(buildid::ReadError),
            }
        }
        Ok(done)
    }
}

impl provider::Deferred<Mmap3Provider> for Lookup {
    fn run(self, provider: &Mmap3Provider) {
        let before = self.file.identity();
        let answer = match buildid::find_build_id(&mut FileReader(&self.file)) {
            Ok(id) => Answer::Found(id),
            Err(buildid::Error::NotElf) => Answer::Missing(Status::NotElf),
            Err(buildid::Error::NoBuildId) => Answer::Missing(Status::NoBuildId),
            Err(buildid::Error::Malformed) => Answer::Missing(Status::Malformed),
            Err(buildid::Error::Io) => Answer::Missing(Status::IoError),
        };
        // Cache what was read only if the file did not change meanwhile, and
        // cannot change later without its ctime changing; never cache a
        // read error.
        let after = self.file.identity();
        if before == after && after.settled && !matches!(answer, Answer::Missing(Status::IoError)) {
            provider.insert(&after, answer);
        }
        answer.emit(&self.info);
    }
}

struct Mmap3 {
    _registration: Pin<KBox<Registration<Mmap3Provider>>>,
    _debugfs: stats::Debugfs,
}

impl kernel::Module for Mmap3 {
    fn init(module: &'static ThisModule) -> Result<Self> {
        file::check_abi()?;
        let debugfs = stats::Debugfs::new()?;
        let cache = Mmap3Provider::new_cache(Registration::<Mmap3Provider>::cache_entries())?;
        let entries = cache.capacity();
        stats::add(Stat::Capacity, entries as i64);
        let registration = KBox::pin_init(
            Registration::new(module, Mmap3Provider { cache }),
            GFP_KERNEL,
        )?;
        pr_info!(
            "loaded, cache of {} entries of {} bytes\n",
            entries,
            core::mem::size_of::<cache::Set>() / cache::WAYS
        );
        Ok(Mmap3 {
            _registration: registration,
            _debugfs: debugfs,
        })
    }
}

impl Drop for Mmap3 {
    fn drop(&mut self) {
        pr_info!("unloaded\n");
    }
}
