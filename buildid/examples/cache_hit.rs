// SPDX-License-Identifier: GPL-2.0

//! The cost of a cache hit, for callgrind (`callgrind-hit.sh` runs this).
//!
//! Builds a cache of the module's default size (`cache_entries` = 4096 in
//! `rust/helpers.c`, so [`Cache::sets_for`] sets), fills it with 4096
//! files spread over a few superblocks, then looks every entry still there
//! up `ROUNDS` times (the first argument), each through [`hit`], which
//! does nothing but call [`Cache::lookup`]: callgrind counts the
//! instructions of `hit` alone (`--toggle-collect`), and two runs with
//! different `ROUNDS` give the cost of one hit from the difference, free of
//! any constant. Prints `hits: N`, the number of hits made.
//!
//! `cache_hit ROUNDS WAY` hits one entry `ROUNDS` times instead, the one in
//! way `WAY` (0 to 3) of a cache of one set holding four: a hit costs more
//! the further it scans its set.

use mmap3_buildid::cache::{Cache, Insert, Key, Lookup, Set, Value, Version, WAYS};
use std::hint::black_box;

/// The module's default `cache_entries`.
const ENTRIES: usize = 4096;

/// One lookup, not inlined, so that callgrind can count it alone; its
/// name is what `callgrind-hit.sh` gives `--toggle-collect`.
#[inline(never)]
fn hit(cache: &Cache<Vec<Set>>, key: &Key, version: &Version) -> Lookup {
    cache.lookup(key, version)
}

/// xorshift64*: the same files at every run.
fn next(state: &mut u64) -> u64 {
    *state ^= *state >> 12;
    *state ^= *state << 25;
    *state ^= *state >> 27;
    state.wrapping_mul(0x2545_f491_4f6c_dd1d)
}

/// `rounds` hits of the entry in way `way` of a full set.
fn one_way(rounds: usize, way: usize) -> usize {
    let cache = Cache::new(vec![Set::new()]);
    let mut rng = 0x0077_6179u64;
    let entries: Vec<(Key, Version)> = (0..WAYS as u64)
        .map(|i| {
            let key = Key {
                sb: 1,
                ino: 1000 + i,
                generation: next(&mut rng) as u32,
            };
            let version = [next(&mut rng), 4096, next(&mut rng)];
            let value = Value::new(1, &[i as u8; 20]).unwrap();
            // A set fills its ways in order.
            assert_eq!(cache.insert(&key, &version, &value), Insert::New);
            (key, version)
        })
        .collect();
    let (key, version) = entries[way];
    assert!(matches!(cache.lookup(&key, &version), Lookup::Hit(_)));
    let mut hits = 0;
    for _ in 0..rounds {
        if let Lookup::Hit(value) = hit(black_box(&cache), black_box(&key), black_box(&version)) {
            black_box(value.build_id());
            hits += 1;
        }
    }
    hits
}

fn main() {
    let mut args = std::env::args().skip(1);
    let rounds: usize = args
        .next()
        .map(|s| s.parse().expect("ROUNDS: a number"))
        .unwrap_or(10);
    if let Some(way) = args.next() {
        let way: usize = way.parse().expect("WAY: a number");
        assert!(way < WAYS, "WAY: 0 to {}", WAYS - 1);
        println!("hits: {}", one_way(rounds, way));
        return;
    }
    let sets = Cache::<Vec<Set>>::sets_for(ENTRIES);
    let cache = Cache::new((0..sets).map(|_| Set::new()).collect::<Vec<_>>());
    let mut rng = 0x006d_6d61_7033_u64;
    // Files as the module sees them: a few superblock serials, inode
    // numbers dense within each file system, random generations (ext4),
    // a version of i_version, size and ctime.
    let files: Vec<(Key, Version, Value)> = (0..ENTRIES as u64)
        .map(|i| {
            let key = Key {
                sb: 1 + i % 4,
                ino: 12 + i / 4 * 3,
                generation: next(&mut rng) as u32,
            };
            let version = [
                next(&mut rng) % 100_000,
                next(&mut rng) % (64 << 20),
                1_700_000_000_000_000_000 + next(&mut rng) % 1_000_000_000_000_000,
            ];
            let id: Vec<u8> = (0..20).map(|_| next(&mut rng) as u8).collect();
            (key, version, Value::new(1, &id).unwrap())
        })
        .collect();
    for (key, version, value) in &files {
        cache.insert(key, version, value);
    }
    // What is still there after the evictions of sets that got more than
    // their ways.
    let present: Vec<(Key, Version)> = files
        .iter()
        .filter(|(k, v, x)| cache.lookup(k, v) == Lookup::Hit(*x))
        .map(|(k, v, _)| (*k, *v))
        .collect();
    let mut hits = 0usize;
    let mut sum = 0u64;
    for _ in 0..rounds {
        for (key, version) in &present {
            match hit(black_box(&cache), black_box(key), black_box(version)) {
                Lookup::Hit(value) => {
                    sum = sum.wrapping_add(u64::from(value.status()));
                    sum = sum.wrapping_add(value.build_id().len() as u64);
                    hits += 1;
                }
                other => panic!("{key:?}: {other:?}, not a hit"),
            }
        }
    }
    black_box(sum);
    println!("entries: {}", present.len());
    println!("hits: {hits}");
}
