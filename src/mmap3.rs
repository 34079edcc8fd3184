// SPDX-License-Identifier: GPL-2.0

//! PERF_RECORD_MMAP3 provider: each mapping with its ELF build-id, found
//! without file I/O under `mmap_lock`.
//!
//! The hook runs under `mmap_lock`. It answers from a cache of build-ids
//! when it can; otherwise it pins the file and defers the lookup to
//! task_work, where the mapping task, holding no lock, reads the file with
//! `kernel_read()` through [`buildid`] before it returns to user space.
//! Either way exactly one record is written per mapping.

use kernel::{new_spinlock, prelude::*, sync::SpinLock, ThisModule};

#[path = "buildid.rs"]
pub mod buildid;
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

/// A file version: what the cache is keyed by and validated against.
#[derive(Clone, Copy, PartialEq, Eq)]
struct Version {
    dev: u32,
    ino: u64,
    generation: u32,
    ctime_sec: i64,
    ctime_nsec: u32,
    size: i64,
}

impl Version {
    fn of(id: &Identity) -> Self {
        Version {
            dev: id.dev,
            ino: id.ino,
            generation: id.generation,
            ctime_sec: id.ctime_sec,
            ctime_nsec: id.ctime_nsec,
            size: id.size,
        }
    }

    fn same_file(&self, other: &Version) -> bool {
        (self.dev, self.ino, self.generation) == (other.dev, other.ino, other.generation)
    }

    fn hash(&self) -> u64 {
        let mut h = self.ino ^ (u64::from(self.dev) << 32) ^ u64::from(self.generation);
        // A 64-bit finaliser (splitmix64): inode numbers are dense.
        h = (h ^ (h >> 30)).wrapping_mul(0xbf58476d1ce4e5b9);
        h = (h ^ (h >> 27)).wrapping_mul(0x94d049bb133111eb);
        h ^ (h >> 31)
    }
}

/// Entries per set: a set is searched linearly and evicts its least recently used.
const WAYS: usize = 4;

#[derive(Clone, Copy)]
struct Slot {
    version: Version,
    answer: Answer,
    /// Last use; 0 when the slot is empty.
    used: u64,
}

/// A bounded, set-associative cache of answers by file version.
///
/// All memory is allocated at load time: nothing is allocated under
/// `mmap_lock` for a hit.
struct Cache {
    slots: KVec<Slot>,
    clock: u64,
}

impl Cache {
    fn new(entries: usize) -> Result<Self> {
        let sets = entries.div_ceil(WAYS);
        let len = sets.checked_mul(WAYS).ok_or(EINVAL)?;
        let empty = Slot {
            version: Version {
                dev: 0,
                ino: 0,
                generation: 0,
                ctime_sec: 0,
                ctime_nsec: 0,
                size: 0,
            },
            answer: Answer::Missing(Status::Skipped),
            used: 0,
        };
        let mut slots = KVec::with_capacity(len, GFP_KERNEL)?;
        for _ in 0..len {
            slots.push(empty, GFP_KERNEL)?;
        }
        stats::add(Stat::Capacity, len as i64);
        Ok(Cache { slots, clock: 0 })
    }

    /// The set `version` belongs in.
    fn set(&mut self, version: &Version) -> &mut [Slot] {
        let sets = self.slots.len() / WAYS;
        if sets == 0 {
            return &mut [];
        }
        let first = (version.hash() % sets as u64) as usize * WAYS;
        self.slots.get_mut(first..first + WAYS).unwrap_or(&mut [])
    }

    /// The answer for `version`; drops an entry of an older version.
    fn lookup(&mut self, version: &Version) -> Option<Answer> {
        self.clock += 1;
        let clock = self.clock;
        let slot = self
            .set(version)
            .iter_mut()
            .find(|s| s.used != 0 && s.version.same_file(version))?;
        if slot.version != *version {
            slot.used = 0;
            stats::add(Stat::Entries, -1);
            return None;
        }
        slot.used = clock;
        Some(slot.answer)
    }

    fn insert(&mut self, version: &Version, answer: Answer) {
        self.clock += 1;
        let clock = self.clock;
        let set = self.set(version);
        // The same file, else an empty slot, else the least recently used.
        let Some(slot) = set
            .iter()
            .position(|s| s.used != 0 && s.version.same_file(version))
            .or_else(|| set.iter().position(|s| s.used == 0))
            .or_else(|| (0..set.len()).min_by_key(|&i| set.get(i).map_or(0, |s| s.used)))
            .and_then(|i| set.get_mut(i))
        else {
            return;
        };
        if slot.used == 0 {
            stats::add(Stat::Entries, 1);
        } else if !slot.version.same_file(version) {
            stats::add(Stat::Evictions, 1);
        }
        *slot = Slot {
            version: *version,
            answer,
            used: clock,
        };
    }
}

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
    cache: Pin<KBox<SpinLock<Cache>>>,
}

impl Mmap3Provider {
    fn cached(&self, version: &Version) -> Option<Answer> {
        self.cache.lock().lookup(version)
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
        let version = Version::of(&id);
        if let Some(answer) = this.cached(&version) {
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
            provider.cache.lock().insert(&Version::of(&after), answer);
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
        let entries = Registration::<Mmap3Provider>::cache_entries();
        let cache = KBox::pin_init(
            new_spinlock!(Cache::new(entries)?, "mmap3_cache"),
            GFP_KERNEL,
        )?;
        let registration = KBox::pin_init(
            Registration::new(module, Mmap3Provider { cache }),
            GFP_KERNEL,
        )?;
        pr_info!(
            "loaded, cache of {} entries of {} bytes\n",
            entries,
            core::mem::size_of::<Slot>()
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
