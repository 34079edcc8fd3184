// SPDX-License-Identifier: GPL-2.0

//! Safe wrappers over the PERF_RECORD_MMAP3 provider API of the patched
//! kernel (`include/linux/perf_event.h`): registration, the hook, deferral
//! to task_work, and writing the record.

#[cfg(not(mmap3_kernel_opaque_try_ffi_init))]
use crate::compat::OpaqueExt as _;
use crate::compat::VmaRef;
use core::ptr::addr_of_mut;
use kernel::{bindings, error::to_result, prelude::*, str::BStr, types::Opaque, ThisModule};

extern "C" {
    fn mmap3_param_cache_entries() -> u32;
}

/// The module parameter `cache_entries`, from `rust/helpers.c`: the
/// parameters of `module!` are not shown in `/sys/module/*/parameters`.
pub(crate) fn cache_entries() -> usize {
    // SAFETY: Reads a module parameter, set before init.
    unsafe { mmap3_param_cache_entries() as usize }
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
        to_result(unsafe { bindings::perf_mmap3_output(&raw) })
    }

    /// A copy that owns its file name, to outlive the hook.
    pub(crate) fn to_owned(&self) -> Result<OwnedMapInfo> {
        // SAFETY: By the type invariant `file_name` is a valid C string.
        let name = unsafe { CStr::from_char_ptr(self.0.file_name) };
        let name: &BStr = name.as_ref();
        let mut buf = KVec::with_capacity(name.len() + 1, GFP_KERNEL)?;
        buf.extend_from_slice(name, GFP_KERNEL)?;
        buf.push(0, GFP_KERNEL)?;
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

// SAFETY: The only pointer in `info` is `file_name`, into `_name`, which
// this owns and which moves with it.
unsafe impl Send for OwnedMapInfo {}

impl core::ops::Deref for OwnedMapInfo {
    type Target = MapInfo;

    fn deref(&self) -> &MapInfo {
        &self.info
    }
}

/// What the module does with each mapping.
pub(crate) trait Provider: Sized + Send + Sync + 'static {
    /// What the hook defers: at most one per task at a time, to which the
    /// hook adds the task's later mappings until it has run (see
    /// [`Hook::deferred`]), so that records keep the order of the mappings.
    type Batch: Deferred<Self>;

    /// Called for each mapping that an existing mmap3 event records, under
    /// `mmap_lock`: may sleep and allocate, must not read the file; work
    /// that reads goes to [`Hook::defer`].
    fn mmap(hook: &mut Hook<'_, Self>, vma: &VmaRef, info: &MapInfo);
}

/// Work for the mapping task to do before it returns to user space.
pub(crate) trait Deferred<T>: Send + 'static {
    /// Runs in the mapping task, with no lock held.
    fn run(self, provider: &T);
}

/// The registration of a [`Provider`] with the kernel, undone on drop.
///
/// While it is registered, hooks and deferred work on other CPUs reach it
/// through `raw`, by shared references: it is pinned, and the drop that
/// unregisters it waits for the hooks running and for every batch deferred
/// and not yet run. (It is `!Unpin`, `raw` being an `Opaque`, so the
/// `Pin<&mut Self>` of that drop claims no exclusive access meanwhile.)
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
    /// Registers `provider`; its hook is called as soon as it is.
    pub(crate) fn new(module: &'static ThisModule, provider: T) -> impl PinInit<Self, Error> {
        try_pin_init!(Self {
            provider,
            raw <- Opaque::try_ffi_init(move |slot: *mut bindings::perf_mmap3_provider| {
                // SAFETY: `slot` is valid for writes; `nr_work` is set by
                // `perf_mmap3_register()`.
                unsafe {
                    slot.write(bindings::perf_mmap3_provider {
                        owner: module.as_ptr(),
                        mmap: Some(mmap_callback::<T>),
                        nr_work: bindings::atomic_t { counter: 0 },
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
}

#[pinned_drop]
impl<T: Provider> PinnedDrop for Registration<T> {
    fn drop(self: Pin<&mut Self>) {
        // SAFETY: By the type invariant `raw` is registered. This returns
        // once no hook runs and every deferred batch has run: nothing
        // reaches `self` through the kernel any more.
        unsafe { bindings::perf_mmap3_unregister(self.raw.get()) };
    }
}

/// The hook the kernel calls.
///
/// # Safety
///
/// `raw` is the `raw` field of a registered `Registration<T>`, `vma` a VMA
/// whose `mmap_lock` is held, `info` valid during the call.
unsafe extern "C" fn mmap_callback<T: Provider>(
    raw: *mut bindings::perf_mmap3_provider,
    vma: *mut bindings::vm_area_struct,
    info: *const bindings::perf_mmap3_info,
) {
    // CAST: `Opaque<T>` is `repr(transparent)`.
    let raw = raw.cast::<Opaque<bindings::perf_mmap3_provider>>();
    // SAFETY: The kernel passes back the `raw` field of a registered
    // `Registration<T>`, which lives until unregistration, which waits for
    // this call to return.
    let registration = unsafe { &*kernel::container_of!(raw, Registration<T>, raw) };
    // SAFETY: The hook is called with `vma` valid and `mmap_lock` held.
    let vma = unsafe { VmaRef::from_raw(vma) };
    // CAST: `MapInfo` is a transparent wrapper of `perf_mmap3_info`.
    // SAFETY: `info` and its `file_name` are valid during the call.
    let info = unsafe { &*info.cast::<MapInfo>() };
    let mut hook = Hook { registration };
    T::mmap(&mut hook, vma, info);
}

/// One call of the hook, in the mapping task, under its `mmap_lock`.
///
/// Only [`mmap_callback`] makes one, and the provider gets it by `&mut`:
/// no two `&mut` to the task's pending batch can exist at once.
pub(crate) struct Hook<'a, T: Provider> {
    registration: &'a Registration<T>,
}

impl<T: Provider> Hook<'_, T> {
    /// The provider.
    pub(crate) fn provider(&self) -> &T {
        &self.registration.provider
    }

    /// The batch this task deferred and has not run yet, if there is one,
    /// to add this mapping to it.
    pub(crate) fn deferred(&mut self) -> Option<&mut T::Batch> {
        // SAFETY: `raw` is registered (type invariant of `Registration`).
        let raw = unsafe { bindings::perf_mmap3_deferred(self.registration.raw.get()) };
        if raw.is_null() {
            return None;
        }
        // CAST: `Opaque<T>` is `repr(transparent)`.
        let raw = raw.cast::<Opaque<bindings::perf_mmap3_work>>();
        // SAFETY: A work of this provider is the `raw` field of a `Work<T>`
        // that `defer` leaked.
        let work: *const Work<T> = unsafe { kernel::container_of!(raw, Work<T>, raw) };
        // SAFETY: That work is queued on the current task, which alone runs
        // it, and not before this hook returned; the result borrows `self`
        // mutably, so it is the only reference to the work while it lives.
        let work = unsafe { &mut *work.cast_mut() };
        Some(&mut work.batch)
    }

    /// Runs `batch.run()` in the current task before it returns to user
    /// space; until then the module stays pinned and the registration
    /// alive. On failure (no memory, a kernel thread, an exiting task, the
    /// module going away) gives `batch` back.
    pub(crate) fn defer(&mut self, batch: T::Batch) -> Result<(), (T::Batch, Error)> {
        let work = match KBox::<Work<T>>::new_uninit(GFP_KERNEL) {
            Ok(work) => work.write(Work {
                raw: Opaque::uninit(),
                registration: self.registration,
                batch,
            }),
            Err(_) => return Err((batch, ENOMEM)),
        };
        let work = KBox::into_raw(work);
        // SAFETY: `work` is valid and ours; `raw` is valid for writes, and
        // `perf_mmap3_defer()` sets `twork`.
        let raw = unsafe { (*work).raw.get() };
        // SAFETY: As above.
        unsafe {
            addr_of_mut!((*raw).provider).write(self.registration.raw.get());
            addr_of_mut!((*raw).func).write(Some(run_callback::<T>));
        }
        // SAFETY: `raw` is set up; on success the kernel owns `work` until
        // it calls `run_callback`, once.
        let ret = unsafe { bindings::perf_mmap3_defer(raw) };
        if ret != 0 {
            // SAFETY: Not queued: `work` is still ours, from `KBox::into_raw`.
            let work = unsafe { KBox::from_raw(work) };
            return Err((KBox::into_inner(work).batch, Error::from_errno(ret)));
        }
        Ok(())
    }
}

/// A deferred batch.
///
/// # Invariants
///
/// `registration` is alive until `batch` has run: `perf_mmap3_unregister()`
/// waits for every work `perf_mmap3_defer()` accepted.
struct Work<T: Provider> {
    raw: Opaque<bindings::perf_mmap3_work>,
    registration: *const Registration<T>,
    batch: T::Batch,
}

/// The function `perf_mmap3_defer()` calls from task_work.
///
/// # Safety
///
/// `raw` is the `raw` field of a `Work<T>` leaked by [`Hook::defer`], and
/// this is called once for it.
unsafe extern "C" fn run_callback<T: Provider>(raw: *mut bindings::perf_mmap3_work) {
    // CAST: `Opaque<T>` is `repr(transparent)`.
    let raw = raw.cast::<Opaque<bindings::perf_mmap3_work>>();
    // SAFETY: `raw` is the `raw` field of a `Work` that `defer` leaked.
    let work: *const Work<T> = unsafe { kernel::container_of!(raw, Work<T>, raw) };
    // SAFETY: That `Work` comes from a `KBox`; the kernel calls this once,
    // handing ownership back.
    let work = KBox::into_inner(unsafe { KBox::from_raw(work.cast_mut()) });
    // SAFETY: By the type invariant of `Work` the registration is alive.
    let provider = unsafe { &(*work.registration).provider };
    work.batch.run(provider);
}
