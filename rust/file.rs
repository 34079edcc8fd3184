// SPDX-License-Identifier: GPL-2.0

//! Safe wrappers over the mapping and file the hook is given.

use core::{ffi::c_void, ptr::NonNull};
use kernel::{bindings, prelude::*, types::Opaque};

// `struct file` is passed as `void *`: bindgen renders some of its members
// as zero-sized structs, which the `improper_ctypes` lint rejects.
extern "C" {
    fn mmap3_get_file(file: *mut c_void);
    fn mmap3_file_identity(file: *mut c_void, id: *mut Identity);
    fn mmap3_sb_register(file: *mut c_void) -> u64;
    fn mmap3_sbs_init() -> core::ffi::c_int;
    fn mmap3_sbs_exit();
    fn mmap3_assert_no_mmap_lock();
    fn mmap3_file_read(
        file: *mut c_void,
        pos: i64,
        buf: *mut u8,
        len: usize,
        may_io: bool,
    ) -> isize;
    fn mmap3_serves_fuse() -> bool;
    static mmap3_identity_size: usize;
}

/// How a read may get the file's bytes.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum ReadMode {
    /// From the page cache only, never waiting for I/O (`EAGAIN` when a
    /// page is not there): allowed under `mmap_lock`.
    Cached,
    /// Through the page cache, reading what is missing (may sleep): never
    /// under `mmap_lock`.
    Io,
}

/// Reads `buf.len()` bytes at `offset` through the page cache, as the
/// kernel's own build-id reader does: no fsnotify event, no atime update,
/// no permission check against the current credentials, and the same for
/// files opened with `O_DIRECT`. Returns the bytes read, short at the end
/// of the file.
///
/// # Safety
///
/// `file` is a valid `struct file`, and `mmap_lock` is not held when `mode`
/// is [`ReadMode::Io`].
unsafe fn read_at(file: *mut c_void, offset: u64, buf: &mut [u8], mode: ReadMode) -> Result<usize> {
    let pos = i64::try_from(offset).map_err(|_| EINVAL)?;
    // SAFETY: `file` is valid (the caller); `buf` is valid for writes of
    // `buf.len()` bytes; the caller holds no `mmap_lock` for I/O.
    let n =
        unsafe { mmap3_file_read(file, pos, buf.as_mut_ptr(), buf.len(), mode == ReadMode::Io) };
    usize::try_from(n).map_err(|_| Error::from_errno(n as i32))
}

/// Whether the current task holds an open `/dev/fuse`, i.e. may be the
/// server that a read from a FUSE file would wait for.
pub(crate) fn serves_fuse() -> bool {
    // SAFETY: Looks at the current task's open files, under their lock.
    unsafe { mmap3_serves_fuse() }
}

/// A `struct vm_area_struct` seen by the hook, under `mmap_lock`.
///
/// # Invariants
///
/// The wrapped VMA is valid, and its `vm_file` stable, while a `&Vma` exists.
#[repr(transparent)]
pub(crate) struct Vma(Opaque<bindings::vm_area_struct>);

impl Vma {
    /// Wraps the VMA the kernel passed to the hook.
    ///
    /// # Safety
    ///
    /// `ptr` is a valid VMA whose `mmap_lock` is held for `'a`.
    pub(crate) unsafe fn from_raw<'a>(ptr: *mut bindings::vm_area_struct) -> &'a Self {
        // CAST: `Vma` is a transparent wrapper of `vm_area_struct`.
        // SAFETY: The caller guarantees validity for `'a`.
        unsafe { &*ptr.cast::<Self>() }
    }

    /// The mapped file, if any.
    pub(crate) fn file(&self) -> Option<&File> {
        // SAFETY: By the type invariant the VMA is valid and `vm_file` stable.
        let file = unsafe { (*self.0.get()).vm_file };
        // CAST: `File` is a transparent wrapper of `struct file`.
        // SAFETY: The VMA holds a reference on its file while it exists.
        NonNull::new(file).map(|f| unsafe { &*f.as_ptr().cast::<File>() })
    }
}

/// A `struct file` that is kept alive by someone else (a VMA) while borrowed.
#[repr(transparent)]
pub(crate) struct File(Opaque<bindings::file>);

/// What identifies a file and its version, read without I/O.
///
/// Mirrors `struct mmap3_identity` in `rust/helpers.h`; [`check_abi`] checks
/// the sizes agree.
#[repr(C)]
#[derive(Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Identity {
    /// Inode number.
    pub(crate) ino: u64,
    /// The module's serial of the file system instance (the superblock),
    /// never reused; 0 until [`File::register_sb`] numbers it.
    pub(crate) sb: u64,
    /// The inode's change counter (`i_version`), queried: it grows with
    /// any later change of the file's data or metadata. 0 unless
    /// [`Identity::versioned`].
    pub(crate) change: u64,
    /// Size in bytes.
    pub(crate) size: i64,
    /// Change time in nanoseconds.
    pub(crate) ctime_ns: i64,
    /// Inode generation.
    pub(crate) generation: u32,
    /// File type and permissions (`i_mode`).
    pub(crate) mode: u32,
    /// Magic number of the file system (`s_magic`).
    pub(crate) fs_magic: core::ffi::c_ulong,
    /// Whether the file system keeps `i_version` (`IS_I_VERSION()`).
    pub(crate) versioned: bool,
    /// Whether the file is open for writing or mapped shared and writable.
    pub(crate) writers: bool,
    /// A kernel-internal file (`S_PRIVATE`): shared anonymous memory, SysV
    /// shared memory.
    pub(crate) private: bool,
}

/// Fails when `Identity` and its C twin disagree.
pub(crate) fn check_abi() -> Result {
    // SAFETY: A constant defined by `rust/helpers.c`.
    if unsafe { mmap3_identity_size } != core::mem::size_of::<Identity>() {
        return Err(EINVAL);
    }
    Ok(())
}

impl File {
    /// The file's identity and version, from its inode, without I/O.
    pub(crate) fn identity(&self) -> Identity {
        let mut id = Identity::default();
        // SAFETY: The file is valid while borrowed; `id` is a valid `mmap3_identity`.
        unsafe { mmap3_file_identity(self.0.get().cast(), &mut id) };
        id
    }

    /// Numbers the file's superblock (see [`Identity::sb`]) if it is not
    /// yet; may sleep and allocate, once per superblock. `None` without
    /// memory for it.
    pub(crate) fn register_sb(&self) -> Option<u64> {
        // SAFETY: The file is valid while borrowed, and keeps its superblock
        // alive.
        let serial = unsafe { mmap3_sb_register(self.0.get().cast()) };
        (serial != 0).then_some(serial)
    }

    /// Reads from the page cache only; see [`ReadMode::Cached`].
    pub(crate) fn read_cached(&self, offset: u64, buf: &mut [u8]) -> Result<usize> {
        // SAFETY: The file is valid while borrowed; no I/O is done.
        unsafe { read_at(self.0.get().cast(), offset, buf, ReadMode::Cached) }
    }

    /// Takes a reference on the file, so that it outlives the mapping.
    pub(crate) fn pin(&self) -> PinnedFile {
        // SAFETY: The file is valid while borrowed; `get_file()` takes a reference.
        unsafe { mmap3_get_file(self.0.get().cast()) };
        // INVARIANT: We own the reference `get_file()` took.
        PinnedFile(NonNull::from(self).cast())
    }
}

/// A reference to a `struct file`, dropped with `fput()`.
///
/// # Invariants
///
/// The pointer is valid and we own one reference on the file.
pub(crate) struct PinnedFile(NonNull<bindings::file>);

// SAFETY: A file reference may be used and dropped (`fput()`) from any task.
unsafe impl Send for PinnedFile {}

impl PinnedFile {
    /// The file's identity and version, from its inode, without I/O.
    pub(crate) fn identity(&self) -> Identity {
        let mut id = Identity::default();
        // SAFETY: By the type invariant the file is valid.
        unsafe { mmap3_file_identity(self.0.as_ptr().cast(), &mut id) };
        id
    }

    /// [`File::register_sb`] for the pinned file.
    pub(crate) fn register_sb(&self) -> Option<u64> {
        // SAFETY: By the type invariant the file is valid, and it keeps its
        // superblock alive.
        let serial = unsafe { mmap3_sb_register(self.0.as_ptr().cast()) };
        (serial != 0).then_some(serial)
    }

    /// Reads through the page cache, waiting for I/O; see [`ReadMode::Io`].
    /// Must not be called under `mmap_lock` (checked with lockdep).
    pub(crate) fn read_at(&self, offset: u64, buf: &mut [u8]) -> Result<usize> {
        // SAFETY: Only looks at the current task's `mmap_lock` (lockdep).
        unsafe { mmap3_assert_no_mmap_lock() };
        // SAFETY: By the type invariant the file is valid; no `mmap_lock`
        // is held (the contract of this function, checked above).
        unsafe { read_at(self.0.as_ptr().cast(), offset, buf, ReadMode::Io) }
    }
}

impl Drop for PinnedFile {
    fn drop(&mut self) {
        // SAFETY: By the type invariant we own a reference.
        unsafe { bindings::fput(self.0.as_ptr()) };
    }
}

/// The numbering of superblocks behind [`Identity::sb`], from load to
/// unload: dropped once no hook runs, it forgets every serial.
pub(crate) struct Superblocks(());

impl Superblocks {
    pub(crate) fn new() -> Result<Self> {
        // SAFETY: Called once, at load, before the provider is registered.
        kernel::error::to_result(unsafe { mmap3_sbs_init() })?;
        Ok(Superblocks(()))
    }
}

impl Drop for Superblocks {
    fn drop(&mut self) {
        // SAFETY: `new` succeeded, and the provider is unregistered (the
        // module drops its registration first): nothing registers any more.
        unsafe { mmap3_sbs_exit() };
    }
}
