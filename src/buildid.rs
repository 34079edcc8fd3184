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
//! [`MAX_BYTES_READ`] bytes are requested from the [`Reader`] in total. Every
//! buffer is on the stack and smaller than 512 bytes.
//!
//! Every field is copied once into a local buffer before it is used (the
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

/// The size of the buffer program headers are read into, in chunks: 8 ELF64
/// or 14 ELF32 headers.
const PHDR_BUF: usize = 448;

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

/// Random access to the bytes of a file.
pub trait Reader {
    /// Reads into `buf` the bytes of the file from `offset` on.
    ///
    /// Returns the number of bytes read, which is `buf.len()` unless the end
    /// of the file comes first (then it is fewer, possibly 0). A result
    /// larger than `buf.len()` is treated as [`Error::Io`].
    fn read_at(&mut self, offset: u64, buf: &mut [u8]) -> Result<usize, ReadError>;
}

/// A file held in memory.
impl Reader for [u8] {
    fn read_at(&mut self, offset: u64, buf: &mut [u8]) -> Result<usize, ReadError> {
        let src = usize::try_from(offset)
            .ok()
            .and_then(|off| self.get(off..))
            .unwrap_or(&[]);
        for (d, s) in buf.iter_mut().zip(src) {
            *d = *s;
        }
        Ok(buf.len().min(src.len()))
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
    #[inline]
    fn u16(self, buf: &[u8], off: usize) -> Option<u16> {
        let b: [u8; 2] = buf.get(off..off.checked_add(2)?)?.try_into().ok()?;
        Some(match self {
            Endian::Little => u16::from_le_bytes(b),
            Endian::Big => u16::from_be_bytes(b),
        })
    }

    #[inline]
    fn u32(self, buf: &[u8], off: usize) -> Option<u32> {
        let b: [u8; 4] = buf.get(off..off.checked_add(4)?)?.try_into().ok()?;
        Some(match self {
            Endian::Little => u32::from_le_bytes(b),
            Endian::Big => u32::from_be_bytes(b),
        })
    }

    #[inline]
    fn u64(self, buf: &[u8], off: usize) -> Option<u64> {
        let b: [u8; 8] = buf.get(off..off.checked_add(8)?)?.try_into().ok()?;
        Some(match self {
            Endian::Little => u64::from_le_bytes(b),
            Endian::Big => u64::from_be_bytes(b),
        })
    }
}

/// A `PT_NOTE` program header.
struct NoteSegment {
    offset: u64,
    size: u64,
    align: u64,
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
    /// Reads at `offset` into `buf`; returns the number of bytes read.
    fn read(&mut self, offset: u64, buf: &mut [u8]) -> Result<usize, Error> {
        match self.r.read_at(offset, buf) {
            Ok(n) if n <= buf.len() => Ok(n),
            _ => Err(Error::Io),
        }
    }

    /// Records damage and gives up on the current part of the file.
    fn damaged<T>(&mut self) -> Result<Option<T>, Error> {
        self.malformed = true;
        Ok(None)
    }

    /// Returns the build-id, `None` if there is none, or a final error.
    fn run(&mut self) -> Result<Option<BuildId>, Error> {
        let mut ehdr = [0u8; EHDR_READ];
        let n = self.read(0, &mut ehdr)?;
        if n < 4 || ehdr.get(..4) != Some(b"\x7fELF".as_slice()) {
            return Err(Error::NotElf);
        }
        let e = match ehdr.get(5) {
            Some(1) => Endian::Little,
            Some(2) => Endian::Big,
            _ => return Err(Error::Malformed),
        };
        // (header size, e_phoff, e_phentsize, e_phnum, program header size)
        let (ehsize, phoff, phentsize, phnum, entsize) = match ehdr.get(4) {
            Some(1) => (
                52,
                e.u32(&ehdr, 28).map(u64::from),
                e.u16(&ehdr, 42),
                e.u16(&ehdr, 44),
                PHDR32_SIZE,
            ),
            Some(2) => (
                64,
                e.u64(&ehdr, 32),
                e.u16(&ehdr, 54),
                e.u16(&ehdr, 56),
                PHDR64_SIZE,
            ),
            _ => return Err(Error::Malformed),
        };
        let (Some(phoff), Some(phentsize), Some(phnum)) = (phoff, phentsize, phnum) else {
            return Err(Error::Malformed);
        };
        if n < ehsize {
            return Err(Error::Malformed);
        }
        if phnum == 0 {
            return Ok(None);
        }
        if usize::from(phentsize) != entsize {
            return Err(Error::Malformed);
        }
        // The whole table must be addressable, even the part not read.
        let entsize64 = u64::from(phentsize);
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

        let per_chunk = PHDR_BUF.checked_div(entsize).unwrap_or(1);
        let mut buf = [0u8; PHDR_BUF];
        let mut done = 0usize;
        let mut offset = phoff;
        while done < count {
            let want_n = per_chunk.min(count.saturating_sub(done));
            let want = want_n.saturating_mul(entsize);
            let Some(chunk) = buf.get_mut(..want) else {
                return Err(Error::Malformed);
            };
            let got = self.read(offset, chunk)?;
            let got_n = got.checked_div(entsize).unwrap_or(0);
            for i in 0..got_n {
                let Some(seg) = parse_phdr(e, entsize, &buf, i.saturating_mul(entsize)) else {
                    return Err(Error::Malformed);
                };
                if let Some(seg) = seg {
                    if let Some(id) = self.scan(e, seg)? {
                        return Ok(Some(id));
                    }
                }
            }
            if got < want {
                // The table is cut short by the end of the file.
                return self.damaged();
            }
            done = done.saturating_add(want_n);
            let Some(next) = u64::try_from(want).ok().and_then(|w| offset.checked_add(w)) else {
                return Err(Error::Malformed);
            };
            offset = next;
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
            let mut buf = [0u8; NOTE_READ];
            let Some(note) = buf.get_mut(..want) else {
                return self.damaged();
            };
            if self.read(at, note)? < want {
                return self.damaged();
            }
            let (Some(namesz), Some(descsz), Some(ntype)) =
                (e.u32(&buf, 0), e.u32(&buf, 4), e.u32(&buf, 8))
            else {
                return self.damaged();
            };
            // Offsets from the note's start, as binutils computes them.
            let desc_off = (NHDR_SIZE_U64)
                .checked_add(u64::from(namesz))
                .and_then(|x| x.checked_next_multiple_of(align));
            let next = desc_off
                .and_then(|x| x.checked_add(u64::from(descsz)))
                .and_then(|x| x.checked_next_multiple_of(align));
            let (Some(desc_off), Some(next)) = (desc_off, next) else {
                return self.damaged();
            };
            if next > remaining {
                return self.damaged();
            }

            if ntype == NT_GNU_BUILD_ID && namesz == 4 && buf.get(NHDR_SIZE..) == Some(&GNU_NAME) {
                let len = usize::try_from(descsz).unwrap_or(usize::MAX);
                if len == 0 || len > BUILD_ID_SIZE_MAX {
                    // Keep looking: a later note may be a valid build-id.
                    self.malformed = true;
                } else {
                    let mut id = BuildId {
                        len: u8::try_from(len).unwrap_or(0),
                        bytes: [0; BUILD_ID_SIZE_MAX],
                    };
                    let Some(dst) = id.bytes.get_mut(..len) else {
                        return self.damaged();
                    };
                    let Some(at) = at.checked_add(desc_off) else {
                        return self.damaged();
                    };
                    if self.read(at, dst)? < len {
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

/// Parses the program header at `off` in `buf`: `None` if `buf` is too short,
/// `Some(None)` if it is not a note segment.
fn parse_phdr(e: Endian, entsize: usize, buf: &[u8], off: usize) -> Option<Option<NoteSegment>> {
    let field = |rel: usize| off.checked_add(rel);
    if e.u32(buf, off)? != PT_NOTE {
        return Some(None);
    }
    let seg = if entsize == PHDR32_SIZE {
        NoteSegment {
            offset: u64::from(e.u32(buf, field(4)?)?),
            size: u64::from(e.u32(buf, field(16)?)?),
            align: u64::from(e.u32(buf, field(28)?)?),
        }
    } else {
        NoteSegment {
            offset: e.u64(buf, field(8)?)?,
            size: e.u64(buf, field(32)?)?,
            align: e.u64(buf, field(48)?)?,
        }
    };
    Some(Some(seg))
}
