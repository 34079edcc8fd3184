// SPDX-License-Identifier: GPL-2.0

//! The build-id status of a mapping: `enum perf_mmap3_build_id_status` of
//! the series' uapi, which the module defines itself so that it builds on
//! kernels without the series too (`rust/answer.rs` checks the numbers
//! against the uapi's where the series is).

/// `enum perf_mmap3_build_id_status`, less `UNKNOWN`, never emitted.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
#[repr(u8)]
pub(crate) enum Status {
    /// The record carries the build-id.
    Found = 1,
    /// Anonymous mapping, no file.
    NoFile = 2,
    /// The file is not ELF.
    NotElf = 3,
    /// An ELF file without a GNU build-id note.
    NoBuildId = 4,
    /// Truncated or inconsistent ELF, or a build-id over 20 bytes.
    Malformed = 5,
    /// The file could not be read.
    IoError = 6,
    /// A file the module does not read.
    Skipped = 7,
}

impl Status {
    /// Every status, in the order of their numbers.
    pub(crate) const ALL: [Status; 7] = [
        Status::Found,
        Status::NoFile,
        Status::NotElf,
        Status::NoBuildId,
        Status::Malformed,
        Status::IoError,
        Status::Skipped,
    ];

    /// The status whose number is `n`, if any.
    pub(crate) const fn from_u8(n: u8) -> Option<Status> {
        let mut i = 0;
        while i < Status::ALL.len() {
            if Status::ALL[i] as u8 == n {
                return Some(Status::ALL[i]);
            }
            i += 1;
        }
        None
    }
}

impl From<Status> for u8 {
    fn from(status: Status) -> u8 {
        status as u8
    }
}
