// SPDX-License-Identifier: GPL-2.0

//! The lookup of both ways in, under `mmap_lock` and without sleeping:
//! the cache, then the page cache; else the file is deferred to the read
//! of `deferred.rs`. And the provider, which holds the cache.

use crate::answer::{BuildIdOut, Defer, Provider};
use crate::cache;
use crate::compat::{File, VmaRef};
use crate::file::{FileExt as _, Identity, UnlockedFile, VmaFile as _};
use crate::note::{parse_stable, Answer, Source};
use crate::params;
use crate::policy::{cacheable, readable};
use crate::stats::{self, Stat};
use crate::status::Missing;
use kernel::prelude::*;

/// The cache of answers by file: lookups take no lock (`src/cache.rs`
/// says how), in sets allocated at load.
type Cache = cache::Cache<KVVec<cache::Set>>;

/// The provider: the cache of answers.
pub(crate) struct Mmap3Provider {
    pub(crate) cache: Cache,
}

impl Mmap3Provider {
    /// The provider with an empty cache of at least `cache_entries` entries
    /// (the module parameter), in whole sets.
    pub(crate) fn new() -> Result<Self> {
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
    pub(crate) fn caches(&self, id: &Identity) -> bool {
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
    pub(crate) fn cached(&self, file: &File, id: &Identity) -> Option<Answer> {
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
    pub(crate) fn remember(&self, file: &File, id: &Identity, answer: Answer) {
        if !self.caches(id) {
            return;
        }
        if let Some(sb) = file.register_sb() {
            self.insert(sb, id, answer);
        }
    }
}

impl Provider for Mmap3Provider {
    fn lookup(&self, vma: &VmaRef, out: &mut BuildIdOut) -> Result<(), Defer> {
        let Some(file) = vma.file() else {
            out.missing(Missing::NoFile);
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
            out.missing(Missing::NoFile);
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
            out.missing(Missing::Skipped);
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
}
