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

/// Why a mapping has no build-id: every [`Status`] but [`Status::Found`],
/// with its number.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
#[repr(u8)]
pub(crate) enum Missing {
    /// [`Status::NoFile`].
    NoFile = Status::NoFile as u8,
    /// [`Status::NotElf`].
    NotElf = Status::NotElf as u8,
    /// [`Status::NoBuildId`].
    NoBuildId = Status::NoBuildId as u8,
    /// [`Status::Malformed`].
    Malformed = Status::Malformed as u8,
    /// [`Status::IoError`].
    IoError = Status::IoError as u8,
    /// [`Status::Skipped`].
    Skipped = Status::Skipped as u8,
}

impl Missing {
    /// Every reason, in the order of their numbers.
    const ALL: [Missing; 6] = [
        Missing::NoFile,
        Missing::NotElf,
        Missing::NoBuildId,
        Missing::Malformed,
        Missing::IoError,
        Missing::Skipped,
    ];

    /// The reason whose status number is `n`; none for [`Status::Found`]
    /// and numbers that are no status.
    pub(crate) const fn from_u8(n: u8) -> Option<Missing> {
        let mut i = 0;
        while i < Missing::ALL.len() {
            if Missing::ALL[i] as u8 == n {
                return Some(Missing::ALL[i]);
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

impl From<Missing> for u8 {
    fn from(missing: Missing) -> u8 {
        missing as u8
    }
}
