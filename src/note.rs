// SPDX-License-Identifier: GPL-2.0

//! The build-id note of a mapped file, found through the page cache: what
//! the lookup (with the pages already there) and the deferred read
//! (whatever it takes) share, and the [`Answer`] they give.

use crate::answer::BuildIdOut;
use crate::buildid;
use crate::cache;
use crate::compat::File;
use crate::file::{Fetched, FileExt as _, Identity, PageReader, UnlockedFile};
use crate::status::{Missing, Status};
use kernel::prelude::*;

/// What a lookup found out.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Answer {
    Found(buildid::BuildId),
    Missing(Missing),
    /// From the cache, as [`Answer::to_value`] put it there.
    Cached(cache::Value),
}

impl Answer {
    /// Gives the answer to the kernel.
    pub(crate) fn write(&self, out: &mut BuildIdOut) {
        match self {
            Answer::Found(id) => out.found(id.padded(), id.size()),
            Answer::Missing(missing) => out.missing(*missing),
            Answer::Cached(value) => match Missing::from_u8(value.status()) {
                Some(missing) => out.missing(missing),
                // The cache holds only what `to_value` made: otherwise
                // `Found`, with the build-id.
                None => {
                    let (id, len) = value.padded_build_id();
                    out.found(id, len)
                }
            },
        }
    }

    /// The answer as the cache holds it; none for a read error, which is
    /// never cached.
    pub(crate) fn to_value(self) -> Option<cache::Value> {
        match self {
            Answer::Found(id) => cache::Value::new(Status::Found.into(), id.as_bytes()),
            Answer::Missing(Missing::IoError) => None,
            Answer::Missing(missing) => cache::Value::new(missing.into(), &[]),
            Answer::Cached(value) => Some(value),
        }
    }
}

/// Where a [`FileReader`] gets the bytes.
#[derive(Clone, Copy)]
pub(crate) enum Source<'a> {
    /// Only what the page cache holds (under `mmap_lock`).
    Cached(&'a File),
    /// Whatever it takes (no lock held).
    Io(UnlockedFile<'a>),
}

impl Source<'_> {
    /// The file read.
    fn file(&self) -> &File {
        match self {
            Source::Cached(file) => file,
            Source::Io(file) => file,
        }
    }
}

/// [`buildid::Reader`] over a file, reading through the page cache; keeps
/// the first error.
struct FileReader<'a> {
    reader: PageReader<'a>,
    error: Option<Error>,
}

impl buildid::Reader for FileReader<'_> {
    type Bytes<'b>
        = Fetched<'b>
    where
        Self: 'b;

    fn fetch(&mut self, offset: u64, len: usize) -> Result<Fetched<'_>, buildid::ReadError> {
        self.reader.fetch(offset, len).map_err(|e| {
            self.error.get_or_insert(e);
            buildid::ReadError
        })
    }
}

/// Parses the build-id note of a file. `Err` when a page needed is not in
/// the page cache ([`Source::Cached`] only).
fn parse(source: Source<'_>) -> Result<Answer, Error> {
    let mut reader = FileReader {
        reader: match source {
            Source::Cached(file) => file.cached_reader(),
            Source::Io(file) => file.reader(),
        },
        error: None,
    };
    Ok(match buildid::find_build_id(&mut reader) {
        Ok(id) => Answer::Found(id),
        Err(buildid::Error::NotElf) => Answer::Missing(Missing::NotElf),
        Err(buildid::Error::NoBuildId) => Answer::Missing(Missing::NoBuildId),
        Err(buildid::Error::Malformed) => Answer::Missing(Missing::Malformed),
        // A file whose data is not in the page cache (no ->read_folio,
        // DAX): the module does not read it.
        Err(buildid::Error::Io) if reader.error.map(Error::to_errno) == Some(-EOPNOTSUPP) => {
            Answer::Missing(Missing::Skipped)
        }
        Err(buildid::Error::Io) => match (source, reader.error) {
            (Source::Cached(_), Some(e)) => return Err(e),
            _ => Answer::Missing(Missing::IoError),
        },
    })
}

/// Parses the note of a file that may be changing under the read; returns
/// the answer and whether the file had no writer and kept the identity
/// `first` (read by the caller just before) from before the parse to after
/// it ([`FileExt::unchanged`]): only then may the answer be cached for
/// `first`.
///
/// A `write()` in progress, or a writer through a shared mapping, can leave
/// the note half old and half new when it is read: an id the file never
/// had. When the file has a writer, or its identity moved, the note is read
/// again until two reads agree; a file that keeps changing gives
/// [`Missing::IoError`].
// Inlined: its answer would otherwise be copied out of one more frame on
// every mapping that misses the cache.
#[inline(always)]
pub(crate) fn parse_stable(source: Source<'_>, first: &Identity) -> Result<(Answer, bool), Error> {
    let mut answer = parse(source)?;
    if source.file().unchanged(first) {
        return Ok((answer, true));
    }
    for _ in 0..4 {
        let again = parse(source)?;
        if again == answer {
            return Ok((answer, false));
        }
        answer = again;
    }
    Ok((Answer::Missing(Missing::IoError), false))
}

/// No page cache behind the file (`mmap3_file_read()`).
const EOPNOTSUPP: i32 = kernel::bindings::EOPNOTSUPP as i32;
