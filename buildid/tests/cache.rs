// SPDX-License-Identifier: GPL-2.0

//! Tests of `src/cache.rs`, the module's build-id cache: its answers against
//! a reference model over random sequences, eviction, versions, capacity 0,
//! and many threads at once.

use mmap3_buildid::cache::{
    Cache, Insert, Key, Lookup, Remove, Set, Value, Version, ID_SIZE_MAX, WAYS,
};
use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant;

/// xorshift64*: deterministic, so that a failure names its seed.
struct Rng(u64);

impl Rng {
    fn new(seed: u64) -> Self {
        Rng(seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1)
    }

    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }

    fn chance(&mut self, percent: usize) -> bool {
        self.below(100) < percent
    }
}

fn cache(sets: usize) -> Cache<Vec<Set>> {
    Cache::new((0..sets).map(|_| Set::new()).collect())
}

/// The `i`th key of a test: spread over superblocks, inodes and generations;
/// key 0 is all zero, like an empty slot.
fn key(i: usize) -> Key {
    Key {
        sb: (i % 3) as u64,
        ino: (i as u64).wrapping_mul(7),
        generation: (i / 3) as u32,
    }
}

/// A value that says which key and version it was made for, in every byte:
/// a torn read that mixes two entries does not give it back.
fn value_of(key: &Key, version: &Version) -> Value {
    let mut rng = Rng::new(
        key.ino
            ^ (key.sb << 40)
            ^ (u64::from(key.generation) << 20)
            ^ version[0].rotate_left(7)
            ^ version[1].rotate_left(29)
            ^ version[2].rotate_left(51),
    );
    let status = 1 + rng.below(255) as u8;
    let len = rng.below(ID_SIZE_MAX + 1);
    let id: Vec<u8> = (0..len).map(|_| rng.next() as u8).collect();
    Value::new(status, &id).unwrap()
}

fn random_value(rng: &mut Rng) -> Value {
    let id: Vec<u8> = (0..rng.below(ID_SIZE_MAX + 1))
        .map(|_| rng.next() as u8)
        .collect();
    Value::new(1 + rng.below(255) as u8, &id).unwrap()
}

/// `count` distinct keys that share one set of `c`.
fn same_set(c: &Cache<Vec<Set>>, count: usize) -> Vec<Key> {
    let target = c.set_of(&key(1)).unwrap();
    let keys: Vec<Key> = (1..100_000)
        .map(key)
        .filter(|k| c.set_of(k) == Some(target))
        .take(count)
        .collect();
    assert_eq!(keys.len(), count);
    keys
}

/// A change counter, a size, a change time.
const V1: Version = [123_456_789, 4096, 1_700_000_000_000_000_000];

#[test]
fn value_round_trip() {
    let c = cache(1);
    let k = key(5);
    let mut rng = Rng::new(1);
    for status in 1..=255u8 {
        for len in 0..=ID_SIZE_MAX {
            let id: Vec<u8> = (0..len).map(|_| rng.next() as u8).collect();
            let v = Value::new(status, &id).unwrap();
            assert_eq!((v.status(), v.build_id()), (status, &id[..]));
            let mut padded = [0; ID_SIZE_MAX];
            padded[..len].copy_from_slice(&id);
            assert_eq!(v.padded_build_id(), (&padded, len as u8));
            c.insert(&k, &V1, &v);
            assert_eq!(
                c.lookup(&k, &V1),
                Lookup::Hit(v),
                "status {status} len {len}"
            );
        }
    }
    assert_eq!(
        Value::new(0, &[1, 2, 3]),
        None,
        "status 0 marks empty slots"
    );
    assert_eq!(Value::new(1, &[0; ID_SIZE_MAX + 1]), None);
    assert_eq!(Value::new(1, &[0; 300]), None);
}

#[test]
fn capacity_zero() {
    let c = cache(0);
    assert_eq!(c.capacity(), 0);
    for i in 0..100 {
        let k = key(i);
        assert_eq!(c.set_of(&k), None);
        assert_eq!(c.insert(&k, &V1, &value_of(&k, &V1)), Insert::Disabled);
        assert_eq!(c.lookup(&k, &V1), Lookup::Miss);
        assert_eq!(c.remove(&k), Remove::Absent);
    }
    let s: Cache<&[Set]> = Cache::new(&[]);
    assert_eq!(s.lookup(&key(0), &[0; 3]), Lookup::Miss);
}

#[test]
fn capacity_whole_sets() {
    type C = Cache<Vec<Set>>;
    let sets: Vec<usize> = [0, 1, 3, 4, 5, 8, 9, 4096].map(C::sets_for).to_vec();
    assert_eq!(sets, [0, 1, 1, 1, 2, 2, 3, 1024]);
    for n in [1, 2, 7, 1024] {
        let c = cache(n);
        assert_eq!(c.capacity(), n * WAYS);
        // Every set is used, and only sets that exist.
        let mut seen = vec![false; n];
        for i in 0..100 * n {
            seen[c.set_of(&key(i)).unwrap()] = true;
        }
        assert!(seen.iter().all(|&s| s), "{n} sets: some set never chosen");
    }
}

/// The module's default cache (4096 entries) filled with 4096 files of
/// each kind the module sees: the hash spreads them over the sets about as
/// evenly as a random function would, or better, whatever the pattern
/// (a random function overflows about 19.6% of them beyond the ways).
#[test]
fn sets_evenly_used() {
    type C = Cache<Vec<Set>>;
    let n = 4096;
    let c = cache(C::sets_for(n));
    let mut rng = Rng::new(7);
    let families: [(&str, Vec<Key>); 6] = [
        (
            "one file system, dense inodes",
            (0..n)
                .map(|i| Key {
                    sb: 1,
                    ino: 12 + i as u64,
                    generation: 0,
                })
                .collect(),
        ),
        (
            "four file systems, random generations (ext4)",
            (0..n)
                .map(|i| Key {
                    sb: 1 + (i % 4) as u64,
                    ino: 12 + (i / 4) as u64,
                    generation: rng.next() as u32,
                })
                .collect(),
        ),
        (
            "inodes 64 apart",
            (0..n)
                .map(|i| Key {
                    sb: 3,
                    ino: 128 + 64 * i as u64,
                    generation: 0,
                })
                .collect(),
        ),
        (
            "64-bit inode numbers (XFS allocation groups)",
            (0..n)
                .map(|i| Key {
                    sb: 2,
                    ino: ((i % 16) as u64) << 40 | (i / 16) as u64,
                    generation: (i % 3) as u32,
                })
                .collect(),
        ),
        (
            "one inode number on many file systems",
            (0..n)
                .map(|i| Key {
                    sb: 1 + i as u64,
                    ino: 12,
                    generation: 0,
                })
                .collect(),
        ),
        (
            "one inode number, many generations",
            (0..n)
                .map(|i| Key {
                    sb: 1,
                    ino: 4242,
                    generation: i as u32,
                })
                .collect(),
        ),
    ];
    for (what, keys) in &families {
        let mut load = vec![0usize; c.capacity() / WAYS];
        for k in keys {
            load[c.set_of(k).unwrap()] += 1;
        }
        let over: usize = load.iter().map(|&l| l.saturating_sub(WAYS)).sum();
        let max = load.iter().max().unwrap();
        println!("{what}: {over} beyond the ways, at most {max} in a set");
        assert!(
            over * 100 <= keys.len() * 23 && *max <= 16,
            "{what}: {over} of {} beyond the ways, {max} in one set",
            keys.len()
        );
    }
}

#[test]
fn empty_cache_misses_even_the_zero_key() {
    let c = cache(4);
    let zero = Key::default();
    assert_eq!(c.lookup(&zero, &[0; 3]), Lookup::Miss);
    assert_eq!(c.remove(&zero), Remove::Absent);
    let v = value_of(&zero, &[0; 3]);
    assert_eq!(c.insert(&zero, &[0; 3], &v), Insert::New);
    assert_eq!(c.lookup(&zero, &[0; 3]), Lookup::Hit(v));
    assert_eq!(c.lookup(&zero, &V1), Lookup::Stale);
    assert_eq!(c.remove(&zero), Remove::Removed);
    assert_eq!(c.lookup(&zero, &[0; 3]), Lookup::Miss);
}

#[test]
fn version_invalidation() {
    let c = cache(16);
    let k = key(42);
    let x = value_of(&k, &V1);
    assert_eq!(c.insert(&k, &V1, &x), Insert::New);
    assert_eq!(c.lookup(&k, &V1), Lookup::Hit(x));
    // Any word of the version differing makes the entry stale.
    for word in 0..V1.len() {
        let mut v2 = V1;
        v2[word] ^= 1 << (word * 7);
        assert_eq!(c.lookup(&k, &v2), Lookup::Stale, "word {word}");
    }
    // A stale lookup leaves the entry in place.
    assert_eq!(c.lookup(&k, &V1), Lookup::Hit(x));
    let v2 = [V1[0] + 1, V1[1], V1[2]];
    let y = value_of(&k, &v2);
    assert_eq!(c.insert(&k, &v2, &y), Insert::Replaced);
    assert_eq!(c.lookup(&k, &v2), Lookup::Hit(y));
    assert_eq!(c.lookup(&k, &V1), Lookup::Stale);
    // Another file of the same inode number (other superblock or generation) is
    // another key.
    for other in [
        Key { sb: k.sb + 1, ..k },
        Key {
            generation: k.generation + 1,
            ..k
        },
    ] {
        assert_eq!(c.lookup(&other, &v2), Lookup::Miss);
    }
}

#[test]
fn version_of_four_words() {
    let sets: Vec<Set<4>> = (0..2).map(|_| Set::new()).collect();
    let c: Cache<_, 4> = Cache::new(sets);
    let k = key(3);
    let x = Value::new(1, &[0xaa; 20]).unwrap();
    assert_eq!(c.insert(&k, &[1, 2, 3, 4], &x), Insert::New);
    assert_eq!(c.lookup(&k, &[1, 2, 3, 4]), Lookup::Hit(x));
    assert_eq!(c.lookup(&k, &[1, 2, 3, 5]), Lookup::Stale);
}

#[test]
fn eviction_beyond_the_ways() {
    for sets in [1, 16] {
        let c = cache(sets);
        let keys = same_set(&c, WAYS + 1);
        for k in &keys[..WAYS] {
            assert_eq!(c.insert(k, &V1, &value_of(k, &V1)), Insert::New);
        }
        for k in &keys[..WAYS] {
            assert_eq!(c.lookup(k, &V1), Lookup::Hit(value_of(k, &V1)));
        }
        let last = &keys[WAYS];
        let Insert::Evicted(gone) = c.insert(last, &V1, &value_of(last, &V1)) else {
            panic!("{sets} sets: a full set must evict");
        };
        assert!(
            keys[..WAYS].contains(&gone),
            "evicted {gone:?}, never inserted"
        );
        assert_eq!(c.lookup(&gone, &V1), Lookup::Miss);
        for k in keys.iter().filter(|&&k| k != gone) {
            assert_eq!(c.lookup(k, &V1), Lookup::Hit(value_of(k, &V1)));
        }
        if sets > 1 {
            // The other sets were not touched: still room there.
            let other = (0..)
                .map(key)
                .find(|k| c.set_of(k) != c.set_of(last))
                .unwrap();
            assert_eq!(c.insert(&other, &V1, &value_of(&other, &V1)), Insert::New);
        }
    }
}

#[test]
fn clock_spares_entries_in_use() {
    let c = cache(1);
    let k: Vec<Key> = (0..WAYS + 2).map(key).collect();
    let ins = |k: &Key| c.insert(k, &V1, &value_of(k, &V1));
    let hit = |k: &Key| assert_eq!(c.lookup(k, &V1), Lookup::Hit(value_of(k, &V1)));
    for k in &k[..WAYS] {
        assert_eq!(ins(k), Insert::New);
    }
    // All but the last were used since: the last goes.
    for k in &k[..WAYS - 1] {
        hit(k);
    }
    assert_eq!(ins(&k[WAYS]), Insert::Evicted(k[WAYS - 1]));
    // Now only k[1] and the newcomer are used: one of the others goes.
    hit(&k[1]);
    hit(&k[WAYS]);
    let Insert::Evicted(gone) = ins(&k[WAYS + 1]) else {
        panic!("a full set must evict");
    };
    assert!(
        gone != k[1] && gone != k[WAYS],
        "evicted {gone:?}, which was in use"
    );

    // An entry used before every insert is never evicted.
    let hot = k[1];
    hit(&hot);
    for i in 100..1100 {
        hit(&hot);
        assert_ne!(ins(&key(i)), Insert::Evicted(hot), "insert {i}");
    }
    hit(&hot);
}

#[test]
fn remove() {
    let c = cache(8);
    let k = key(9);
    assert_eq!(c.remove(&k), Remove::Absent);
    c.insert(&k, &V1, &value_of(&k, &V1));
    assert_eq!(c.remove(&k), Remove::Removed);
    assert_eq!(c.lookup(&k, &V1), Lookup::Miss);
    assert_eq!(c.remove(&k), Remove::Absent);
    // The slot is free again.
    assert_eq!(c.insert(&k, &V1, &value_of(&k, &V1)), Insert::New);
}

/// What the cache must hold: the last value inserted per key, with its
/// version, minus what it reported evicted and what was removed.
#[derive(Default)]
struct Model {
    entries: HashMap<Key, (Version, Value)>,
}

#[derive(Default, Debug)]
struct Outcomes {
    hit: u64,
    stale: u64,
    miss: u64,
    new: u64,
    replaced: u64,
    evicted: u64,
    removed: u64,
    absent: u64,
}

/// One random sequence of `ops` operations on a cache of `sets` sets, over
/// `nkeys` keys and `nversions` versions of each, every answer checked.
fn model_run(seed: u64, sets: usize, nkeys: usize, ops: usize, out: &mut Outcomes) {
    let mut rng = Rng::new(seed);
    let c = cache(sets);
    let mut model = Model::default();
    // The files' current versions: most lookups use them, as the module does.
    let mut current: Vec<Version> = (0..nkeys).map(|i| [i as u64, 100, 0]).collect();
    let ctx = |op: usize| format!("seed {seed}, {sets} sets, {nkeys} keys, op {op}");
    for op in 0..ops {
        let i = rng.below(nkeys);
        let k = key(i);
        let version = if rng.chance(80) {
            current[i]
        } else {
            [
                i as u64 + 1000 * rng.below(3) as u64,
                100 + rng.below(2) as u64,
                0,
            ]
        };
        match rng.below(100) {
            0..=44 => {
                let expect = match model.entries.get(&k) {
                    Some((v, x)) if *v == version => Lookup::Hit(*x),
                    Some(_) => Lookup::Stale,
                    None => Lookup::Miss,
                };
                let got = c.lookup(&k, &version);
                assert_eq!(got, expect, "lookup {k:?} {version:?}: {}", ctx(op));
                match got {
                    Lookup::Hit(_) => out.hit += 1,
                    Lookup::Stale => out.stale += 1,
                    Lookup::Miss => out.miss += 1,
                }
            }
            45..=84 => {
                let value = random_value(&mut rng);
                let set = c.set_of(&k);
                let in_set = model.entries.keys().filter(|o| c.set_of(o) == set).count();
                let got = c.insert(&k, &version, &value);
                match got {
                    Insert::Replaced => {
                        assert!(model.entries.contains_key(&k), "{got:?}: {}", ctx(op));
                        out.replaced += 1;
                    }
                    Insert::New => {
                        assert!(!model.entries.contains_key(&k), "{got:?}: {}", ctx(op));
                        assert!(in_set < WAYS, "New in a full set: {}", ctx(op));
                        out.new += 1;
                    }
                    Insert::Evicted(gone) => {
                        assert!(!model.entries.contains_key(&k), "{got:?}: {}", ctx(op));
                        assert_eq!(in_set, WAYS, "evicted with room left: {}", ctx(op));
                        assert_eq!(
                            c.set_of(&gone),
                            set,
                            "evicted from another set: {}",
                            ctx(op)
                        );
                        assert!(
                            model.entries.remove(&gone).is_some(),
                            "evicted {gone:?}, which was not there: {}",
                            ctx(op)
                        );
                        out.evicted += 1;
                    }
                    Insert::Busy | Insert::Disabled => panic!("{got:?}: {}", ctx(op)),
                }
                model.entries.insert(k, (version, value));
            }
            85..=92 => {
                let expect = match model.entries.remove(&k) {
                    Some(_) => Remove::Removed,
                    None => Remove::Absent,
                };
                let got = c.remove(&k);
                assert_eq!(got, expect, "remove {k:?}: {}", ctx(op));
                match got {
                    Remove::Removed => out.removed += 1,
                    _ => out.absent += 1,
                }
            }
            // The file changes.
            _ => current[i][1] += 1,
        }
        assert!(model.entries.len() <= c.capacity());
    }
    // At the end, every key answers as the model says.
    for (i, now) in current.iter().enumerate() {
        let k = key(i);
        let expect = match model.entries.get(&k) {
            Some((v, x)) if v == now => Lookup::Hit(*x),
            Some(_) => Lookup::Stale,
            None => Lookup::Miss,
        };
        assert_eq!(c.lookup(&k, now), expect, "final {k:?}: seed {seed}");
    }
}

#[test]
fn model_random_sequences() {
    let mut out = Outcomes::default();
    let mut runs = 0;
    for seed in 0..3000u64 {
        let sets = [1, 2, 3, 5, 8][(seed % 5) as usize];
        // From fewer keys than slots to several times more.
        let nkeys = 1 + (seed as usize * 7) % (sets * WAYS * 3);
        model_run(seed, sets, nkeys, 400, &mut out);
        runs += 1;
    }
    println!("{runs} sequences of 400 operations: {out:?}");
    // Every kind of answer was checked, many times.
    for (what, n) in [
        ("hit", out.hit),
        ("stale", out.stale),
        ("miss", out.miss),
        ("new", out.new),
        ("replaced", out.replaced),
        ("evicted", out.evicted),
        ("removed", out.removed),
        ("absent", out.absent),
    ] {
        assert!(n > 10_000, "only {n} {what}");
    }
}

/// Threads looking up, inserting and removing the same few keys in a small
/// cache at once, each value made from its key and version: a torn read, a
/// lost write or two slots of one key would give a wrong value back.
#[test]
fn concurrent_readers_and_writers() {
    const THREADS: usize = 8;
    let ops: usize = std::env::var("MMAP3_CACHE_OPS")
        .map(|s| s.parse().expect("MMAP3_CACHE_OPS: a number"))
        // Long enough to catch a reader that skips a check of the sequence
        // counter (tried), and 2 s in a release build on 2 cores.
        .unwrap_or(if cfg!(debug_assertions) {
            400_000
        } else {
            4_000_000
        });
    const KEYS: usize = 48;
    const VERSIONS: u64 = 3;
    let c = cache(4);
    let counts: [AtomicU64; 8] = Default::default();
    let [hit, stale, miss, inserted, busy, evicted, removed, rbusy] = &counts;
    let start = Instant::now();
    std::thread::scope(|s| {
        for t in 0..THREADS {
            let c = &c;
            s.spawn(move || {
                let mut rng = Rng::new(1000 + t as u64);
                let (mut h, mut st, mut m, mut ins, mut b, mut e, mut r, mut rb) =
                    (0, 0, 0, 0, 0, 0, 0, 0);
                for op in 0..ops {
                    let k = key(rng.below(KEYS));
                    let v: Version = [rng.next() % VERSIONS, k.ino, 7];
                    match rng.below(100) {
                        0..=59 => match c.lookup(&k, &v) {
                            Lookup::Hit(x) => {
                                assert_eq!(x, value_of(&k, &v), "thread {t} op {op}: {k:?} {v:?}");
                                h += 1;
                            }
                            Lookup::Stale => st += 1,
                            Lookup::Miss => m += 1,
                        },
                        60..=94 => match c.insert(&k, &v, &value_of(&k, &v)) {
                            Insert::Busy => b += 1,
                            Insert::Disabled => panic!("disabled"),
                            Insert::Evicted(_) => {
                                ins += 1;
                                e += 1;
                            }
                            _ => ins += 1,
                        },
                        _ => match c.remove(&k) {
                            Remove::Busy => rb += 1,
                            Remove::Removed => r += 1,
                            Remove::Absent => {}
                        },
                    }
                }
                for (counter, n) in [hit, stale, miss, inserted, busy, evicted, removed, rbusy]
                    .iter()
                    .zip([h, st, m, ins, b, e, r, rb])
                {
                    counter.fetch_add(n, Ordering::Relaxed);
                }
            });
        }
    });
    let elapsed = start.elapsed();
    let [hit, stale, miss, inserted, busy, evicted, removed, rbusy] =
        counts.map(|c| c.into_inner());
    println!(
        "{THREADS} threads x {ops} operations in {elapsed:.2?}: {hit} hits, {stale} stale, \
         {miss} misses, {inserted} inserts ({evicted} evictions), {busy} busy inserts, \
         {removed} removes, {rbusy} busy removes"
    );
    assert!(hit > 0 && stale > 0 && miss > 0 && evicted > 0 && removed > 0);

    // Quiescent now: no set is left locked, and no key has two slots (a
    // second one would answer after the first is removed).
    for i in 0..KEYS {
        let k = key(i);
        let v: Version = [VERSIONS, k.ino, 7];
        assert_ne!(
            c.insert(&k, &v, &value_of(&k, &v)),
            Insert::Busy,
            "{k:?}: set left locked"
        );
        assert_eq!(c.lookup(&k, &v), Lookup::Hit(value_of(&k, &v)));
        assert_eq!(c.remove(&k), Remove::Removed);
        for version in 0..=VERSIONS {
            assert_eq!(
                c.lookup(&k, &[version, k.ino, 7]),
                Lookup::Miss,
                "{k:?}: two slots"
            );
        }
    }
}
