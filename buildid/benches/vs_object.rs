// SPDX-License-Identifier: GPL-2.0

//! Benchmark: this parser against the `object` crate's
//! `object::read::File::build_id()` on the ELF files of `/usr/bin` and
//! `/usr/lib/x86_64-linux-gnu`, in one run.
//!
//! Two comparisons:
//!
//! - from the file: the parser reads what it needs with `pread` (counted);
//!   `object` needs the whole file in memory (or mapped), so it reads the
//!   whole file, then parses it;
//! - in memory: both parse the same bytes already in memory, so only the
//!   parsing is timed.
//!
//! Run with `cargo bench`; without `--bench` (as `cargo test --benches`
//! does) a single quick pass is made.

#[path = "../tests/common/mod.rs"]
mod common;

use common::{elf_files, Counting};
use mmap3_buildid::find_build_id;
use object::Object;
use std::fs::File;
use std::hint::black_box;
use std::path::PathBuf;
use std::time::{Duration, Instant};

const ROOTS: [&str; 2] = ["/usr/bin", "/usr/lib/x86_64-linux-gnu"];

fn ours_from_file(files: &[PathBuf]) -> (usize, usize) {
    let (mut found, mut bytes) = (0, 0);
    for f in files {
        let Ok(file) = File::open(f) else { continue };
        let mut r = Counting::new(file);
        if black_box(find_build_id(&mut r)).is_ok() {
            found += 1;
        }
        bytes += r.returned;
    }
    (found, bytes)
}

fn object_from_file(files: &[PathBuf]) -> (usize, usize) {
    let (mut found, mut bytes) = (0, 0);
    for f in files {
        let Ok(data) = std::fs::read(f) else { continue };
        bytes += data.len();
        if object_build_id(&data).is_some() {
            found += 1;
        }
    }
    (found, bytes)
}

fn object_build_id(data: &[u8]) -> Option<&[u8]> {
    let file = object::read::File::parse(data).ok()?;
    black_box(file.build_id().ok()?)
}

fn ours_in_memory(data: &[Vec<u8>]) -> usize {
    let mut found = 0;
    for d in data {
        let mut r = Counting::new(d.as_slice());
        if black_box(find_build_id(&mut r)).is_ok() {
            found += 1;
        }
    }
    found
}

fn object_in_memory(data: &[Vec<u8>]) -> usize {
    data.iter()
        .filter(|d| object_build_id(d.as_slice()).is_some())
        .count()
}

/// The fastest of `rounds` runs of `f`, and its result.
fn best<T>(rounds: usize, mut f: impl FnMut() -> T) -> (Duration, T) {
    let mut best = Duration::MAX;
    let mut out = None;
    for _ in 0..rounds {
        let t = Instant::now();
        let r = f();
        best = best.min(t.elapsed());
        out = Some(r);
    }
    (best, out.expect("at least one round"))
}

fn main() {
    let full = std::env::args().any(|a| a == "--bench");
    let rounds = if full { 5 } else { 1 };
    let files = elf_files(&ROOTS);
    let n = files.len();

    // The answers agree (object looks at section headers first).
    let mut same = 0;
    for f in &files {
        let data = std::fs::read(f).unwrap_or_default();
        let ours = find_build_id(&mut Counting::new(data.as_slice())).ok();
        let theirs = object_build_id(data.as_slice());
        if ours.as_ref().map(|b| b.as_bytes()) == theirs {
            same += 1;
        }
    }

    // Warm the page cache, then time, alternating so both see the same state.
    object_from_file(&files);
    let mut ours_t = Duration::MAX;
    let mut obj_t = Duration::MAX;
    let (mut ours_r, mut obj_r) = ((0, 0), (0, 0));
    for _ in 0..rounds {
        let (t, r) = best(1, || ours_from_file(&files));
        ours_t = ours_t.min(t);
        ours_r = r;
        let (t, r) = best(1, || object_from_file(&files));
        obj_t = obj_t.min(t);
        obj_r = r;
    }
    println!("{n} ELF files, {same} with the same answer from both");
    println!(
        "from the file: ours {ours_t:.2?} ({} found, {} bytes read, {} per file), \
         object {obj_t:.2?} ({} found, {} bytes read, {} per file): object/ours = {:.1}x",
        ours_r.0,
        ours_r.1,
        ours_r.1 / n.max(1),
        obj_r.0,
        obj_r.1,
        obj_r.1 / n.max(1),
        obj_t.as_secs_f64() / ours_t.as_secs_f64()
    );

    let data: Vec<Vec<u8>> = files
        .iter()
        .map(|f| std::fs::read(f).unwrap_or_default())
        .collect();
    let inner = if full { 20 } else { 1 };
    let (ours_m, found_m) = best(rounds, || {
        (0..inner).map(|_| ours_in_memory(&data)).sum::<usize>()
    });
    let (obj_m, found_o) = best(rounds, || {
        (0..inner).map(|_| object_in_memory(&data)).sum::<usize>()
    });
    println!(
        "in memory ({inner} passes): ours {ours_m:.2?} ({} found), object {obj_m:.2?} ({} found): \
         object/ours = {:.1}x",
        found_m / inner,
        found_o / inner,
        obj_m.as_secs_f64() / ours_m.as_secs_f64()
    );
}
