// SPDX-License-Identifier: GPL-2.0

//! What both ways in ask of the module, and where it answers: the lookup
//! under `mmap_lock` and the read deferred to the way back to user space,
//! for the series' provider hook (`rust/provider.rs`) and for the probe
//! of the trace event (`rust/probe.rs`).

use crate::compat::VmaRef;
use crate::file::UnlockedFile;
use crate::status::{Missing, Status};

/// The longest build-id a record or the trace event holds.
pub(crate) const BUILD_ID_MAX: usize = 20;

/// `struct mmap3_build_id` of `rust/helpers.h`, the layout of the series'
/// `struct perf_mmap3_build_id` (checked below where the series is).
#[repr(C)]
pub(crate) struct RawBuildId {
    size: u8,
    status: u8,
    data: [u8; BUILD_ID_MAX],
}

#[cfg(mmap3_provider)]
const _: () = {
    use kernel::bindings;
    assert!(
        core::mem::size_of::<RawBuildId>() == core::mem::size_of::<bindings::perf_mmap3_build_id>()
    );
    assert!(
        core::mem::offset_of!(RawBuildId, size)
            == core::mem::offset_of!(bindings::perf_mmap3_build_id, size)
    );
    assert!(
        core::mem::offset_of!(RawBuildId, status)
            == core::mem::offset_of!(bindings::perf_mmap3_build_id, status)
    );
    assert!(
        core::mem::offset_of!(RawBuildId, data)
            == core::mem::offset_of!(bindings::perf_mmap3_build_id, data)
    );
    macro_rules! uapi {
        ($($variant:ident = $c:ident),* $(,)?) => {
            $(assert!(Status::$variant as u32 == bindings::$c);)*
        };
    }
    uapi!(
        Found = perf_mmap3_build_id_status_PERF_MMAP3_BUILD_ID_FOUND,
        NoFile = perf_mmap3_build_id_status_PERF_MMAP3_BUILD_ID_NO_FILE,
        NotElf = perf_mmap3_build_id_status_PERF_MMAP3_BUILD_ID_NOT_ELF,
        NoBuildId = perf_mmap3_build_id_status_PERF_MMAP3_BUILD_ID_NO_BUILD_ID,
        Malformed = perf_mmap3_build_id_status_PERF_MMAP3_BUILD_ID_MALFORMED,
        IoError = perf_mmap3_build_id_status_PERF_MMAP3_BUILD_ID_IO_ERROR,
        Skipped = perf_mmap3_build_id_status_PERF_MMAP3_BUILD_ID_SKIPPED,
    );
};

/// Where the module writes its answer for one mapping: the build-id part
/// of the record or of the event, zeroed by the caller before the call.
#[repr(transparent)]
pub(crate) struct BuildIdOut(RawBuildId);

impl BuildIdOut {
    /// Answers [`Status::Found`] with the first `len` bytes of `build_id`,
    /// which is zero past them: at most 20 bytes, the longest the record
    /// holds (a longer one is [`Status::Malformed`] to the parser already).
    /// A copy of a fixed size, not of a length known at run time.
    pub(crate) fn found(&mut self, build_id: &[u8; BUILD_ID_MAX], len: u8) {
        self.0.data = *build_id;
        self.0.size = len.min(BUILD_ID_MAX as u8);
        self.0.status = Status::Found.into();
    }

    /// Answers a status without a build-id (the caller zeroed the rest).
    pub(crate) fn missing(&mut self, missing: Missing) {
        self.0.size = 0;
        self.0.status = missing.into();
    }

    /// Replaces any answer by a status without a build-id.
    pub(crate) fn replace(&mut self, missing: Missing) {
        self.0.data = [0; BUILD_ID_MAX];
        self.missing(missing);
    }

    /// Whether the answer is `missing`.
    pub(crate) fn is(&self, missing: Missing) -> bool {
        self.0.status == u8::from(missing)
    }
}

/// The build-id could not be found without reading the file: the caller
/// pins it and calls [`Provider::read`] on the way back to user space.
pub(crate) struct Defer;

/// What the module does with each mapping.
pub(crate) trait Provider: Sized + Send + Sync + 'static {
    /// Called for each mapping, under `mmap_lock` and where it must not
    /// sleep (an RCU read-side critical section, or a probe): must not
    /// sleep, nor read the file.
    fn lookup(&self, vma: &VmaRef, out: &mut BuildIdOut) -> Result<(), Defer>;

    /// Called for a file [`Provider::lookup`] deferred, in the mapping task
    /// before it returns to user space, with no lock held: may sleep and
    /// read.
    fn read(&self, file: UnlockedFile<'_>, out: &mut BuildIdOut);
}
