// SPDX-License-Identifier: GPL-2.0

//! Safe wrappers over the PERF_RECORD_MMAP3 provider hook of the add-on
//! (`include/linux/perf_mmap3.h`, `patches/provider/`): registration, the
//! lookup under `mmap_lock`, and the read the mapping task makes on its way
//! back to user space for a PENDING record. The kernel writes the records.
//! Registering takes over from the kernel's built-in lookup and read;
//! unregistering gives them back. Built where the kernel has the add-on
//! (Kbuild's `--cfg mmap3_provider`).

use crate::answer::{BuildIdOut, Defer, Provider};
#[cfg(not(mmap3_kernel_opaque_try_ffi_init))]
use crate::compat::OpaqueExt as _;
use crate::compat::{File, VmaRef};
use crate::file::UnlockedFile;
use kernel::{bindings, error::to_result, prelude::*, types::Opaque};

/// The registration of a [`Provider`] with the kernel, undone on drop.
///
/// While it is registered, lookups and reads on other CPUs reach it through
/// `raw`, by shared references: it is pinned, and the drop that unregisters
/// it waits for the lookups running and for every file deferred and not yet
/// read. (It is `!Unpin`, `raw` being an `Opaque`, so the `Pin<&mut Self>`
/// of that drop claims no exclusive access meanwhile.)
///
/// # Invariants
///
/// `raw` is registered with `perf_mmap3_register()` from initialisation
/// until drop, and `provider` is initialised before it is.
#[pin_data(PinnedDrop)]
pub(crate) struct Registration<T: Provider> {
    provider: T,
    #[pin]
    raw: Opaque<bindings::perf_mmap3_provider>,
}

// SAFETY: The registration owns a `T`, which is `Send`; the kernel may call
// into it from any CPU, which `T: Sync` allows.
unsafe impl<T: Provider> Send for Registration<T> {}

// SAFETY: Shared references only reach `&T`, and `T` is `Sync`.
unsafe impl<T: Provider> Sync for Registration<T> {}

impl<T: Provider> Registration<T> {
    /// Registers `provider`; it is called as soon as it is.
    pub(crate) fn new(provider: T) -> impl PinInit<Self, Error> {
        try_pin_init!(Self {
            provider,
            raw <- Opaque::try_ffi_init(move |slot: *mut bindings::perf_mmap3_provider| {
                // SAFETY: `slot` is valid for writes; `nr_deferred` is set
                // by `perf_mmap3_register()`.
                unsafe {
                    slot.write(bindings::perf_mmap3_provider {
                        lookup: Some(lookup_callback::<T>),
                        read: Some(read_callback::<T>),
                        nr_deferred: bindings::atomic_t { counter: 0 },
                    })
                };
                // INVARIANT: `provider` is initialised (the fields are
                // initialised in this order); on success `raw` is
                // registered until `drop` unregisters it.
                // SAFETY: `slot` is initialised and pinned.
                to_result(unsafe { bindings::perf_mmap3_register(slot) })
            }),
        })
    }

    /// The provider.
    pub(crate) fn provider(&self) -> &T {
        &self.provider
    }

    /// The registration whose `raw` field `raw` is.
    ///
    /// # Safety
    ///
    /// `raw` is the `raw` field of a registered `Registration<T>`.
    unsafe fn from_raw<'a>(raw: *mut bindings::perf_mmap3_provider) -> &'a Self {
        // CAST: `Opaque<T>` is `repr(transparent)`.
        let raw = raw.cast::<Opaque<bindings::perf_mmap3_provider>>();
        // SAFETY: By the caller, `raw` is the `raw` field of a registered
        // `Registration<T>`, which lives until unregistration, which waits
        // for every call into it to return.
        unsafe { &*kernel::container_of!(raw, Registration<T>, raw) }
    }
}

#[pinned_drop]
impl<T: Provider> PinnedDrop for Registration<T> {
    fn drop(self: Pin<&mut Self>) {
        // SAFETY: By the type invariant `raw` is registered. This returns
        // once no lookup runs and every deferred file was read: nothing
        // reaches `self` through the kernel any more.
        unsafe { bindings::perf_mmap3_unregister(self.raw.get()) };
    }
}

/// `perf_mmap3_provider.lookup`.
///
/// # Safety
///
/// `raw` is the `raw` field of a registered `Registration<T>`, `vma` a VMA
/// whose `mmap_lock` is held, `id` valid for writes during the call.
unsafe extern "C" fn lookup_callback<T: Provider>(
    raw: *mut bindings::perf_mmap3_provider,
    vma: *mut bindings::vm_area_struct,
    id: *mut bindings::perf_mmap3_build_id,
) -> core::ffi::c_int {
    // SAFETY: The kernel passes back the `raw` field of a registered
    // `Registration<T>`.
    let registration = unsafe { Registration::<T>::from_raw(raw) };
    // SAFETY: The lookup is called with `vma` valid and `mmap_lock` held.
    let vma = unsafe { VmaRef::from_raw(vma) };
    // CAST: `BuildIdOut` is a transparent wrapper of `RawBuildId`, whose
    // layout is `perf_mmap3_build_id`'s (checked in `rust/answer.rs`).
    // SAFETY: `id` is valid and not otherwise accessed during the call.
    let out = unsafe { &mut *id.cast::<BuildIdOut>() };
    match registration.provider.lookup(vma, out) {
        Ok(()) => 0,
        Err(Defer) => EAGAIN.to_errno(),
    }
}

/// `perf_mmap3_provider.read`.
///
/// # Safety
///
/// `raw` is the `raw` field of a registered `Registration<T>`, `file` a
/// file the kernel holds a reference on during the call, made with no lock
/// held, `id` valid for writes during the call.
unsafe extern "C" fn read_callback<T: Provider>(
    raw: *mut bindings::perf_mmap3_provider,
    file: *mut bindings::file,
    id: *mut bindings::perf_mmap3_build_id,
) {
    // SAFETY: The kernel passes back the `raw` field of a registered
    // `Registration<T>`.
    let registration = unsafe { Registration::<T>::from_raw(raw) };
    // SAFETY: The kernel holds a reference on `file` during the call.
    let file: &File = unsafe { File::from_raw_file(file) };
    // SAFETY: The read is called with no lock held.
    let file = unsafe { UnlockedFile::new(file) };
    // CAST: `BuildIdOut` is a transparent wrapper of `RawBuildId`, whose
    // layout is `perf_mmap3_build_id`'s (checked in `rust/answer.rs`).
    // SAFETY: `id` is valid and not otherwise accessed during the call.
    let out = unsafe { &mut *id.cast::<BuildIdOut>() };
    registration.provider.read(file, out);
    crate::fifo::skip_if_cut_short(out);
}
