// SPDX-License-Identifier: GPL-2.0

//! Safe wrappers over the PERF_RECORD_MMAP3 provider API of the patched
//! kernel (`include/linux/perf_event.h`): registration, the hook, deferral
//! to task_work, and writing the record.

use crate::file::Vma;
use core::ptr::addr_of_mut;
use kernel::{bindings, init::PinInit, prelude::*, types::Opaque, ThisModule};

extern "C" {
    fn mmap3_param_cache_entries() -> u32;
}

/// `enum perf_mmap3_build_id_status` (uapi), less `UNKNOWN`, never emitted.
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

macro_rules! assert_uapi {
    ($($variant:ident = $c:ident),* $(,)?) => {
        const _: () = {
            $(assert!(Status::$variant as u32 == bindings::$c);)*
        };
    };
}

assert_uapi!(
    Found = perf_mmap3_build_id_status_PERF_MMAP3_BUILD_ID_FOUND,
    NoFile = perf_mmap3_build_id_status_PERF_MMAP3_BUILD_ID_NO_FILE,
    NotElf = perf_mmap3_build_id_status_PERF_MMAP3_BUILD_ID_NOT_ELF,
    NoBuildId = perf_mmap3_build_id_status_PERF_MMAP3_BUILD_ID_NO_BUILD_ID,
    Malformed = perf_mmap3_build_id_status_PERF_MMAP3_BUILD_ID_MALFORMED,
    IoError = perf_mmap3_build_id_status_PERF_MMAP3_BUILD_ID_IO_ERROR,
    Skipped = perf_mmap3_build_id_status_PERF_MMAP3_BUILD_ID_SKIPPED,
);

/// A mapping as the hook gets it: every field of the record but the build-id.
///
/// # Invariants
///
/// `file_name` points to a NUL-terminated string that lives as long as `self`.
#[repr(transparent)]
pub(crate) struct MapInfo(bindings::perf_mmap3_info);

impl MapInfo {
    /// Writes the MMAP3 record of this mapping to the events of the current
    /// task and CPU, with `build_id` when `status` is [`Status::Found`].
    pub(crate) fn emit(&self, status: Status, build_id: &[u8]) -> Result {
        let mut raw = bindings::perf_mmap3_info { ..self.0 };
        let id = if status == Status::Found {
            build_id
        } else {
            &[]
        };
        let dst = raw.build_id.get_mut(..id.len()).ok_or(EINVAL)?;
        dst.copy_from_slice(id);
        raw.build_id_size = u8::try_from(id.len()).map_err(|_| EINVAL)?;
        raw.build_id_status = status as u8;
        // SAFETY: `raw` is a valid `perf_mmap3_info`; by the type invariant
        // its `file_name` is NUL-terminated and alive during the call.
        kernel::error::to_result(unsafe { bindings::perf_mmap3_output(&raw) })
    }

    /// A copy that owns its file name, to outlive the hook.
    pub(crate) fn to_owned(&self) -> Result<OwnedMapInfo> {
        // SAFETY: By the type invariant `file_name` is a valid C string.
        let name = unsafe { CStr::from_char_ptr(self.0.file_name) };
        let mut buf = KVec::with_capacity(name.len_with_nul(), GFP_KERNEL)?;
        buf.extend_from_slice(name.as_bytes_with_nul(), GFP_KERNEL)?;
        let mut info = MapInfo(bindings::perf_mmap3_info { ..self.0 });
        // INVARIANT: `buf` is NUL-terminated and moves with `info` into the
        // `OwnedMapInfo`; its heap storage does not move.
        info.0.file_name = buf.as_ptr().cast();
        Ok(OwnedMapInfo { info, _name: buf })
    }
}

/// A [`MapInfo`] with its own copy of the file name.
pub(crate) struct OwnedMapInfo {
    info: MapInfo,
    _name: KVec<u8>,
}

impl core::ops::Deref for OwnedMapInfo {
    type Target = MapInfo;

    fn deref(&self) -> &MapInfo {
        &self.info
    }
}

/// What the module does with each mapping.
pub(crate) trait Provider: Sized + Sync {
    /// Called for each mapping an mmap3 event may record (executable ones,
    /// and the others while an mmap3 event has `mmap_data`), under
    /// `mmap_lock`: may sleep and allocate, must not read the file; work
    /// that reads goes to [`Registration::defer`].
    fn mmap(registration: &Registration<Self>, vma: &Vma, info: &MapInfo);
}

/// The registration of a [`Provider`] with the kernel, undone on drop.
///
/// # Invariants
///
/// `raw` is registered with `perf_mmap3_register()` from initialisation
/// until drop, and `provider` is initialised all that time.
#[pin_data(PinnedDrop)]
pub(crate) struct Registration<T: Provider> {
    provider: T,
    #[pin]
    raw: Opaque<bindings::perf_mmap3_provider>,
}

// SAFETY: The kernel only reads `raw` (from any CPU) while registered, and
// `provider` is `Sync`; moving the pinned registration is impossible.
unsafe impl<T: Provider + Send> Send for Registration<T> {}

// SAFETY: Shared references only give access to `provider`, which is `Sync`,
// and to `defer`, which the kernel serialises per task.
unsafe impl<T: Provider> Sync for Registration<T> {}

impl<T: Provider> Registration<T> {
    /// Registers `provider`; its hook is called as soon as this returns.
    pub(crate) fn new(module: &'static ThisModule, provider: T) -> impl PinInit<Self, Error> {
        let init = move |slot: *mut Self| -> Result {
            // SAFETY: `slot` is valid for writes (`pin_init_from_closure`).
            unsafe { addr_of_mut!((*slot).provider).write(provider) };
            // SAFETY: As above; `raw_get` does not dereference.
            let raw = unsafe { Opaque::raw_get(addr_of_mut!((*slot).raw)) };
            // SAFETY: `raw` is valid for writes.
            unsafe {
                raw.write(bindings::perf_mmap3_provider {
                    owner: module.as_ptr(),
                    mmap: Some(Self::mmap_callback),
                })
            };
            // SAFETY: `raw` is initialised, pinned, and stays registered
            // until `drop` unregisters it.
            let ret = unsafe { bindings::perf_mmap3_register(raw) };
            if ret != 0 {
                // SAFETY: Initialised above; the slot is left uninitialised.
                unsafe { core::ptr::drop_in_place(addr_of_mut!((*slot).provider)) };
                return Err(Error::from_errno(ret));
            }
            Ok(())
        };
        // SAFETY: The closure initialises every field, or on error drops
        // what it initialised and leaves the slot uninitialised.
        unsafe { kernel::init::pin_init_from_closure(init) }
    }

    /// The provider.
    pub(crate) fn provider(&self) -> &T {
        &self.provider
    }

    /// The module parameter `cache_entries`.
    pub(crate) fn cache_entries() -> usize {
        // SAFETY: Reads a module parameter, set before init.
        unsafe { mmap3_param_cache_entries() as usize }
    }

    /// The hook the kernel calls.
    ///
    /// # Safety
    ///
    /// `raw` is the `raw` field of a registered `Registration<T>`, `vma` a
    /// VMA whose `mmap_lock` is held, `info` valid during the call.
    unsafe extern "C" fn mmap_callback(
        raw: *const bindings::perf_mmap3_provider,
        vma: *mut bindings::vm_area_struct,
        info: *const bindings::perf_mmap3_info,
    ) {
        // SAFETY: The kernel passes back the `raw` field of a registered
        // `Registration<T>`, which stays alive until unregistration, which
        // waits for this call to return.
        let this = unsafe { &*kernel::container_of!(raw, Self, raw) };
        // SAFETY: The hook is called with `vma` valid and `mmap_lock` held.
        let vma = unsafe { Vma::from_raw(vma) };
        // CAST: `MapInfo` is a transparent wrapper of `perf_mmap3_info`.
        // SAFETY: `info` and its `file_name` are valid during the call.
        let info = unsafe { &*info.cast::<MapInfo>() };
        T::mmap(this, vma, info);
    }

    /// Runs `data.run()` in the current task before it returns to user
    /// space, with the module pinned until then. On failure (no memory, a
    /// kernel thread, an exiting task, the module going away) gives `data`
    /// back.
    pub(crate) fn defer<D: Deferred<T>>(&self, data: D) -> Result<(), (D, Error)> {
        let work = match KBox::<Work<T, D>>::new_uninit(GFP_KERNEL) {
            Ok(work) => work.write(Work {
                raw: Opaque::uninit(),
                registration: self,
                data,
            }),
            Err(_) => return Err((data, ENOMEM)),
        };
        let work = KBox::into_raw(work);
        // SAFETY: `work` is valid and ours; `raw_get` does not dereference.
        let raw = unsafe { Opaque::raw_get(addr_of_mut!((*work).raw)) };
        // SAFETY: `raw` is valid for writes; `perf_mmap3_defer()` sets
        // `twork`. `self.raw` is initialised (type invariant).
        unsafe {
            addr_of_mut!((*raw).owner).write((*self.raw.get()).owner);
            addr_of_mut!((*raw).func).write(Some(run_callback::<T, D>));
        }
        // SAFETY: `raw` is set up; on success the kernel owns `work` until
        // it calls `run_callback`, once.
        let ret = unsafe { bindings::perf_mmap3_defer(raw) };
        if ret != 0 {
            // SAFETY: Not queued: `work` is still ours, from `KBox::into_raw`.
            let work = unsafe { KBox::from_raw(work) };
            return Err((KBox::into_inner(work).data, Error::from_errno(ret)));
        }
        Ok(())
    }
}

#[pinned_drop]
impl<T: Provider> PinnedDrop for Registration<T> {
    fn drop(self: Pin<&mut Self>) {
        // SAFETY: By the type invariant `raw` is registered; this returns
        // once no hook call is running.
        unsafe { bindings::perf_mmap3_unregister(self.raw.get()) };
    }
}

/// Work for the mapping task to do before it returns to user space.
pub(crate) trait Deferred<T: Provider> {
    /// Runs in the mapping task, with no lock held.
    fn run(self, provider: &T);
}

/// A deferred [`Deferred`].
///
/// # Invariants
///
/// `registration` is alive until `data` has run: `raw.owner` is the module
/// that owns it, and `perf_mmap3_defer()` keeps the module pinned until then.
struct Work<T: Provider, D: Deferred<T>> {
    raw: Opaque<bindings::perf_mmap3_work>,
    registration: *const Registration<T>,
    data: D,
}

/// The function `perf_mmap3_defer()` calls from task_work.
///
/// # Safety
///
/// `raw` is the `raw` field of a `Work<T, D>` leaked by
/// [`Registration::defer`], and this is called once for it.
unsafe extern "C" fn run_callback<T: Provider, D: Deferred<T>>(
    raw: *mut bindings::perf_mmap3_work,
) {
    // SAFETY: `raw` is the `raw` field of a `Work` that `defer` leaked from
    // a `KBox`; the kernel calls this once, handing ownership back.
    let work = unsafe { KBox::from_raw(kernel::container_of!(raw, Work<T, D>, raw).cast_mut()) };
    let work = KBox::into_inner(work);
    // SAFETY: By the type invariant of `Work` the registration is alive.
    let provider = unsafe { &(*work.registration).provider };
    work.data.run(provider);
}
