// SPDX-License-Identifier: GPL-2.0

//! Finds the GNU build-id note of an untrusted ELF file without allocating.
//!
//! This file is compiled twice, so it holds no crate-level attribute and uses
//! only `core`:
//!
//! - in the kernel module, as a submodule: `#[path = "buildid.rs"] pub mod
//!   buildid;` in the module's crate root (`pub`, so that the kernel's
//!   `-Wunreachable_pub` and dead-code lints stay quiet for the parts the
//!   module does not call);
//! - on the host, by the `mmap3-buildid` crate in `buildid/`, whose
//!   `src/lib.rs` is a `#![no_std]` root that includes this file with
//!   `#[path]` and re-exports it, for `cargo test`, `cargo clippy` and
//!   `cargo fuzz`.
//!
//! The lint levels below are module-level attributes, which are allowed in a
//! submodule; they make clippy prove that nothing here can index out of
//! bounds, overflow or panic.
//!
//! # What is searched
//!
//! Like the kernel's `lib/buildid.c`, only `PT_NOTE` program headers are
//! read, never section headers: the result is the first note named `"GNU\0"`
//! of type `NT_GNU_BUILD_ID` (3) whose descriptor is 1 to 20 bytes long, in
//! program-header order, then note order. ELF32 and ELF64, both byte orders,
//! any `e_type`, note alignment 4 or 8 (from `p_align`) are supported; other
//! notes (ABI tag, GNU properties, Go's build id, ...) are skipped.
//!
//! # Outcome
//!
//! A build-id that can be reached wins, even if another part of the file is
//! damaged (as in `lib/buildid.c`, a damaged segment is abandoned and the
//! search goes on with the next one; only what is needed is read, so damage
//! past the build-id note goes unseen). Otherwise the outcome is, in order of
//! precedence:
//!
//! - [`Error::Io`]: the [`Reader`] failed. This is returned at once.
//! - [`Error::NotElf`]: the file does not start with `\x7fELF` (this includes
//!   files shorter than 4 bytes).
//! - [`Error::Malformed`]: the file starts with `\x7fELF`, but
//!   - the ELF header is cut short, or its class or byte order is unknown;
//!   - `e_phentsize` is not the program-header size of the class, or the
//!     program-header table is cut short or ends past 2^64;
//!   - a `PT_NOTE` segment ends past 2^64, has a `p_align` other than 0 to
//!     4 (meaning 4, as binutils reads it) or 8, or an offset that is not a
//!     multiple of it;
//!   - a note runs past the end of its segment (padding included), is cut
//!     short by the end of the file, or the segment ends with 1 to 11 bytes
//!     that cannot hold a note header;
//!   - a GNU build-id note has an empty descriptor or one longer than
//!     [`BUILD_ID_SIZE_MAX`];
//!   - or there are more than [`MAX_PHDRS`] program headers or more than
//!     [`MAX_NOTES`] notes: past the parser's bounds, the file cannot be said
//!     to have no build-id.
//! - [`Error::NoBuildId`]: none of the above, and no GNU build-id note.
//!
//! # Bounds
//!
//! The work done for any input is bounded: at most [`MAX_PHDRS`] program
//! headers and [`MAX_NOTES`] note headers are read, and at most
//! [`MAX_BYTES_READ`] bytes are requested from the [`Reader`] in total, at
//! most [`FETCH_MAX`] at a time. Nothing is copied but the build-id: the
//! [`Reader`] hands out the bytes where they are ([`Bytes`]), and the parser
//! loads each field it needs once, into a local, before it uses it (the
//! counterpart of `READ_ONCE()` in `lib/buildid.c`): a file that changes
//! while it is read can yield a wrong answer, never an unsafe walk.

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

/// The longest build-id accepted, in bytes (a SHA-1 digest).
pub const BUILD_ID_SIZE_MAX: usize = 20;

/// The most program headers that are read; files with more are
/// [`Error::Malformed`] unless a build-id is found among the first ones.
pub const MAX_PHDRS: usize = 256;

/// The most note headers that are read, over all `PT_NOTE` segments.
pub const MAX_NOTES: usize = 256;

/// The size of the ELF header read first (an ELF64 header; ELF32 uses 52).
const EHDR_READ: usize = 64;

/// The size of an ELF32 program header.
const PHDR32_SIZE: usize = 32;

/// The size of an ELF64 program header.
const PHDR64_SIZE: usize = 56;

/// The size of a note header (`n_namesz`, `n_descsz`, `n_type`).
const NHDR_SIZE: usize = 12;

/// [`NHDR_SIZE`] for 64-bit offset arithmetic.
const NHDR_SIZE_U64: u64 = 12;

/// What is read of each note: its header and the 4 bytes of `"GNU\0"`.
const NOTE_READ: usize = NHDR_SIZE + 4;

/// The most bytes [`find_build_id`] asks its [`Reader`] for, for any input:
/// the ELF header, [`MAX_PHDRS`] ELF64 program headers, [`MAX_NOTES`] note
/// headers with their names, and one build-id (18516 bytes).
#[allow(clippy::arithmetic_side_effects)] // Constant; overflow fails to build.
pub const MAX_BYTES_READ: usize =
    EHDR_READ + MAX_PHDRS * PHDR64_SIZE + MAX_NOTES * NOTE_READ + BUILD_ID_SIZE_MAX;

/// `p_type` of a note segment.
const PT_NOTE: u32 = 4;

/// `n_type` of a GNU build-id note.
const NT_GNU_BUILD_ID: u32 = 3;

/// The name of GNU notes, with its terminating NUL.
const GNU_NAME: [u8; 4] = *b"GNU\0";

/// The error a [`Reader`] returns when the underlying read fails.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ReadError;

/// The most bytes the parser asks for in one [`Reader::fetch`]: an ELF64
/// header.
pub const FETCH_MAX: usize = EHDR_READ;

/// Some bytes of a file, read where they are.
///
/// They may be memory that another task writes meanwhile (the page cache of
/// a file being written): an implementation reads each byte it is asked for
/// once per call, as `READ_ONCE()` does, and the parser loads each field once
/// before it uses it.
pub trait Bytes {
    /// Returns the number of bytes.
    fn count(&self) -> usize;

    /// Returns the `N` bytes at `off`, or `None` if they are not all within
    /// [`Bytes::count`].
    fn load<const N: usize>(&self, off: usize) -> Option<[u8; N]>;

    /// Copies the bytes at `off` into `dst`, or returns `None` if they are
    /// not all within [`Bytes::count`].
    fn copy_to(&self, off: usize, dst: &mut [u8]) -> Option<()>;
}

/// Bytes held in memory that nothing else writes.
impl Bytes for &[u8] {
    #[inline]
    fn count(&self) -> usize {
        self.len()
    }

    #[inline]
    fn load<const N: usize>(&self, off: usize) -> Option<[u8; N]> {
        self.get(off..off.checked_add(N)?)?.try_into().ok()
    }

    #[inline]
    fn copy_to(&self, off: usize, dst: &mut [u8]) -> Option<()> {
        dst.copy_from_slice(self.get(off..off.checked_add(dst.len())?)?);
        Some(())
    }
}

/// Random access to the bytes of a file.
pub trait Reader {
    /// What [`Reader::fetch`] returns: the bytes in place, or a copy the
    /// reader keeps, valid until the next call.
    type Bytes<'a>: Bytes
    where
        Self: 'a;

    /// Returns the `len` bytes of the file from `offset` on, `len` being at
    /// most [`FETCH_MAX`]; fewer (possibly none) when the end of the file
    /// comes first. More than `len` bytes are treated as [`Error::Io`].
    fn fetch(&mut self, offset: u64, len: usize) -> Result<Self::Bytes<'_>, ReadError>;
}

/// A file held in memory.
impl Reader for [u8] {
    type Bytes<'a> = &'a [u8];

    fn fetch(&mut self, offset: u64, len: usize) -> Result<&[u8], ReadError> {
        let src = usize::try_from(offset)
            .ok()
            .and_then(|off| self.get(off..))
            .unwrap_or(&[]);
        Ok(src.get(..len).unwrap_or(src))
    }
}

/// A build-id: 1 to [`BUILD_ID_SIZE_MAX`] bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BuildId {
    len: u8,
    bytes: [u8; BUILD_ID_SIZE_MAX],
}

impl BuildId {
    /// Returns the build-id's bytes (1 to [`BUILD_ID_SIZE_MAX`] of them).
    pub fn as_bytes(&self) -> &[u8] {
        self.bytes.get(..usize::from(self.len)).unwrap_or(&[])
    }

    /// Returns the build-id zero-padded to [`BUILD_ID_SIZE_MAX`] bytes, as an
    /// MMAP3 record carries it.
    pub fn padded(&self) -> &[u8; BUILD_ID_SIZE_MAX] {
        &self.bytes
    }

    /// Returns the number of bytes of the build-id.
    pub fn size(&self) -> u8 {
        self.len
    }
}

/// Why no build-id was returned.
///
/// Each variant maps one to one onto a status of
/// `enum perf_mmap3_build_id_status` (see [`Error::status`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Error {
    /// Not an ELF file (`NOT_ELF`, 3).
    NotElf,
    /// A valid ELF file without a GNU build-id note (`NO_BUILD_ID`, 4).
    NoBuildId,
    /// A truncated or inconsistent ELF file, or a build-id that is empty or
    /// longer than [`BUILD_ID_SIZE_MAX`] (`MALFORMED`, 5).
    Malformed,
    /// The [`Reader`] failed (`IO_ERROR`, 6).
    Io,
}

impl Error {
    /// Returns the `enum perf_mmap3_build_id_status` value of this error.
    pub const fn status(self) -> u8 {
        match self {
            Error::NotElf => 3,
            Error::NoBuildId => 4,
            Error::Malformed => 5,
            Error::Io => 6,
        }
    }
}

/// Finds the GNU build-id of the ELF file read through `r`.
///
/// See the module documentation for what is searched and what each error
/// means. At most [`MAX_BYTES_READ`] bytes are requested from `r`.
pub fn find_build_id<R: Reader + ?Sized>(r: &mut R) -> Result<BuildId, Error> {
    let mut p = Parser {
        r,
        notes_left: MAX_NOTES,
        malformed: false,
    };
    match p.run()? {
        Some(id) => Ok(id),
        None if p.malformed => Err(Error::Malformed),
        None => Err(Error::NoBuildId),
    }
}

/// The byte order of the file.
#[derive(Clone, Copy)]
enum Endian {
    Little,
    Big,
}

impl Endian {
    #[inline(always)]
    fn u16(self, b: &impl Bytes, off: usize) -> Option<u16> {
        let b = b.load::<2>(off)?;
        Some(match self {
            Endian::Little => u16::from_le_bytes(b),
            Endian::Big => u16::from_be_bytes(b),
        })
    }

    #[inline(always)]
    fn u32(self, b: &impl Bytes, off: usize) -> Option<u32> {
        let b = b.load::<4>(off)?;
        Some(match self {
            Endian::Little => u32::from_le_bytes(b),
            Endian::Big => u32::from_be_bytes(b),
        })
    }

    #[inline(always)]
    fn u64(self, b: &impl Bytes, off: usize) -> Option<u64> {
        let b = b.load::<8>(off)?;
        Some(match self {
            Endian::Little => u64::from_le_bytes(b),
            Endian::Big => u64::from_be_bytes(b),
        })
    }
}

/// What the parser needs of the ELF header.
struct Header {
    endian: Endian,
    /// `e_phoff`.
    phoff: u64,
    /// `e_phnum`.
    phnum: u16,
    /// The size of a program header of the file's class.
    entsize: usize,
}

/// A `PT_NOTE` program header.
struct NoteSegment {
    offset: u64,
    size: u64,
    align: u64,
}

/// A note header and the first 4 bytes of its name.
struct NoteHeader {
    namesz: u32,
    descsz: u32,
    ntype: u32,
    name: Option<[u8; 4]>,
}

/// The search state.
struct Parser<'a, R: Reader + ?Sized> {
    r: &'a mut R,
    /// How many more note headers may be read.
    notes_left: usize,
    /// Whether some damage was seen.
    malformed: bool,
}

impl<R: Reader + ?Sized> Parser<'_, R> {
    /// Returns the bytes at `offset`: `len` of them, fewer at the end of the
    /// file.
    #[inline]
    fn fetch(&mut self, offset: u64, len: usize) -> Result<R::Bytes<'_>, Error> {
        match self.r.fetch(offset, len) {
            Ok(b) if b.count() <= len => Ok(b),
            _ => Err(Error::Io),
        }
    }

    /// Records damage and gives up on the current part of the file.
    fn damaged<T>(&mut self) -> Result<Option<T>, Error> {
        self.malformed = true;
        Ok(None)
    }

    /// Reads the ELF header.
    fn header(&mut self) -> Result<Header, Error> {
        let b = self.fetch(0, EHDR_READ)?;
        if b.load::<4>(0) != Some(*b"\x7fELF") {
            return Err(Error::NotElf);
        }
        let endian = match b.load::<1>(5) {
            Some([1]) => Endian::Little,
            Some([2]) => Endian::Big,
            _ => return Err(Error::Malformed),
        };
        let e = endian;
        // (header size, e_phoff, e_phentsize, e_phnum, program header size)
        let (ehsize, phoff, phentsize, phnum, entsize) = match b.load::<1>(4) {
            Some([1]) => (
                52,
                e.u32(&b, 28).map(u64::from),
                e.u16(&b, 42),
                e.u16(&b, 44),
                PHDR32_SIZE,
            ),
            Some([2]) => (64, e.u64(&b, 32), e.u16(&b, 54), e.u16(&b, 56), PHDR64_SIZE),
            _ => return Err(Error::Malformed),
        };
        let (Some(phoff), Some(phentsize), Some(phnum)) = (phoff, phentsize, phnum) else {
            return Err(Error::Malformed);
        };
        if b.count() < ehsize || (phnum != 0 && usize::from(phentsize) != entsize) {
            return Err(Error::Malformed);
        }
        Ok(Header {
            endian,
            phoff,
            phnum,
            entsize,
        })
    }

    /// Returns the build-id, `None` if there is none, or a final error.
    fn run(&mut self) -> Result<Option<BuildId>, Error> {
        let Header {
            endian: e,
            phoff,
            phnum,
            entsize,
        } = self.header()?;
        if phnum == 0 {
            return Ok(None);
        }
        // The whole table must be addressable, even the part not read.
        let Ok(entsize64) = u64::try_from(entsize) else {
            return Err(Error::Malformed);
        };
        if u64::from(phnum)
            .checked_mul(entsize64)
            .and_then(|len| phoff.checked_add(len))
            .is_none()
        {
            return Err(Error::Malformed);
        }
        let count = usize::from(phnum).min(MAX_PHDRS);
        if usize::from(phnum) > MAX_PHDRS {
            self.malformed = true;
        }

        // One program header at a time, as lib/buildid.c reads them: most
        // are in the page the ELF header is in, and read in place.
        let mut offset = phoff;
        for _ in 0..count {
            let phdr = {
                let b = self.fetch(offset, entsize)?;
                parse_phdr(e, entsize, &b)
            };
            match phdr {
                // The table is cut short by the end of the file.
                None => return self.damaged(),
                Some(None) => {}
                Some(Some(seg)) => {
                    if let Some(id) = self.scan(e, seg)? {
                        return Ok(Some(id));
                    }
                }
            }
            // Within the table, which is addressable (checked above).
            offset = offset.saturating_add(entsize64);
        }
        Ok(None)
    }

    /// Walks the notes of one segment.
    fn scan(&mut self, e: Endian, seg: NoteSegment) -> Result<Option<BuildId>, Error> {
        if seg.size == 0 {
            return Ok(None);
        }
        let (align, mask) = match seg.align {
            0..=4 => (4u64, 3u64),
            8 => (8, 7),
            _ => return self.damaged(),
        };
        if seg.offset & mask != 0 || seg.offset.checked_add(seg.size).is_none() {
            return self.damaged();
        }
        let mut pos = 0u64;
        while pos < seg.size {
            let remaining = seg.size.saturating_sub(pos);
            if remaining < NHDR_SIZE_U64 || self.notes_left == 0 {
                return self.damaged();
            }
            self.notes_left = self.notes_left.saturating_sub(1);

            let Some(at) = seg.offset.checked_add(pos) else {
                return self.damaged();
            };
            let want = usize::try_from(remaining).map_or(NOTE_READ, |r| r.min(NOTE_READ));
            let note = {
                let b = self.fetch(at, want)?;
                if b.count() < want {
                    None
                } else {
                    match (e.u32(&b, 0), e.u32(&b, 4), e.u32(&b, 8)) {
                        (Some(namesz), Some(descsz), Some(ntype)) => Some(NoteHeader {
                            namesz,
                            descsz,
                            ntype,
                            name: b.load::<4>(NHDR_SIZE),
                        }),
                        _ => None,
                    }
                }
            };
            let Some(note) = note else {
                return self.damaged();
            };
            // Offsets from the note's start, as binutils computes them.
            let desc_off = (NHDR_SIZE_U64)
                .checked_add(u64::from(note.namesz))
                .and_then(|x| x.checked_next_multiple_of(align));
            let next = desc_off
                .and_then(|x| x.checked_add(u64::from(note.descsz)))
                .and_then(|x| x.checked_next_multiple_of(align));
            let (Some(desc_off), Some(next)) = (desc_off, next) else {
                return self.damaged();
            };
            if next > remaining {
                return self.damaged();
            }

            if note.ntype == NT_GNU_BUILD_ID && note.namesz == 4 && note.name == Some(GNU_NAME) {
                let len = usize::try_from(note.descsz).unwrap_or(usize::MAX);
                if len == 0 || len > BUILD_ID_SIZE_MAX {
                    // Keep looking: a later note may be a valid build-id.
                    self.malformed = true;
                } else {
                    let mut id = BuildId {
                        len: u8::try_from(len).unwrap_or(0),
                        bytes: [0; BUILD_ID_SIZE_MAX],
                    };
                    let Some(at) = at.checked_add(desc_off) else {
                        return self.damaged();
                    };
                    let copied = match id.bytes.get_mut(..len) {
                        Some(dst) => self.fetch(at, len)?.copy_to(0, dst),
                        None => None,
                    };
                    if copied.is_none() {
                        return self.damaged();
                    }
                    return Ok(Some(id));
                }
            }
            pos = pos.saturating_add(next);
        }
        Ok(None)
    }
}

/// Parses the program header `b`: `None` if it is shorter than `entsize`,
/// `Some(None)` if it is not a note segment.
#[inline]
fn parse_phdr(e: Endian, entsize: usize, b: &impl Bytes) -> Option<Option<NoteSegment>> {
    if b.count() < entsize {
        return None;
    }
    if e.u32(b, 0)? != PT_NOTE {
        return Some(None);
    }
    let seg = if entsize == PHDR32_SIZE {
        NoteSegment {
            offset: u64::from(e.u32(b, 4)?),
            size: u64::from(e.u32(b, 16)?),
            align: u64::from(e.u32(b, 28)?),
        }
    } else {
        NoteSegment {
            offset: e.u64(b, 8)?,
            size: e.u64(b, 32)?,
            align: e.u64(b, 48)?,
        }
    };
    Some(Some(seg))
}
