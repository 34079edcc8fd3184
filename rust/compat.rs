// SPDX-License-Identifier: GPL-2.0

//! What the module takes from the kernel crate: the kernel crate's own
//! abstractions where it has them (Linux 7.3), stand-ins with the same API
//! where it lacks them (Linux 6.12).
//!
//! Kbuild looks for each abstraction in the kernel's sources and passes
//! `--cfg mmap3_kernel_<name>` for those it finds; the rest of the module is
//! written once, against the newest kernel crate, and names these items
//! through this module. The stand-ins offer only what the module uses; the
//! C they need is in `rust/compat.c`.

// The stand-ins below use the prelude; where the kernel needs none of
// them (6.12 without the series) it is unused.
#[allow(unused_imports)]
use kernel::prelude::*;

/// `module!` in the syntax of Linux 7.3 (`authors`, an [`InPlaceModule`]),
/// for kernel crates that take one `author` or a `kernel::Module`.
macro_rules! module {
    (
        type: $type:ident,
        name: $name:tt,
        authors: [$author:tt],
        description: $description:tt,
        license: $license:tt,
    ) => {
        /// What `module!` loads: the module itself, or the box that holds
        /// it in place ([`compat::Loaded`](crate::compat::Loaded)).
        type LoadedModule = $crate::compat::Loaded<$type>;

        #[cfg(mmap3_kernel_module_authors)]
        ::kernel::prelude::module! {
            type: LoadedModule,
            name: $name,
            authors: [$author],
            description: $description,
            license: $license,
        }

        #[cfg(not(mmap3_kernel_module_authors))]
        ::kernel::prelude::module! {
            type: LoadedModule,
            name: $name,
            author: $author,
            description: $description,
            license: $license,
        }
    };
}
pub(crate) use module;

#[cfg(mmap3_kernel_in_place_module)]
pub(crate) use kernel::InPlaceModule;

/// What `module!` loads for the [`InPlaceModule`] `T`: `T` itself.
#[cfg(mmap3_kernel_in_place_module)]
pub(crate) type Loaded<T> = T;

#[cfg(not(mmap3_kernel_in_place_module))]
pub(crate) use in_place::{InPlaceModule, Loaded};

#[cfg(not(mmap3_kernel_in_place_module))]
mod in_place {
    use kernel::{prelude::*, ThisModule};

    /// A module that is pinned and initialised in place
    /// (`kernel::InPlaceModule`).
    pub(crate) trait InPlaceModule: Sync + Send {
        /// The initialiser of the module, run when it is loaded.
        fn init(module: &'static ThisModule) -> impl PinInit<Self, Error>;
    }

    /// What `module!` loads for the [`InPlaceModule`] `T`: the kernel crate
    /// moves the `kernel::Module` it loads, so `T` is initialised in place
    /// in a box, freed at unload.
    pub(crate) struct Loaded<T> {
        _module: Pin<KBox<T>>,
    }

    impl<T: InPlaceModule> kernel::Module for Loaded<T> {
        fn init(module: &'static ThisModule) -> Result<Self> {
            Ok(Loaded {
                _module: KBox::pin_init(T::init(module), GFP_KERNEL)?,
            })
        }
    }
}

/// The bytes of the C string at `ptr`, its NUL included: the kernel's
/// `CStr` is `core::ffi::CStr` where the kernel crate has `CStrExt`, its
/// own type before.
///
/// # Safety
///
/// `ptr` is a C string, alive and unchanged for `'a`.
pub(crate) unsafe fn c_str_with_nul<'a>(ptr: *const kernel::ffi::c_char) -> &'a [u8] {
    // SAFETY: As the caller promises.
    let s = unsafe { kernel::str::CStr::from_char_ptr(ptr) };
    #[cfg(mmap3_kernel_cstr_ext)]
    let bytes = s.to_bytes_with_nul();
    #[cfg(not(mmap3_kernel_cstr_ext))]
    let bytes = s.as_bytes_with_nul();
    bytes
}

#[cfg(mmap3_kernel_fs_file)]
pub(crate) use kernel::fs::File;

#[cfg(not(mmap3_kernel_fs_file))]
pub(crate) use file::File;

#[cfg(not(mmap3_kernel_fs_file))]
mod file {
    use kernel::{bindings, types::Opaque};

    /// A `struct file` (`kernel::fs::File`), borrowed: the module takes no
    /// reference of its own.
    ///
    /// # Invariants
    ///
    /// Instances are valid while borrowed, and no `fdget_pos()` that skipped
    /// `f_pos_lock` is active on them.
    #[repr(transparent)]
    pub(crate) struct File(Opaque<bindings::file>);

    // SAFETY: No `fdget_pos()` without `f_pos_lock` is active on the file
    // (type invariant), so it may move to another task.
    unsafe impl Send for File {}

    // SAFETY: As above, its methods may be called from several tasks at once.
    unsafe impl Sync for File {}

    impl File {
        /// A reference to the file `ptr`.
        ///
        /// # Safety
        ///
        /// `ptr` is a valid file whose reference count stays positive for
        /// `'a`, and any active `fdget_pos()` on it took `f_pos_lock`.
        pub(crate) unsafe fn from_raw_file<'a>(ptr: *const bindings::file) -> &'a File {
            // CAST: `File` is a transparent wrapper of `struct file`.
            // SAFETY: The caller guarantees validity for `'a`.
            // INVARIANT: The caller guarantees the `fdget_pos()` rule.
            unsafe { &*ptr.cast() }
        }

        /// The `struct file`.
        pub(crate) fn as_ptr(&self) -> *mut bindings::file {
            self.0.get()
        }
    }
}

#[cfg(mmap3_kernel_vma)]
pub(crate) use kernel::mm::virt::VmaRef;

#[cfg(not(mmap3_kernel_vma))]
pub(crate) use vma::VmaRef;

#[cfg(not(mmap3_kernel_vma))]
mod vma {
    use kernel::{bindings, types::Opaque};

    /// A `struct vm_area_struct` whose `mmap_lock` (or VMA lock) is held
    /// for reading at least (`kernel::mm::virt::VmaRef`).
    ///
    /// # Invariants
    ///
    /// The lock is held while a `&VmaRef` exists.
    #[repr(transparent)]
    pub(crate) struct VmaRef(Opaque<bindings::vm_area_struct>);

    impl VmaRef {
        /// A reference to the VMA `vma`.
        ///
        /// # Safety
        ///
        /// `vma` is valid, and its lock held for reading at least, for `'a`.
        pub(crate) unsafe fn from_raw<'a>(vma: *const bindings::vm_area_struct) -> &'a Self {
            // CAST: `VmaRef` is a transparent wrapper of `vm_area_struct`.
            // SAFETY: The caller guarantees validity for `'a`.
            // INVARIANT: The caller holds the lock for `'a`.
            unsafe { &*vma.cast() }
        }

        /// The `struct vm_area_struct`.
        pub(crate) fn as_ptr(&self) -> *mut bindings::vm_area_struct {
            self.0.get()
        }
    }
}

/// `Opaque::try_ffi_init()`, for kernel crates without it (the series'
/// provider registration uses it).
#[cfg(all(mmap3_provider, not(mmap3_kernel_opaque_try_ffi_init)))]
pub(crate) trait OpaqueExt<T>: Sized {
    /// An initialiser that calls `init_func` with a pointer to the
    /// uninitialised `T`, and fails when it does.
    fn try_ffi_init<E>(init_func: impl FnOnce(*mut T) -> Result<(), E>) -> impl PinInit<Self, E>;
}

#[cfg(all(mmap3_provider, not(mmap3_kernel_opaque_try_ffi_init)))]
impl<T> OpaqueExt<T> for kernel::types::Opaque<T> {
    fn try_ffi_init<E>(init_func: impl FnOnce(*mut T) -> Result<(), E>) -> impl PinInit<Self, E> {
        // SAFETY: An `Opaque<T>` may hold an uninitialised `T`: whatever
        // `init_func` leaves in it, on success or failure, is a valid one.
        unsafe {
            kernel::init::pin_init_from_closure::<_, E>(move |slot| {
                init_func(kernel::types::Opaque::raw_get(slot))
            })
        }
    }
}

#[cfg(mmap3_kernel_debugfs)]
pub(crate) use kernel::debugfs::Writer;

/// A debugfs directory at the root holding one read-only file that shows
/// `T` with [`Writer`]; both are removed before `T` is dropped.
#[cfg(mmap3_kernel_debugfs)]
pub(crate) type DebugfsFile<T> = kernel::debugfs::Scope<T>;

/// The debugfs directory `dir` at the root holding the read-only file
/// `file` that shows `data`; nothing in debugfs when it cannot be made.
#[cfg(mmap3_kernel_debugfs)]
pub(crate) fn debugfs_file<T: Writer + Send + Sync + 'static>(
    data: T,
    dir: &'static CStr,
    file: &'static CStr,
) -> impl PinInit<DebugfsFile<T>> {
    kernel::debugfs::Scope::dir(data, dir, move |data, scope| {
        scope.read_only_file(file, data)
    })
}

#[cfg(not(mmap3_kernel_debugfs))]
pub(crate) use debugfs::{debugfs_file, DebugfsFile, Writer};

#[cfg(not(mmap3_kernel_debugfs))]
mod debugfs {
    use core::{
        ffi::{c_int, c_void, CStr},
        fmt,
        marker::PhantomPinned,
        ptr::addr_of,
    };
    use kernel::{bindings, prelude::*};

    extern "C" {
        fn mmap3_debugfs_create(dir: *const u8, file: *const u8, show: *const Show) -> *mut c_void;
        fn mmap3_debugfs_remove(dir: *mut c_void);
    }

    /// A value that debugfs shows as text (`kernel::debugfs::Writer`).
    pub(crate) trait Writer {
        /// Formats the value.
        fn write(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result;
    }

    /// `struct mmap3_show` of `rust/compat.c`: what the file shows.
    #[repr(C)]
    struct Show {
        show: unsafe extern "C" fn(seq: *mut c_void, data: *const c_void) -> c_int,
        data: *const c_void,
    }

    /// A debugfs directory at the root holding one read-only file that
    /// shows `T` with [`Writer`]; both are removed before `T` is dropped.
    ///
    /// # Invariants
    ///
    /// `dir` is what `mmap3_debugfs_create()` returned for `show`, whose
    /// `data` is `data`.
    #[pin_data(PinnedDrop)]
    pub(crate) struct DebugfsFile<T> {
        #[pin]
        data: T,
        show: Show,
        dir: *mut c_void,
        #[pin]
        _pin: PhantomPinned,
    }

    // SAFETY: `show` and `dir` point into `self` and to the dentry, which
    // any task may remove; the rest is a `T`.
    unsafe impl<T: Send> Send for DebugfsFile<T> {}

    // SAFETY: Shared references reach `&T` only, from any task (the file is
    // read by any reader).
    unsafe impl<T: Sync> Sync for DebugfsFile<T> {}

    /// The debugfs directory `dir` at the root holding the read-only file
    /// `file` that shows `data`; nothing in debugfs when it cannot be made.
    pub(crate) fn debugfs_file<T: Writer + Send + Sync + 'static>(
        data: T,
        dir: &'static CStr,
        file: &'static CStr,
    ) -> impl PinInit<DebugfsFile<T>> {
        pin_init!(&this in DebugfsFile {
            data,
            show: Show {
                show: show::<T>,
                // SAFETY: Only the address of a field of the slot `this`.
                data: unsafe { addr_of!((*this.as_ptr()).data) }.cast(),
            },
            // INVARIANT: `data` and `show` are initialised (the fields are
            // initialised in this order), and pinned.
            // SAFETY: `dir` and `file` are NUL-terminated strings; `show`
            // and its `data` stay valid until `drop` removes the directory.
            dir: unsafe {
                mmap3_debugfs_create(
                    dir.as_ptr().cast(),
                    file.as_ptr().cast(),
                    addr_of!((*this.as_ptr()).show),
                )
            },
            _pin: PhantomPinned,
        })
    }

    #[pinned_drop]
    impl<T> PinnedDrop for DebugfsFile<T> {
        fn drop(self: Pin<&mut Self>) {
            // SAFETY: `dir` is the directory made for `show` (type
            // invariant); this returns once no reader reads the file.
            unsafe { mmap3_debugfs_remove(self.dir) };
        }
    }

    /// Writes `data` to the `seq_file` `seq`.
    ///
    /// # Safety
    ///
    /// `seq` is the `seq_file` being shown, and `data` the `data` of a
    /// `DebugfsFile<T>` whose directory is not removed yet.
    unsafe extern "C" fn show<T: Writer>(seq: *mut c_void, data: *const c_void) -> c_int {
        struct Seq(*mut bindings::seq_file);

        impl fmt::Write for Seq {
            fn write_str(&mut self, s: &str) -> fmt::Result {
                // SAFETY: `self.0` is the `seq_file` being shown; `s` is
                // valid for `s.len()` bytes. A `seq_file` that overflows
                // is shown again with a larger buffer.
                unsafe { bindings::seq_write(self.0, s.as_ptr().cast(), s.len()) };
                Ok(())
            }
        }

        struct Adapter<'a, T>(&'a T);

        impl<T: Writer> fmt::Display for Adapter<'_, T> {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                self.0.write(f)
            }
        }

        // SAFETY: `data` is the `data` of a live `DebugfsFile<T>`.
        let data = unsafe { &*data.cast::<T>() };
        // `Seq` does not fail, nor do the writers.
        let _ = fmt::write(&mut Seq(seq.cast()), format_args!("{}", Adapter(data)));
        0
    }
}
