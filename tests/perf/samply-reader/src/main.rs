// SPDX-License-Identifier: GPL-2.0

//! What samply's perf.data parser (`linux-perf-data`) sees of a recording:
//!
//! ```text
//! mmap2 PID START LEN BUILD_ID|- PATH   a PERF_RECORD_MMAP2 (its build-id
//!                                       form, or - for maj/min/ino)
//! mmap PID START LEN PATH               a PERF_RECORD_MMAP
//! header-build-id BUILD_ID PATH         an entry of the build-id table
//!                                       (HEADER_BUILD_ID)
//! record TYPE COUNT                     records of each type, unknown ones
//!                                       included
//! samples N
//! ```
//!
//! Exits 1 when the file cannot be parsed, or a record of a type the parser
//! knows cannot be.

use linux_perf_data::linux_perf_event_reader::{EventRecord, Mmap2FileId};
use linux_perf_data::{PerfFileReader, PerfFileRecord};
use std::collections::BTreeMap;
use std::process::ExitCode;

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

fn main() -> ExitCode {
    let Some(path) = std::env::args().nth(1) else {
        eprintln!("usage: mmap3-samply-reader PERF.DATA");
        return ExitCode::from(2);
    };
    let file = match std::fs::File::open(&path) {
        Ok(file) => file,
        Err(e) => {
            eprintln!("{path}: {e}");
            return ExitCode::from(1);
        }
    };
    let PerfFileReader {
        mut perf_file,
        mut record_iter,
    } = match PerfFileReader::parse_file(std::io::BufReader::new(file)) {
        Ok(reader) => reader,
        Err(e) => {
            eprintln!("{path}: not parsed: {e:?}");
            return ExitCode::from(1);
        }
    };
    match perf_file.build_ids() {
        Ok(ids) => {
            let mut ids: Vec<_> = ids.into_values().collect();
            ids.sort_by(|a, b| a.path.cmp(&b.path));
            for dso in ids {
                println!(
                    "header-build-id {} {}",
                    hex(&dso.build_id),
                    String::from_utf8_lossy(&dso.path)
                );
            }
        }
        Err(e) => {
            eprintln!("{path}: build-id table not parsed: {e:?}");
            return ExitCode::from(1);
        }
    }
    let mut types = BTreeMap::new();
    let mut samples = 0u64;
    let mut failed = false;
    loop {
        let record = match record_iter.next_record(&mut perf_file) {
            Ok(Some(record)) => record,
            Ok(None) => break,
            Err(e) => {
                eprintln!("{path}: record not read: {e:?}");
                return ExitCode::from(1);
            }
        };
        let PerfFileRecord::EventRecord { record, .. } = record else {
            continue;
        };
        *types.entry(record.record_type.0).or_insert(0u64) += 1;
        match record.parse() {
            Ok(EventRecord::Mmap2(m)) => {
                let id = match &m.file_id {
                    Mmap2FileId::BuildId(id) => hex(id),
                    Mmap2FileId::InodeAndVersion(_) => "-".to_string(),
                };
                println!(
                    "mmap2 {} {:#x} {:#x} {} {}",
                    m.pid,
                    m.address,
                    m.length,
                    id,
                    String::from_utf8_lossy(&m.path.as_slice())
                );
            }
            Ok(EventRecord::Mmap(m)) => println!(
                "mmap {} {:#x} {:#x} {}",
                m.pid,
                m.address,
                m.length,
                String::from_utf8_lossy(&m.path.as_slice())
            ),
            Ok(EventRecord::Sample(_)) => samples += 1,
            Ok(_) => {}
            Err(e) => {
                eprintln!(
                    "{path}: record of type {} not parsed: {e:?}",
                    record.record_type.0
                );
                failed = true;
            }
        }
    }
    for (ty, count) in types {
        println!("record {ty} {count}");
    }
    println!("samples {samples}");
    if failed {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    }
}
