// SPDX-License-Identifier: GPL-2.0

//! Safe wrappers over the mapping and file the hook is given.

use crate::buildid::{Bytes, FETCH_MAX};
use crate::compat::{File, VmaRef};
use core::{ffi::c_void, marker::PhantomData, mem::MaybeUninit, ops::Deref, ptr::NonNull};
use kernel::prelude::*;

// `struct file` is passed as `void *`: bindgen renders some of its members
// as zero-sized structs, which the `improper_ctypes` lint rejects.
extern "C" {
    fn mmap3_file_identity(file: *mut c_void, id: *mut Identity);
    fn mmap3_file_unchanged(file: *mut c_void, id: *const Identity) -> bool;
    fn mmap3_sb_find(file: *mut c_void) -> u64;
    fn mmap3_sb_register(file: *mut c_void) -> u64;
    fn mmap3_sbs_init() -> core::ffi::c_int;
    fn mmap3_sbs_exit();
    fn mmap3_assert_no_mmap_lock();
    fn mmap3_fetch(reader: *mut Reader, pos: i64, len: usize, bytes: *mut *const u8) -> isize;
    fn mmap3_read_done(reader: *mut Reader);
    fn mmap3_serves_fuse() -> bool;
    static mmap3_identity_size: usize;
    static mmap3_reader_size: usize;
}

/// `struct mmap3_reader` of `rust/helpers.h`; [`check_abi`] checks the sizes
/// agree.
#[repr(C)]
struct Reader {
    file: *mut c_void,
    folio: *mut c_void,
    addr: *const c_void,
    start: i64,
    end: i64,
    size: i64,
    // Written by `mmap3_fetch()` before it is read; 8-aligned, as `size`.
    buf: MaybeUninit<[u8; FETCH_MAX]>,
    may_io: bool,
}

/// Reads a file through the page cache, as the kernel's own build-id
/// reader does: no fsnotify event, no atime update, no permission check
/// against the current credentials, and the same for files opened with
/// `O_DIRECT`. Keeps the last folio it read from (a reference), and the page
/// of it that it mapped, for the next read, until dropped; the file's size
/// is the one at the first read.
pub(crate) struct PageReader<'a> {
    reader: Reader,
    _file: PhantomData<&'a File>,
}

impl PageReader<'_> {
    /// # Safety
    ///
    /// No `mmap_lock` is held while the result exists when `may_io` is set.
    unsafe fn new(file: &File, may_io: bool) -> Self {
        PageReader {
            reader: Reader {
                file: file.as_ptr().cast(),
                folio: core::ptr::null_mut(),
                addr: core::ptr::null(),
                start: 0,
                end: 0,
                // Read at the first read.
                size: -1,
                buf: MaybeUninit::uninit(),
                may_io,
            },
            _file: PhantomData,
        }
    }

    /// Returns the `len` bytes (at most [`FETCH_MAX`]) at `offset`, fewer at
    /// the end of the file. Without I/O, `EAGAIN` when a page is not in the
    /// page cache.
    pub(crate) fn fetch(&mut self, offset: u64, len: usize) -> Result<Fetched<'_>> {
        let pos = i64::try_from(offset).map_err(|_| EINVAL)?;
        let mut ptr = core::ptr::null();
        // SAFETY: `reader.file` is valid while the borrow of the file lasts
        // (`'a`), `reader.folio` is null or a reference the reader holds,
        // `reader.addr` null or its page mapped; `ptr` is valid for a write;
        // no `mmap_lock` is held with `may_io` (the constructor's contract).
        let n = unsafe { mmap3_fetch(&mut self.reader, pos, len, &mut ptr) };
        let count = usize::try_from(n).map_err(|_| Error::from_errno(n as i32))?;
        Ok(Fetched {
            ptr,
            count,
            _reader: PhantomData,
        })
    }
}

/// Bytes of a file that [`PageReader::fetch`] returned, in the page the
/// reader keeps mapped or in its buffer: valid while the reader is borrowed,
/// for the next fetch or the drop would unmap the page or overwrite the
/// buffer. The page may be written meanwhile (`write()`, a shared mapping),
/// so each byte is read with a volatile load, as `READ_ONCE()` reads.
pub(crate) struct Fetched<'a> {
    ptr: *const u8,
    count: usize,
    _reader: PhantomData<&'a mut Reader>,
}

impl Fetched<'_> {
    /// A pointer to the `n` bytes at `off`, if they are all within.
    #[inline(always)]
    fn at(&self, off: usize, n: usize) -> Option<*const u8> {
        if off.checked_add(n)? > self.count {
            return None;
        }
        // SAFETY: `off + n <= count`, and `ptr` points at `count` bytes.
        Some(unsafe { self.ptr.add(off) })
    }
}

impl Bytes for Fetched<'_> {
    #[inline]
    fn count(&self) -> usize {
        self.count
    }

    #[inline(always)]
    fn load<const N: usize>(&self, off: usize) -> Option<[u8; N]> {
        let p = self.at(off, N)?;
        // A field at its natural alignment, as ELF lays them out: one load.
        macro_rules! aligned {
            ($t:ty) => {
                if N == core::mem::size_of::<$t>() && p.align_offset(N) == 0 {
                    // SAFETY: `p` points at `N` bytes within those fetched,
                    // valid for reads while the reader is borrowed (`'a`,
                    // see the type), aligned for `$t`, which is `N` bytes.
                    let v = unsafe { p.cast::<$t>().read_volatile() };
                    return v.to_ne_bytes().as_slice().try_into().ok();
                }
            };
        }
        aligned!(u16);
        aligned!(u32);
        aligned!(u64);
        // SAFETY: As above; `[u8; N]` needs no alignment.
        Some(unsafe { p.cast::<[u8; N]>().read_volatile() })
    }

    #[inline]
    fn copy_to(&self, off: usize, dst: &mut [u8]) -> Option<()> {
        self.at(off, dst.len())?;
        // Four bytes at a time (a note's descriptor is 4-aligned), then the
        // rest; all within, checked above.
        let mut words = dst.chunks_exact_mut(4);
        let mut at = off;
        for w in &mut words {
            w.copy_from_slice(&self.load::<4>(at)?);
            at += 4;
        }
        for d in words.into_remainder() {
            *d = self.load::<1>(at)?[0];
            at += 1;
        }
        Some(())
    }
}

impl Drop for PageReader<'_> {
    fn drop(&mut self) {
        // SAFETY: Unmaps the page and drops the folio reference the reader
        // holds, if any.
        unsafe { mmap3_read_done(&mut self.reader) };
    }
}

/// Whether the current task holds an open `/dev/fuse`, i.e. may be the
/// server that a read from a FUSE file would wait for.
pub(crate) fn serves_fuse() -> bool {
    // SAFETY: Looks at the current task's open files, under their lock.
    unsafe { mmap3_serves_fuse() }
}

/// The mapped file of a VMA.
pub(crate) trait VmaFile {
    /// The mapped file, if any.
    fn file(&self) -> Option<&File>;
}

impl VmaFile for VmaRef {
    fn file(&self) -> Option<&File> {
        // SAFETY: The VMA is valid and its lock held (type invariant of
        // `VmaRef`): `vm_file` is stable.
        let file = NonNull::new(unsafe { (*self.as_ptr()).vm_file })?;
        // SAFETY: The VMA holds a reference on its file while it exists,
        // which is longer than `&self`. That reference also makes any
        // `fdget_pos()` on the file take `f_pos_lock` (its count is above 1
        // whenever the file is in a file table as well).
        Some(unsafe { File::from_raw_file(file.as_ptr()) })
    }
}

/// What identifies a file and its version, read without I/O.
///
/// Mirrors `struct mmap3_identity` in `rust/helpers.h`; [`check_abi`] checks
/// the sizes agree.
#[repr(C)]
#[derive(Clone, Copy)]
pub(crate) struct Identity {
    /// Inode number.
    pub(crate) ino: u64,
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

/// Fails when `Identity` or `Reader` and its C twin disagree.
fn check_abi() -> Result {
    // SAFETY: A constant defined by `rust/helpers.c`.
    if unsafe { mmap3_identity_size } != core::mem::size_of::<Identity>() {
        return Err(EINVAL);
    }
    // SAFETY: A constant defined by `rust/helpers.c`.
    if unsafe { mmap3_reader_size } != core::mem::size_of::<Reader>() {
        return Err(EINVAL);
    }
    Ok(())
}

/// What the module reads of a file: its identity, its superblock's
/// serial, and what the page cache holds of its bytes.
pub(crate) trait FileExt {
    /// The file's identity and version, from its inode, without I/O.
    fn identity(&self) -> Identity;

    /// Whether the file had no writer when its identity was `id`, has none
    /// now, and its identity is still `id`: what [`FileExt::identity`] would
    /// give now equals `id`. Cheaper than reading the identity again.
    fn unchanged(&self, id: &Identity) -> bool;

    /// The module's serial of the file's file system instance (its
    /// superblock), never reused: `None` until [`FileExt::register_sb`]
    /// numbers it. A lookup without a lock (RCU).
    fn sb_serial(&self) -> Option<u64>;

    /// Numbers the file's superblock (see [`FileExt::sb_serial`]) if it is
    /// not yet; may sleep and allocate, once per superblock. `None` without
    /// memory for it.
    fn register_sb(&self) -> Option<u64>;

    /// A reader of the bytes the page cache holds, never waiting for I/O
    /// (`EAGAIN` when a page is not there): allowed under `mmap_lock`.
    fn cached_reader(&self) -> PageReader<'_>;
}

impl FileExt for File {
    fn identity(&self) -> Identity {
        let mut id = core::mem::MaybeUninit::<Identity>::uninit();
        // SAFETY: The file is valid while borrowed; `id` has the size and
        // alignment of a `mmap3_identity` (`check_abi`), which
        // `mmap3_file_identity()` writes field by field, every field, its
        // `bool`s as 0 or 1: after it, `id` holds a valid `Identity`.
        unsafe {
            mmap3_file_identity(self.as_ptr().cast(), id.as_mut_ptr());
            id.assume_init()
        }
    }

    fn unchanged(&self, id: &Identity) -> bool {
        // SAFETY: The file is valid while borrowed; `id` is a valid `mmap3_identity`.
        unsafe { mmap3_file_unchanged(self.as_ptr().cast(), id) }
    }

    fn sb_serial(&self) -> Option<u64> {
        // SAFETY: The file is valid while borrowed, and keeps its superblock
        // alive.
        let serial = unsafe { mmap3_sb_find(self.as_ptr().cast()) };
        (serial != 0).then_some(serial)
    }

    fn register_sb(&self) -> Option<u64> {
        // SAFETY: The file is valid while borrowed, and keeps its superblock
        // alive.
        let serial = unsafe { mmap3_sb_register(self.as_ptr().cast()) };
        (serial != 0).then_some(serial)
    }

    fn cached_reader(&self) -> PageReader<'_> {
        // SAFETY: No I/O.
        unsafe { PageReader::new(self, false) }
    }
}

/// A file the kernel pinned for the read it deferred past the mapping,
/// borrowed for that read, which runs with no lock held.
#[derive(Clone, Copy)]
pub(crate) struct UnlockedFile<'a>(&'a File);

impl<'a> UnlockedFile<'a> {
    /// `file`, to be read with [`UnlockedFile::read_at`].
    ///
    /// # Safety
    ///
    /// No `mmap_lock` is held while the result exists.
    pub(crate) unsafe fn new(file: &'a File) -> Self {
        UnlockedFile(file)
    }

    /// A reader through the page cache that reads what is missing (may
    /// sleep). Must not be called under `mmap_lock` (checked with lockdep).
    pub(crate) fn reader(&self) -> PageReader<'a> {
        // SAFETY: Only looks at the current task's `mmap_lock` (lockdep).
        unsafe { mmap3_assert_no_mmap_lock() };
        // SAFETY: No `mmap_lock` is held (the type's invariant, checked
        // above), and the reader lives no longer than the borrow `'a`,
        // during which the invariant holds.
        unsafe { PageReader::new(self.0, true) }
    }
}

impl Deref for UnlockedFile<'_> {
    type Target = File;

    fn deref(&self) -> &File {
        self.0
    }
}

/// The numbering of superblocks behind [`FileExt::sb_serial`], from load to
/// unload: dropped once no hook runs, it forgets every serial.
pub(crate) struct Superblocks(());

impl Superblocks {
    /// Starts numbering, once the C helpers are found to agree on
    /// [`Identity`].
    pub(crate) fn new() -> Result<Self> {
        check_abi()?;
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
