// SPDX-License-Identifier: GPL-2.0

//! The trace event `mmap3:build_id` and its probe on `perf_event_mmap()`
//! (`rust/probe.c`, the C glue): the probe hands each executable mapping
//! to the FIFOs of `rust/fifo.rs`, which ask the module's provider under
//! `mmap_lock`, and for the files it deferred on the mapping task's way
//! back to user space.

use crate::compat::VmaRef;
use crate::fifo::{Fifos, Mapping};
use core::ffi::{c_int, c_void};
use kernel::prelude::*;

extern "C" {
    static mmap3_mapping_size: usize;
    fn mmap3_event_init(ctx: *const c_void) -> c_int;
    fn mmap3_event_stop();
    fn mmap3_event_exit(deferred: bool);
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
/// stops serving first (waiting for the mappings it deferred), then drops
/// `home`.
///
/// # Invariants
///
/// When `served`, `mmap3_event_init()` succeeded with a pointer to
/// `fifos`, whose provider is that of `home`; both are pinned.
#[pin_data(PinnedDrop)]
pub(crate) struct Event<H: AsProvider> {
    #[pin]
    home: H,
    #[pin]
    fifos: Fifos,
    served: bool,
}

impl<H: AsProvider> Event<H> {
    /// Serves the event with the provider of `home`; fails when
    /// `perf_event_mmap()` cannot be probed (the C side logs why).
    pub(crate) fn new(home: impl PinInit<H, Error>) -> impl PinInit<Self, Error> {
        try_pin_init!(Self {
            home <- home,
            fifos <- Fifos::new(),
            served: false,
        })
        .pin_chain(|this| {
            // SAFETY: `fifos` is given its provider and `served` is set;
            // nothing is moved out.
            let this = unsafe { this.get_unchecked_mut() };
            // SAFETY: A constant defined by `rust/probe.c`.
            if unsafe { mmap3_mapping_size } != core::mem::size_of::<Mapping>() {
                return Err(EINVAL);
            }
            this.fifos.set_provider(this.home.provider());
            let ctx: *const Fifos = &this.fifos;
            // SAFETY: `ctx` points into `self`, which is pinned and whose
            // `drop` calls `mmap3_event_exit()` before `fifos` and `home`
            // go; the C side passes it back to `mmap3_probe_mapping` only.
            kernel::error::to_result(unsafe { mmap3_event_init(ctx.cast()) })?;
            // INVARIANT: Initialised with `fifos`, which has its provider.
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
            // SAFETY: Initialised (type invariant). This detaches the probe:
            // no mapping is deferred any more.
            unsafe { mmap3_event_stop() };
            // Every deferred mapping read and emitted.
            self.fifos.drain();
            // SAFETY: The probe is detached and the FIFOs are done: this
            // waits for the last instructions of their task_works, and
            // then nothing calls into `fifos` or `home`, dropped after this.
            unsafe { mmap3_event_exit(self.fifos.used()) };
        }
    }
}

/// One executable mapping, at `perf_event_mmap(vma)`'s entry: looked up,
/// and its event emitted or deferred (`Fifos::mapping`).
///
/// # Safety
///
/// `ctx` is what `mmap3_event_init()` was given, `vma` a VMA whose
/// `mmap_lock` is held, `m` the mapping's description, valid for reads
/// and writes during the call, with `id` zeroed and `name` a C string.
/// Called where it must not sleep.
#[no_mangle]
unsafe extern "C" fn mmap3_probe_mapping(ctx: *const c_void, vma: *mut c_void, m: *mut Mapping) {
    // SAFETY: `ctx` points at the `fifos` of a served `Event`, alive until
    // the event stops being served (its invariant).
    let fifos = unsafe { &*ctx.cast::<Fifos>() };
    // SAFETY: The probe runs with `vma` valid and `mmap_lock` held.
    let vma = unsafe { VmaRef::from_raw(vma.cast()) };
    // SAFETY: `m` is valid and not otherwise accessed during the call.
    let m = unsafe { &mut *m };
    fifos.mapping(vma, m);
}
