// SPDX-License-Identifier: GPL-2.0

//! The read of a file that the lookup deferred: on the mapping task's way
//! back to user space, with no lock held (from the series' FIFO, or from
//! the probe's, `rust/probe.c`). The cache again, then the file, through
//! the page cache.

use crate::file::{FileExt as _, UnlockedFile};
use crate::lookup::Mmap3Provider;
use crate::note::{parse_stable, Answer, Source};
use crate::policy;
use crate::status::Missing;

impl Mmap3Provider {
    /// Reads a file's build-id, with no lock held: the cache first, where
    /// another mapping of the same file (another segment of one binary) may
    /// have put it since the lookup.
    pub(crate) fn read_file(&self, file: UnlockedFile<'_>) -> Answer {
        let before = file.identity();
        if self.caches(&before) {
            if let Some(answer) = self.cached(&file, &before) {
                return answer;
            }
        }
        if policy::reads_own_fuse(&before) {
            return Answer::Missing(Missing::Skipped);
        }
        match parse_stable(Source::Io(file), &before) {
            Ok((answer, unchanged)) => {
                if unchanged {
                    self.remember(&file, &before, answer);
                }
                answer
            }
            Err(_) => Answer::Missing(Missing::IoError),
        }
    }
}
