// SPDX-License-Identifier: GPL-2.0

//! Cross-check with the real world: every regular ELF file under `/usr/bin`
//! and `/usr/lib/x86_64-linux-gnu` is parsed and compared with binutils'
//! `readelf -n`: the same build-id, or none for both.
//!
//! readelf reads notes through the section headers when there are some, the
//! parser through the program headers only, so this also checks that the
//! two views agree on real files.
//!
//! Files that readelf rejects (exit status or `Error:` on stderr) are
//! judged as follows. The parser judges only what it reads: the ELF header,
//! the program headers and the note segments. So:
//!
//! - a file that does not start with `\x7fELF` is never compared: the parser
//!   says `NotElf` (see the crafted tests) and readelf "Not an ELF file";
//! - if readelf still printed a build-id, the parser must return the same;
//! - otherwise readelf's complaint may be about the very parts the parser
//!   reads (then the parser says `Malformed`) or about parts it never reads,
//!   such as section headers (then `NoBuildId` or a build-id is right): any
//!   answer but `Io` is accepted, and the file is listed in the output. No
//!   such file exists on a Debian system today.

mod common;

use common::{elf_files, hex, parse_file};
use mmap3_buildid::{Error, MAX_BYTES_READ};
use std::collections::HashMap;
use std::path::PathBuf;
use std::process::Command;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::Instant;

const ROOTS: [&str; 2] = ["/usr/bin", "/usr/lib/x86_64-linux-gnu"];
const BATCH: usize = 64;
const THREADS: usize = 2;

/// What readelf said about one file.
#[derive(Debug, Default, Clone)]
struct Readelf {
    build_id: Option<String>,
    error: Option<String>,
}

/// Runs `readelf -n` on a batch; returns its answers by file name.
fn readelf(files: &[PathBuf]) -> HashMap<String, Readelf> {
    let out = Command::new("readelf")
        .args(["-n", "--wide"])
        .args(files)
        .output()
        .expect("cannot run readelf (binutils)");
    let mut map: HashMap<String, Readelf> = HashMap::new();
    let mut current = if files.len() == 1 {
        files[0].to_str().map(str::to_owned)
    } else {
        None
    };
    for line in String::from_utf8_lossy(&out.stdout).lines() {
        if let Some(name) = line.strip_prefix("File: ") {
            current = Some(name.to_owned());
            map.entry(name.to_owned()).or_default();
        } else if let (Some((_, id)), Some(cur)) = (line.split_once("Build ID: "), &current) {
            let e = map.entry(cur.clone()).or_default();
            // The first build-id note is the one the parser returns.
            e.build_id.get_or_insert_with(|| id.trim().to_owned());
        }
    }
    if files.len() == 1 {
        let name = files[0].to_str().unwrap().to_owned();
        let e = map.entry(name).or_default();
        let stderr = String::from_utf8_lossy(&out.stderr);
        if !out.status.success() || stderr.contains("Error:") {
            e.error = Some(stderr.trim().to_owned());
        }
    } else if !out.status.success() || String::from_utf8_lossy(&out.stderr).contains("Error:") {
        // Attribute the errors: run each file of the batch alone.
        for f in files {
            map.extend(readelf(std::slice::from_ref(f)));
        }
    }
    map
}

#[test]
fn agrees_with_readelf_on_system_files() {
    let start = Instant::now();
    let files = elf_files(&ROOTS);

    // The parser's answers, with the byte counts (parse_file asserts the cap).
    let mut ours = Vec::new();
    let (mut requested, mut max_requested, mut file_bytes) = (0usize, 0usize, 0u64);
    for f in &files {
        let Ok(p) = parse_file(f) else { continue };
        requested += p.requested;
        max_requested = max_requested.max(p.requested);
        file_bytes += std::fs::metadata(f).map(|m| m.len()).unwrap_or(0);
        ours.push((f.clone(), p.result));
    }
    let parse_time = start.elapsed();

    // readelf's, in batches, on a few threads.
    let batches: Vec<&[(PathBuf, _)]> = ours.chunks(BATCH).collect();
    let next = AtomicUsize::new(0);
    let theirs = Mutex::new(HashMap::new());
    std::thread::scope(|scope| {
        for _ in 0..THREADS {
            scope.spawn(|| loop {
                let i = next.fetch_add(1, Ordering::Relaxed);
                let Some(batch) = batches.get(i) else { break };
                let names: Vec<PathBuf> = batch.iter().map(|(f, _)| f.clone()).collect();
                let got = readelf(&names);
                theirs.lock().unwrap().extend(got);
            });
        }
    });
    let theirs = theirs.into_inner().unwrap();

    let mut compared = 0usize;
    let (mut found, mut none, mut rejected) = (0usize, 0usize, Vec::new());
    let mut disagreements = Vec::new();
    for (f, result) in &ours {
        let name = f.to_str().unwrap();
        let Some(re) = theirs.get(name) else {
            disagreements.push(format!("{name}: missing from readelf's output"));
            continue;
        };
        compared += 1;
        let mine = match result {
            Ok(id) => Some(hex(id.as_bytes())),
            Err(_) => None,
        };
        let agree = match (&re.error, result) {
            (_, Err(Error::Io)) => false,
            (Some(_), _) if re.build_id.is_some() => mine == re.build_id,
            (Some(err), _) => {
                rejected.push(format!("{name}: {result:?}; readelf: {err}"));
                true
            }
            (None, Ok(_)) => mine == re.build_id,
            (None, Err(e)) => *e == Error::NoBuildId && re.build_id.is_none(),
        };
        if !agree {
            disagreements.push(format!(
                "{name}: parser {result:?}, readelf {:?}",
                re.build_id
            ));
        }
        match result {
            Ok(_) => found += 1,
            Err(_) => none += 1,
        }
    }

    println!(
        "compared {compared} ELF files with readelf: {found} with a build-id, {none} without, \
         {} rejected by readelf, {} disagreements ({:.2?} total, {parse_time:.2?} parsing)",
        rejected.len(),
        disagreements.len(),
        start.elapsed()
    );
    println!(
        "bytes requested: {requested} in all, {} per file on average, {max_requested} at most \
         (cap {MAX_BYTES_READ}); the files hold {file_bytes} bytes",
        requested / ours.len().max(1)
    );
    for r in &rejected {
        println!("rejected by readelf: {r}");
    }
    for d in &disagreements {
        println!("DISAGREE {d}");
    }
    assert!(compared >= 500, "only {compared} ELF files compared");
    assert!(
        disagreements.is_empty(),
        "{} disagreements",
        disagreements.len()
    );
}
