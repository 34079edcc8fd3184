// SPDX-License-Identifier: GPL-2.0

//! A fixed-size cache of build-id answers by file, for many CPUs: a lookup
//! takes no lock and writes no shared memory on a hit.
//!
//! This file is compiled twice, like `buildid.rs`, so it holds no crate-level
//! attribute and uses only `core`: in the kernel module as `#[path =
//! "cache.rs"] pub mod cache;`, and on the host by the `mmap3-buildid` crate
//! in `buildid/`, for `cargo test`. It has no `unsafe` and allocates nothing:
//! the caller owns the storage, a slice of [`Set`]s (the module allocates it
//! at load, the host tests use a `Vec`), and hands it to [`Cache::new`].
//!
//! # Design
//!
//! The module looks the cache up for every mapping it sees, on every CPU,
//! under `mmap_lock`; it inserts only after a miss, from task_work, after
//! reading the file, which costs far more than the insert. So lookups must
//! scale with CPUs, while inserts may be slower and may even give up:
//!
//! - **Set-associative, [`WAYS`] ways.** A key hashes to one [`Set`]; a
//!   lookup reads the slots of that set only. A set is aligned to 64 bytes, so
//!   two sets never share a cache line.
//! - **Readers: a sequence counter per slot (seqlock).** A slot's key, version
//!   and value are `Atomic<u64>` words; a writer makes the slot's counter odd,
//!   writes the words, then makes it even again. A reader reads the counter,
//!   the words, and the counter again, and trusts the words only if the
//!   counter was even and did not change. A reader never writes the slot, so
//!   the slot's cache lines stay shared by every CPU that reads them; a read
//!   that overlaps a write is a miss (the module then reads the file), never a
//!   wrong answer, and it is never retried, so a reader never waits.
//! - **A hit is a few dozen instructions.** A reader compares words as they
//!   are stored (a key's word of inode number first: most slots of a set
//!   hold another inode), folds the other comparisons and the counter's into
//!   one test, and copies the value's words out as they are; an empty slot
//!   (all zero) matches no key, since every stored key has a bit set that
//!   no empty slot has (`OCCUPIED`). `buildid/callgrind-hit.sh` counts
//!   the instructions of a hit.
//! - **Writers: a try-lock per set.** Insert and remove take their set's lock
//!   with one compare-and-exchange, and give up ([`Insert::Busy`],
//!   [`Remove::Busy`]) when another CPU holds it: the entry is then simply not
//!   cached this time. No one ever spins or sleeps on the lock, so it is safe
//!   from any context. One writer per set at a time also keeps each key in at
//!   most one slot.
//! - **CLOCK, not LRU.** LRU needs a time stamp written on every hit, which
//!   would bounce the set's cache line between CPUs on every mapping. CLOCK
//!   (second chance) needs one reference bit per slot: a hit sets it only when
//!   it is clear, so a line is written at most once per eviction round, not
//!   once per hit. The victim is the first slot, from the set's hand on, whose
//!   bit is clear; the bits passed on the way are cleared. An entry starts
//!   with its bit clear: it keeps its place only if it is used again.
//! - **Stale entries are left in place.** A lookup that finds the key with
//!   another version answers [`Lookup::Stale`] and changes nothing (a reader
//!   never writes); the caller reads the file and inserts the new version,
//!   which replaces the stale entry in its slot. An entry that is never hit
//!   again is evicted by CLOCK like any other.
//!
//! RCU was the other candidate for lock-free readers: it would need an
//! allocation per insert, deferred frees and kernel types, whereas a
//! seqlock over a fixed array needs none of them and costs a reader two loads
//! of the counter more than plain loads.
//!
//! # Memory ordering
//!
//! The atomics and barriers are the kernel's (`kernel::sync::atomic` and
//! `kernel::sync::barrier`, or `src/sync.rs`'s stand-ins, at least as
//! strong, where the kernel crate has none and on the host). The data
//! words are read and written with `Relaxed` accesses (`READ_ONCE()`,
//! `WRITE_ONCE()`), ordered by barriers, as the kernel's `seqcount_t`
//! orders them (`raw_write_seqcount_begin()` and `_end()`,
//! `read_seqcount_begin()` and `_retry()`), which in C11's terms is the
//! pattern of "Can Seqlocks Get Along With Programming Language Memory
//! Models?" (H.-J. Boehm, MSPC 2012):
//!
//! - writer (holding the set's lock): `seq.store(s + 1, Relaxed)`;
//!   `smp_wmb()`; data stores (`Relaxed`); `seq.store(s + 2, Release)`;
//! - reader: `s = seq.load(Acquire)`, a miss if odd; data loads (`Relaxed`);
//!   `smp_rmb()`; a miss unless `seq.load(Relaxed) == s`. (The reader
//!   tests `s` and the data together after the second load: nothing it read
//!   is trusted before. A data word that differs from what is looked for
//!   may end the read early, a miss whether torn or not.)
//!
//! The reader's first load reads from (or after) the `Release` store that
//! ended the last write, so it sees at least that write's data. If it sees
//! any store of a later write, that store comes after the writer's
//! `smp_wmb()`, which orders the odd counter before it; the reader's
//! `smp_rmb()` orders its data loads before its second load of the
//! counter, which then sees the odd counter or a later one, and differs
//! from `s`.
//!
//! The set's lock is taken with an `Acquire` compare-and-exchange and released
//! with a `Release` store, so a writer sees every earlier writer's slots and
//! may read them with `Relaxed` loads. The hand is only touched under the
//! lock. The reference bits are hints: `Relaxed` everywhere, a lost or late
//! bit only changes which entry is evicted.

#![forbid(unsafe_code)]
#![deny(
    clippy::arithmetic_side_effects,
    clippy::as_conversions,
    clippy::cast_possible_truncation,
    clippy::expect_used,
    clippy::indexing_slicing,
    clippy::panic,
    clippy::todo,
    clippy::unimplemented,
    clippy::unreachable,
    clippy::unwrap_used
)]

use crate::sync::atomic::{Acquire, Atomic, Relaxed, Release};
use crate::sync::barrier::{smp_mb, Read as ReadOrder, Write as WriteOrder};
use core::ops::Deref;

/// Slots per set.
pub const WAYS: usize = 4;

/// The default number of `u64` words in a [`Version`].
pub const VERSION_WORDS: usize = 3;

/// The `u64` words a [`Key`] is stored in.
const KEY_WORDS: usize = 3;

/// Set in the last word of every stored key (above the generation's 32
/// bits), so that no key matches an empty slot, whose words are all 0.
const OCCUPIED: u64 = 1 << 32;

/// The most build-id bytes a [`Value`] holds (a SHA-1 digest, as in an MMAP3
/// record).
pub const ID_SIZE_MAX: usize = 20;

/// The `u64` words a [`Value`] is stored in: status, length and
/// [`ID_SIZE_MAX`] bytes.
const VALUE_WORDS: usize = 3;

/// What proves that a file has not changed since its entry was inserted
/// (its change counter and size, say): an entry answers only for the version it
/// was inserted with. `V` words, compared as a whole.
pub type Version<const V: usize = VERSION_WORDS> = [u64; V];

/// The identity of a file, what entries are found by.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Key {
    /// Which file system instance (the module numbers superblocks and
    /// never reuses a number).
    pub sb: u64,
    /// Inode number.
    pub ino: u64,
    /// Inode generation.
    pub generation: u32,
}

impl Key {
    /// The key as stored in a slot: ino, sb, and the generation with
    /// [`OCCUPIED`].
    #[inline]
    fn words(&self) -> [u64; KEY_WORDS] {
        [self.ino, self.sb, u64::from(self.generation) | OCCUPIED]
    }

    /// The key stored as `words`; `None` for an empty slot.
    fn from_words([ino, sb, tagged]: [u64; KEY_WORDS]) -> Option<Self> {
        (tagged & OCCUPIED != 0).then(|| Key {
            sb,
            ino,
            generation: u32::try_from(tagged & u64::from(u32::MAX)).unwrap_or(0),
        })
    }

    /// The set-selecting hash, whose high bits pick the set (see
    /// [`Cache::set_of`]). Inode numbers are dense, the superblock serials
    /// small, the generations random or small, so each is spread by
    /// Fibonacci hashing, a multiplication by 2^64 times an irrational of
    /// small partial quotients (1/phi, sqrt 2 - 1, sqrt 3 - 1), which sends
    /// consecutive numbers to high bits as far apart as can be; the three
    /// are xor-ed, so that each spreads the keys that differ in it alone.
    #[inline]
    fn hash(&self) -> u64 {
        self.ino.wrapping_mul(0x9e37_79b9_7f4a_7c15)
            ^ self.sb.wrapping_mul(0x6a09_e667_f3bc_c909)
            ^ u64::from(self.generation).wrapping_mul(0xbb67_ae85_84ca_a73b)
    }
}

/// An answer: a status byte (never 0, as in an empty slot) and up to
/// [`ID_SIZE_MAX`] bytes of build-id.
///
/// Held as the bytes of its words in a slot, so that a hit copies three
/// words out and [`Value::build_id`] is a slice of them.
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct Value {
    /// Status, length, the build-id padded with zeros to [`ID_SIZE_MAX`],
    /// two zeros: [`VALUE_WORDS`] little-endian words.
    bytes: [u8; VALUE_BYTES],
}

/// The bytes of a [`Value`]'s words.
const VALUE_BYTES: usize = VALUE_WORDS * 8;

impl Value {
    /// A value of status `status` with the build-id `id`; `None` when
    /// `status` is 0 or `id` longer than [`ID_SIZE_MAX`].
    pub fn new(status: u8, id: &[u8]) -> Option<Self> {
        let len = u8::try_from(id.len())
            .ok()
            .filter(|&l| usize::from(l) <= ID_SIZE_MAX && status != 0)?;
        let mut bytes = [0; VALUE_BYTES];
        for (d, s) in bytes.iter_mut().zip([status, len].iter().chain(id)) {
            *d = *s;
        }
        Some(Value { bytes })
    }

    /// The status.
    #[inline]
    pub fn status(&self) -> u8 {
        let [status, ..] = self.bytes;
        status
    }

    /// The build-id, 0 to [`ID_SIZE_MAX`] bytes.
    #[inline]
    pub fn build_id(&self) -> &[u8] {
        let [_, len, ..] = self.bytes;
        self.bytes
            .get(2..)
            .and_then(|id| id.get(..usize::from(len)))
            .unwrap_or(&[])
    }

    /// The build-id padded with zeros to [`ID_SIZE_MAX`] bytes, and its
    /// length: a copy of a fixed size.
    #[inline]
    pub fn padded_build_id(&self) -> (&[u8; ID_SIZE_MAX], u8) {
        let [_, len, id @ .., _, _] = &self.bytes;
        (id, *len)
    }

    /// The value as stored.
    fn encode(&self) -> [u64; VALUE_WORDS] {
        let mut words = [0; VALUE_WORDS];
        let mut rest = &self.bytes[..];
        for w in &mut words {
            if let Some((chunk, tail)) = rest.split_first_chunk() {
                *w = u64::from_le_bytes(*chunk);
                rest = tail;
            }
        }
        words
    }

    /// The value stored as `words`, which [`Value::encode`] made: the
    /// seqlock says so, and a slot holding a key holds a value.
    #[inline]
    fn decode(words: [u64; VALUE_WORDS]) -> Self {
        let mut bytes = [0; VALUE_BYTES];
        let mut rest = &mut bytes[..];
        for w in words {
            if let Some((chunk, tail)) = core::mem::take(&mut rest).split_first_chunk_mut() {
                *chunk = w.to_le_bytes();
                rest = tail;
            }
        }
        Value { bytes }
    }
}

impl core::fmt::Debug for Value {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("Value")
            .field("status", &self.status())
            .field("build_id", &self.build_id())
            .finish()
    }
}

/// The words of `words`, each loaded `Relaxed`.
#[inline]
fn load<const N: usize>(words: &[Atomic<u64>; N]) -> [u64; N] {
    let mut out = [0; N];
    for (o, w) in out.iter_mut().zip(words) {
        *o = w.load(Relaxed);
    }
    out
}

/// The bits in which the words of `stored`, each loaded `Relaxed`, differ
/// from `words`, all or-ed together: 0 if they are equal.
#[inline]
fn diff<const N: usize>(stored: &[Atomic<u64>; N], words: &[u64; N]) -> u64 {
    stored
        .iter()
        .zip(words)
        .fold(0, |d, (s, w)| d | (s.load(Relaxed) ^ w))
}

/// One entry: key, version and value, guarded by a sequence counter.
struct Slot<const V: usize> {
    /// Odd while a writer changes the slot; bumped by 2 per write.
    seq: Atomic<u64>,
    /// [`Key::words`].
    key: [Atomic<u64>; KEY_WORDS],
    version: [Atomic<u64>; V],
    /// [`Value::encode`]; all zero when the slot is empty.
    value: [Atomic<u64>; VALUE_WORDS],
}

/// What a reader saw in a slot.
enum Read {
    /// The key with the version looked for.
    Hit(Value),
    /// The key with another version.
    Stale,
    /// Another key, an empty slot, or a slot being written.
    Other,
}

impl<const V: usize> Slot<V> {
    fn new() -> Self {
        Slot {
            seq: Atomic::new(0),
            key: core::array::from_fn(|_| Atomic::new(0)),
            version: core::array::from_fn(|_| Atomic::new(0)),
            value: core::array::from_fn(|_| Atomic::new(0)),
        }
    }

    /// Reads the slot without a lock (see the module's memory ordering).
    #[inline]
    fn read(&self, key: &Key, version: &Version<V>) -> Read {
        let seq = self.seq.load(Acquire);
        let [ino, sb, tagged] = &key.words();
        let [stored_ino, stored_sb, stored_tagged] = &self.key;
        // Most slots hold another inode: one word says so, without waiting
        // for the sequence counter's verdict (another number, even torn,
        // means not here).
        if stored_ino.load(Relaxed) != *ino {
            return Read::Other;
        }
        let other = (stored_sb.load(Relaxed) ^ sb) | (stored_tagged.load(Relaxed) ^ tagged);
        let stale = diff(&self.version, version);
        let value = load(&self.value);
        smp_mb(ReadOrder);
        // An odd count was a write under way; a changed one, a write since.
        let torn = (seq & 1) | (self.seq.load(Relaxed) ^ seq);
        // One test on the way to a hit.
        if torn | other | stale == 0 {
            Read::Hit(Value::decode(value))
        } else if torn | other != 0 {
            Read::Other
        } else {
            Read::Stale
        }
    }

    /// The key of an occupied slot, `None` if empty. Only under the set's
    /// lock: no write can be under way.
    fn key_locked(&self) -> Option<Key> {
        Key::from_words(load(&self.key))
    }

    /// Whether the slot holds exactly this. Only under the set's lock.
    fn holds_locked(&self, key: &Key, version: &Version<V>, value: [u64; VALUE_WORDS]) -> bool {
        self.key_locked().as_ref() == Some(key)
            && load(&self.version) == *version
            && load(&self.value) == value
    }

    /// Writes the slot. Only under the set's lock: one writer at a time.
    fn write(&self, key: [u64; KEY_WORDS], version: &Version<V>, value: [u64; VALUE_WORDS]) {
        let seq = self.seq.load(Relaxed);
        self.seq.store(seq.wrapping_add(1), Relaxed);
        smp_mb(WriteOrder);
        for (w, v) in self.key.iter().zip(key) {
            w.store(v, Relaxed);
        }
        for (w, v) in self.version.iter().zip(version) {
            w.store(*v, Relaxed);
        }
        for (w, v) in self.value.iter().zip(value) {
            w.store(v, Relaxed);
        }
        self.seq.store(seq.wrapping_add(2), Release);
    }
}

/// [`WAYS`] slots sharing a lock and a CLOCK hand; the unit of storage.
///
/// `V` is the number of words of a [`Version`].
#[repr(align(64))]
pub struct Set<const V: usize = VERSION_WORDS> {
    /// Held by the one writer of the set; readers never look at it.
    lock: Atomic<bool>,
    /// The next way CLOCK considers for eviction; only under the lock.
    hand: Atomic<i8>,
    /// The reference bit of each way.
    referenced: [Atomic<bool>; WAYS],
    slots: [Slot<V>; WAYS],
}

impl<const V: usize> Default for Set<V> {
    fn default() -> Self {
        Self::new()
    }
}

/// The lock of a set, held until dropped.
struct Locked<'a>(&'a Atomic<bool>);

impl Drop for Locked<'_> {
    fn drop(&mut self) {
        self.0.store(false, Release);
    }
}

impl<const V: usize> Set<V> {
    /// An empty set.
    pub fn new() -> Self {
        Set {
            lock: Atomic::new(false),
            hand: Atomic::new(0),
            referenced: core::array::from_fn(|_| Atomic::new(false)),
            slots: core::array::from_fn(|_| Slot::new()),
        }
    }

    /// Takes the lock if it is free; never waits.
    fn try_lock(&self) -> Option<Locked<'_>> {
        // Test first: a busy lock's line is not written.
        if self.lock.load(Relaxed) {
            return None;
        }
        self.lock
            .cmpxchg(false, true, Acquire)
            .ok()
            .map(|_| Locked(&self.lock))
    }

    /// Marks a way used: a write only when its bit is clear.
    #[inline]
    fn reference(bit: &Atomic<bool>) {
        if !bit.load(Relaxed) {
            bit.store(true, Relaxed);
        }
    }

    /// The way to evict, by CLOCK; moves the hand past it. Under the lock.
    fn victim(&self, _lock: &Locked<'_>) -> usize {
        let mut hand = usize::try_from(self.hand.load(Relaxed))
            .unwrap_or(0)
            .min(WAYS.wrapping_sub(1));
        // Readers may set bits again meanwhile: after two rounds, take the
        // slot under the hand whatever its bit.
        for _ in 0..2 * WAYS {
            let Some(bit) = self.referenced.get(hand) else {
                break;
            };
            if !bit.load(Relaxed) {
                break;
            }
            bit.store(false, Relaxed);
            hand = hand.wrapping_add(1) % WAYS;
        }
        let next = hand.wrapping_add(1) % WAYS;
        self.hand.store(i8::try_from(next).unwrap_or(0), Relaxed);
        hand
    }
}

/// What [`Cache::lookup`] found.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Lookup {
    /// The value inserted for this key and version.
    Hit(Value),
    /// The key is there with another version; the entry stays until an
    /// insert replaces it or CLOCK evicts it.
    Stale,
    /// The key is not there, or its slot was being written.
    Miss,
}

/// What [`Cache::insert`] did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Insert {
    /// Into an empty slot.
    New,
    /// Over the entry of the same key (another version, or the same).
    Replaced,
    /// Over the entry of this other key, evicted.
    Evicted(Key),
    /// Nothing: another CPU was writing the set.
    Busy,
    /// Nothing: the cache has no slot (capacity 0).
    Disabled,
}

/// What [`Cache::remove`] did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Remove {
    /// The key's entry is gone.
    Removed,
    /// The key was not there.
    Absent,
    /// Nothing: another CPU was writing the set.
    Busy,
}

/// The cache over storage `S`, a slice of [`Set`]s; `V` words of version.
pub struct Cache<S, const V: usize = VERSION_WORDS> {
    sets: S,
}

impl<S: Deref<Target = [Set<V>]>, const V: usize> Cache<S, V> {
    /// The number of sets that hold `entries` entries (rounded up to whole
    /// sets).
    pub const fn sets_for(entries: usize) -> usize {
        entries.div_ceil(WAYS)
    }

    /// A cache in `sets`; with no set, it is disabled: lookups miss and
    /// inserts do nothing.
    pub fn new(sets: S) -> Self {
        Cache { sets }
    }

    /// The number of entries the cache can hold.
    pub fn capacity(&self) -> usize {
        self.sets.len().saturating_mul(WAYS)
    }

    /// The index of the set `key` belongs in; `None` when there is no set.
    #[inline]
    pub fn set_of(&self, key: &Key) -> Option<usize> {
        let i = self.index(key);
        (i < self.sets.len()).then_some(i)
    }

    /// [`Cache::set_of`], but 0 when there is no set.
    #[inline]
    fn index(&self, key: &Key) -> usize {
        // Lemire's reduction: the high half of hash * sets, below sets.
        let sets = u128::from(u64::try_from(self.sets.len()).unwrap_or(0));
        usize::try_from(u128::from(key.hash()).wrapping_mul(sets) >> 64).unwrap_or(0)
    }

    #[inline]
    fn set(&self, key: &Key) -> Option<&Set<V>> {
        self.sets.get(self.index(key))
    }

    /// The entry of `key`, if it has `version`. Takes no lock; writes shared
    /// memory only to set the entry's reference bit when it is clear.
    #[inline]
    pub fn lookup(&self, key: &Key, version: &Version<V>) -> Lookup {
        let Some(set) = self.set(key) else {
            return Lookup::Miss;
        };
        for (slot, bit) in set.slots.iter().zip(&set.referenced) {
            match slot.read(key, version) {
                Read::Other => continue,
                Read::Stale => return Lookup::Stale,
                Read::Hit(value) => {
                    Set::<V>::reference(bit);
                    return Lookup::Hit(value);
                }
            }
        }
        Lookup::Miss
    }

    /// Stores `value` for `key` at `version`, over any other version of
    /// `key`, else in an empty slot, else over the entry CLOCK picks. Gives up
    /// rather than wait when another CPU is writing the set.
    pub fn insert(&self, key: &Key, version: &Version<V>, value: &Value) -> Insert {
        let Some(set) = self.set(key) else {
            return Insert::Disabled;
        };
        let Some(lock) = set.try_lock() else {
            return Insert::Busy;
        };
        let value = value.encode();
        let mut keys = [None; WAYS];
        for (k, slot) in keys.iter_mut().zip(&set.slots) {
            *k = slot.key_locked();
        }
        let (way, outcome) = if let Some(way) = keys.iter().position(|k| k.as_ref() == Some(key)) {
            (way, Insert::Replaced)
        } else if let Some(way) = keys.iter().position(Option::is_none) {
            (way, Insert::New)
        } else {
            let way = set.victim(&lock);
            let evicted = keys.get(way).copied().flatten().unwrap_or_default();
            (way, Insert::Evicted(evicted))
        };
        let Some(slot) = set.slots.get(way) else {
            return Insert::Busy;
        };
        // Rewriting the same words would only make concurrent readers miss.
        if !slot.holds_locked(key, version, value) {
            if outcome != Insert::Replaced {
                if let Some(bit) = set.referenced.get(way) {
                    bit.store(false, Relaxed);
                }
            }
            slot.write(key.words(), version, value);
        }
        outcome
    }

    /// Removes the entry of `key`, whatever its version. Gives up rather than
    /// wait when another CPU is writing the set.
    pub fn remove(&self, key: &Key) -> Remove {
        let Some(set) = self.set(key) else {
            return Remove::Absent;
        };
        let Some(_lock) = set.try_lock() else {
            return Remove::Busy;
        };
        match set
            .slots
            .iter()
            .find(|slot| slot.key_locked().as_ref() == Some(key))
        {
            Some(slot) => {
                slot.write([0; KEY_WORDS], &[0; V], [0; VALUE_WORDS]);
                Remove::Removed
            }
            None => Remove::Absent,
        }
    }
}
