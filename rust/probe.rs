// SPDX-License-Identifier: GPL-2.0

//! The trace event `mmap3:build_id` and its probe on `perf_event_mmap()`
//! (`rust/probe.c`, the C glue): the probe asks the module's [`Provider`]
//! for each executable mapping under `mmap_lock`, and for the files it
//! deferred on the mapping task's way back to user space.

use crate::answer::{BuildIdOut, Provider, RawBuildId};
use crate::compat::{File, VmaRef};
use crate::file::UnlockedFile;
use core::ffi::{c_int, c_void};
use kernel::prelude::*;

extern "C" {
    fn mmap3_event_init(ctx: *const c_void) -> c_int;
    fn mmap3_event_exit();
}

/// The provider the probe asks: the module's.
pub(crate) type Asked = crate::Mmap3Provider;

/// What holds the provider the probe asks.
pub(crate) trait AsProvider: Send + Sync {
    /// The provider.
    fn provider(&self) -> &Asked;
}

/// The trace event, served from load to unload with the provider `home`
/// holds; its probe is attached while the event is enabled. Dropped, it
/// stops serving first (waiting for the reads it deferred), then drops
/// `home`.
///
/// # Invariants
///
/// When `served`, `mmap3_event_init()` succeeded with a pointer to the
/// provider of `home`, which is pinned.
#[pin_data(PinnedDrop)]
pub(crate) struct Event<H: AsProvider> {
    #[pin]
    home: H,
    served: bool,
}

impl<H: AsProvider> Event<H> {
    /// Serves the event with the provider of `home`; fails when
    /// `perf_event_mmap()` cannot be probed (the C side logs why).
    pub(crate) fn new(home: impl PinInit<H, Error>) -> impl PinInit<Self, Error> {
        try_pin_init!(Self {
            home <- home,
            served: false,
        })
        .pin_chain(|this| {
            // SAFETY: Only `served` is written; nothing is moved out.
            let this = unsafe { this.get_unchecked_mut() };
            let ctx: *const Asked = this.home.provider();
            // SAFETY: `ctx` points into `home`, which is pinned and dropped
            // after `drop` has called `mmap3_event_exit()`; the C side
            // passes it back to the callbacks below only.
            kernel::error::to_result(unsafe { mmap3_event_init(ctx.cast()) })?;
            // INVARIANT: Initialised with the provider of `home`.
            this.served = true;
            Ok(())
        })
    }

    /// What holds the provider.
    pub(crate) fn home(&self) -> &H {
        &self.home
    }
}

#[pinned_drop]
impl<H: AsProvider> PinnedDrop for Event<H> {
    fn drop(self: Pin<&mut Self>) {
        if self.served {
            // SAFETY: Initialised (type invariant). This detaches the probe
            // and returns once every deferred mapping was read and emitted:
            // nothing calls into the provider afterwards, and `home` is
            // dropped after this.
            unsafe { mmap3_event_exit() };
        }
    }
}

/// The lookup of the probe, at `perf_event_mmap(vma)`'s entry: 0 when
/// answered in `id`, `-EAGAIN` when the file is to be read.
///
/// # Safety
///
/// `ctx` is what `mmap3_event_init()` was given, `vma` a VMA whose
/// `mmap_lock` is held, `id` zeroed and valid for writes during the call.
#[no_mangle]
unsafe extern "C" fn mmap3_probe_lookup(
    ctx: *const c_void,
    vma: *mut c_void,
    id: *mut RawBuildId,
) -> c_int {
    // SAFETY: `ctx` points at the provider of a served `Event`, alive
    // until the event stops being served (its invariant).
    let provider = unsafe { &*ctx.cast::<Asked>() };
    // SAFETY: The probe runs with `vma` valid and `mmap_lock` held.
    let vma = unsafe { VmaRef::from_raw(vma.cast()) };
    // CAST: `BuildIdOut` is a transparent wrapper of `RawBuildId`.
    // SAFETY: `id` is valid and not otherwise accessed during the call.
    let out = unsafe { &mut *id.cast::<BuildIdOut>() };
    match provider.lookup(vma, out) {
        Ok(()) => 0,
        Err(_) => EAGAIN.to_errno(),
    }
}

/// The read of a file the lookup deferred, in the mapping task on its way
/// back to user space.
///
/// # Safety
///
/// `ctx` is what `mmap3_event_init()` was given, `file` a file the caller
/// holds a reference on during the call, made with no lock held, `id`
/// valid for writes during the call.
#[no_mangle]
unsafe extern "C" fn mmap3_probe_read(ctx: *const c_void, file: *mut c_void, id: *mut RawBuildId) {
    // SAFETY: `ctx` points at the provider of a served `Event`, alive
    // until the event stops being served (its invariant).
    let provider = unsafe { &*ctx.cast::<Asked>() };
    // SAFETY: The caller holds a reference on `file` during the call.
    let file: &File = unsafe { File::from_raw_file(file.cast()) };
    // SAFETY: The read is called with no lock held.
    let file = unsafe { UnlockedFile::new(file) };
    // CAST: `BuildIdOut` is a transparent wrapper of `RawBuildId`.
    // SAFETY: `id` is valid and not otherwise accessed during the call.
    let out = unsafe { &mut *id.cast::<BuildIdOut>() };
    provider.read(file, out);
}
