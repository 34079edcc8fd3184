// SPDX-License-Identifier: GPL-2.0

//! Safe wrappers over the PERF_RECORD_MMAP3 provider API of the patched
//! kernel (`include/linux/perf_event.h`): registration, the lookup under
//! `mmap_lock`, and the read the kernel defers to the way back to user
//! space. The kernel writes the records.

#[cfg(not(mmap3_kernel_opaque_try_ffi_init))]
use crate::compat::OpaqueExt as _;
use crate::compat::{File, VmaRef};
use crate::file::UnlockedFile;
use kernel::{bindings, error::to_result, prelude::*, types::Opaque, ThisModule};

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

/// Each status is the uapi's, and [`Status::from_u8`] knows them all.
macro_rules! assert_uapi {
    ($($variant:ident = $c:ident),* $(,)?) => {
        const _: () = {
            $(assert!(Status::$variant as u32 == bindings::$c);)*
        };

        impl Status {
            /// The status whose number is `n`, if any.
            pub(crate) const fn from_u8(n: u8) -> Option<Status> {
                $(if n == Status::$variant as u8 {
                    return Some(Status::$variant);
                })*
                None
            }
        }
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

/// Where the provider writes its answer for one mapping: the build-id part
/// of the record, zeroed by the kernel before the call.
#[repr(transparent)]
pub(crate) struct BuildIdOut(bindings::perf_mmap3_build_id);

impl BuildIdOut {
    /// Answers [`Status::Found`] with the first `len` bytes of `build_id`,
    /// which is zero past them: at most 20 bytes, the longest the record
    /// holds (a longer one is [`Status::Malformed`] to the parser already).
    /// A copy of a fixed size, not of a length known at run time.
    pub(crate) fn found(&mut self, build_id: &[u8; 20], len: u8) {
        self.0.data = *build_id;
        self.0.size = len.min(20);
        self.0.status = Status::Found as u8;
    }

    /// Answers a status without a build-id (the kernel zeroed the rest).
    pub(crate) fn missing(&mut self, status: Status) {
        self.0.size = 0;
        self.0.status = status as u8;
    }
}

/// The build-id could not be found without reading the file: the kernel
/// pins it and calls [`Provider::read`] on the way back to user space.
pub(crate) struct Defer;

/// What the module does with each mapping.
pub(crate) trait Provider: Sized + Send + Sync + 'static {
    /// Called for each mapping that an existing mmap3 event records, under
    /// `mmap_lock` and in an RCU read-side critical section: must not
    /// sleep, nor read the file.
    fn lookup(&self, vma: &VmaRef, out: &mut BuildIdOut) -> Result<(), Defer>;

    /// Called for a file [`Provider::lookup`] deferred, in the mapping task
    /// before it returns to user space, with no lock held: may sleep and
    /// read.
    fn read(&self, file: UnlockedFile<'_>, out: &mut BuildIdOut);
}

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
    pub(crate) fn new(module: &'static ThisModule, provider: T) -> impl PinInit<Self, Error> {
        try_pin_init!(Self {
            provider,
            raw <- Opaque::try_ffi_init(move |slot: *mut bindings::perf_mmap3_provider| {
                // SAFETY: `slot` is valid for writes; `nr_deferred` is set
                // by `perf_mmap3_register()`.
                unsafe {
                    slot.write(bindings::perf_mmap3_provider {
                        owner: module.as_ptr(),
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
    // CAST: `BuildIdOut` is a transparent wrapper of `perf_mmap3_build_id`.
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
    // CAST: `BuildIdOut` is a transparent wrapper of `perf_mmap3_build_id`.
    // SAFETY: `id` is valid and not otherwise accessed during the call.
    let out = unsafe { &mut *id.cast::<BuildIdOut>() };
    registration.provider.read(file, out);
}
