// SPDX-License-Identifier: GPL-2.0

//! The probe's deferral, on kernels without the series' FIFO (and beside
//! it, for the trace event): the mappings of a task whose file must be
//! read, and those that follow them, wait in the task's FIFO until its
//! way back to user space, where a task_work reads the files, with no lock
//! held, and emits the events in mapping order.
//!
//! A task's FIFO is found by the task's address in a tree (only the task
//! itself adds to its FIFO or takes it out): nothing is added to
//! `task_struct`, and no task_work list is walked. Nothing under
//! `mmap_lock` waits for reclaim: the FIFO and its entries are allocated
//! with `GFP_NOWAIT`. Without memory the event is emitted at once,
//! `IO_ERROR` where the file was to be read; a task that will not return
//! to user space (exiting, or a kernel thread) gets `SKIPPED` there, at
//! once or from its FIFO at exit.

use crate::answer::{BuildIdOut, Provider};
use crate::compat::{File, VmaRef};
use crate::file::{UnlockedFile, VmaFile as _};
use crate::status::Missing;
use crate::sync::atomic::{Atomic, Relaxed};
use core::ffi::{c_int, c_void};
use core::ptr::{addr_of_mut, NonNull};
use kernel::bindings;
use kernel::ffi::c_char;
use kernel::prelude::*;
use kernel::rbtree::{RBTree, RBTreeNodeReservation};
use kernel::sync::{CondVar, SpinLock};
use kernel::{new_condvar, new_spinlock};

extern "C" {
    fn mmap3_trace(m: *const Mapping);
    fn mmap3_task_work_add(
        work: *mut bindings::callback_head,
        func: unsafe extern "C" fn(*mut bindings::callback_head),
    ) -> c_int;
    fn mmap3_current_state() -> c_int;
    fn mmap3_file_get(file: *mut c_void);
    fn mmap3_file_put(file: *mut c_void);
}

/// `struct mmap3_mapping` of `rust/helpers.h`: one mapping as the trace
/// event shows it, filled by the probe (`rust/probe.c`) but for `id`.
#[repr(C)]
pub(crate) struct Mapping {
    addr: u64,
    len: u64,
    pgoff: u64,
    ino: u64,
    ino_generation: u64,
    time: u64,
    pid: u32,
    tid: u32,
    maj: u32,
    min: u32,
    prot: u32,
    flags: u32,
    id: BuildIdOut,
    name: *const c_char,
}

impl Mapping {
    /// Emits the trace event for this mapping.
    fn emit(&self) {
        // SAFETY: `self` is a whole mapping, whose `name` is a C string
        // alive during the call (the probe's, or a `Pending`'s copy).
        unsafe { mmap3_trace(self) };
    }
}

/// Allocations under `mmap_lock`: no wait for reclaim, and no warning
/// (the event goes out without the deferral, and says so).
fn nowait() -> kernel::alloc::Flags {
    GFP_NOWAIT | __GFP_NOWARN
}

/// What `current` is about to do, as `mmap3_current_state()` says.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Way {
    /// It returns to user space: a task_work added now runs on the way.
    Returns,
    /// A fatal signal is pending: it is exiting, or about to.
    Dying,
    /// Exiting, or a kernel thread: it never returns to user space.
    Never,
}

fn way() -> Way {
    // SAFETY: Reads only `current`'s flags and signals.
    match unsafe { mmap3_current_state() } {
        0 => Way::Returns,
        1 => Way::Dying,
        _ => Way::Never,
    }
}

/// Answers `SKIPPED` for a read that failed (`IO_ERROR`) in a task that
/// never returns to user space: its death cut the read short, which says
/// nothing of the file. For both ways in: this FIFO's reads, and the reads
/// the kernel asks of the provider (`rust/provider.rs`).
pub(crate) fn skip_if_cut_short(id: &mut BuildIdOut) {
    if id.is(Missing::IoError) && way() != Way::Returns {
        id.replace(Missing::Skipped);
    }
}

/// The key of `current` in the tree of FIFOs: its address, which no other
/// task has while it lives (and a task's FIFO goes before it exits).
fn current_key() -> usize {
    core::ptr::from_ref::<kernel::task::Task>(&*kernel::current!()) as usize
}

/// A reference on a mapped file, taken under `mmap_lock` for the read
/// after it (the mapping's own reference may go first).
///
/// # Invariants
///
/// Holds a reference on the file it points to.
struct PinnedFile(NonNull<File>);

// SAFETY: A file reference may be dropped on any task (`fput()` defers
// the last one as needed).
unsafe impl Send for PinnedFile {}

impl PinnedFile {
    fn new(file: &File) -> Self {
        // SAFETY: `file` is a live file; this takes a reference of our own.
        unsafe { mmap3_file_get(file.as_ptr().cast()) };
        // INVARIANT: The reference just taken.
        Self(NonNull::from(file))
    }

    fn file(&self) -> &File {
        // SAFETY: We hold a reference on the file (type invariant).
        unsafe { self.0.as_ref() }
    }
}

impl Drop for PinnedFile {
    fn drop(&mut self) {
        // SAFETY: Drops the reference `new` took (type invariant).
        unsafe { mmap3_file_put(self.file().as_ptr().cast()) };
    }
}

/// A mapping waiting in its task's FIFO: answered already, or with its
/// file to read.
struct Pending {
    m: Mapping,
    /// The mapping's name, NUL-terminated (the probe's buffer is per CPU).
    name: KVec<u8>,
    file: Option<PinnedFile>,
}

// SAFETY: `m.name` is the only pointer in `m`, and it is set from `name`
// (owned) at emit time; the rest is plain data and a file reference.
unsafe impl Send for Pending {}

impl Pending {
    /// A copy of `m`, with `file` pinned to read unless it is `None`;
    /// `None` without memory.
    fn new(m: &Mapping, file: Option<&File>) -> Option<Self> {
        // SAFETY: The probe's `m.name` is a C string, alive during the probe.
        let bytes = unsafe { crate::compat::c_str_with_nul(m.name) };
        let mut name = KVec::with_capacity(bytes.len(), nowait()).ok()?;
        name.extend_from_slice(bytes, nowait()).ok()?;
        Some(Self {
            // SAFETY: `Mapping` is plain data, so a bitwise copy is a copy;
            // its `name` is set from `name` before any use.
            m: unsafe { core::ptr::read(m) },
            name,
            file: file.map(PinnedFile::new),
        })
    }

    /// Emits the event now, the file not read: `status` in place of the
    /// answer it was to give (the file's reference goes).
    fn emit_unread(mut self, status: Missing) {
        if self.file.take().is_some() {
            self.m.id.replace(status);
        }
        self.emit_named();
    }

    /// On current's way back to user space (or at its exit), with no lock
    /// held: reads the file, if any, and emits the event. A task on its
    /// way out never returns to user space: what it did not read is
    /// `SKIPPED` (a fatal signal also cuts a read short).
    fn emit(mut self, provider: &crate::Mmap3Provider) {
        if let Some(pinned) = self.file.take() {
            if way() != Way::Returns {
                self.m.id.replace(Missing::Skipped);
            } else {
                self.m.id.replace(Missing::IoError);
                // SAFETY: A task_work runs with no lock held.
                let file = unsafe { UnlockedFile::new(pinned.file()) };
                provider.read(file, &mut self.m.id);
                skip_if_cut_short(&mut self.m.id);
            }
        }
        self.emit_named();
    }

    fn emit_named(mut self) {
        self.m.name = self.name.as_ptr().cast();
        self.m.emit();
    }
}

/// The FIFOs of the tasks with deferred mappings, by task.
type Tree = RBTree<usize, KVec<Pending>>;

/// The probe's deferral: the FIFOs, and what module exit waits for.
///
/// # Invariants
///
/// `queued` is the number of task_works added and not yet done; it is
/// written only with `fifos` locked. Once used, `provider` points at the
/// provider of the `Event` this is in, which outlives every use.
#[pin_data]
pub(crate) struct Fifos {
    #[pin]
    fifos: SpinLock<Tree>,
    #[pin]
    idle: CondVar,
    queued: Atomic<u64>,
    /// Whether a task_work was ever added: module exit then waits for
    /// RCU Tasks (`mmap3_event_exit()`).
    used: Atomic<bool>,
    provider: *const crate::Mmap3Provider,
}

// SAFETY: `provider` is shared, and `Mmap3Provider` is `Sync`.
unsafe impl Send for Fifos {}
// SAFETY: As above; the rest is locked or atomic.
unsafe impl Sync for Fifos {}

/// The task_work of one task's FIFO: which [`Fifos`] it is in.
#[repr(C)]
struct Work {
    head: bindings::callback_head,
    fifos: *const Fifos,
}

impl Fifos {
    /// No FIFO yet; no provider yet ([`Fifos::set_provider`]).
    pub(crate) fn new() -> impl PinInit<Self> {
        pin_init!(Self {
            fifos <- new_spinlock!(RBTree::new(), "mmap3_fifos"),
            idle <- new_condvar!("mmap3_fifos_idle"),
            queued: Atomic::new(0),
            used: Atomic::new(false),
            provider: core::ptr::null(),
        })
    }

    /// The provider that the lookups and the reads ask, before any.
    pub(crate) fn set_provider(&mut self, provider: &crate::Mmap3Provider) {
        // INVARIANT: The caller keeps it alive as long as `self` is used.
        self.provider = provider;
    }

    fn provider(&self) -> &crate::Mmap3Provider {
        // SAFETY: Alive while `self` is used (type invariant).
        unsafe { &*self.provider }
    }

    /// Whether a task_work was ever added.
    pub(crate) fn used(&self) -> bool {
        self.used.load(Relaxed)
    }

    /// One executable mapping, at `perf_event_mmap()`'s entry, under
    /// `mmap_lock` and not to sleep: `m` as the probe described it.
    /// Looked up; emitted at once when answered and `current` has no FIFO,
    /// else queued on it.
    pub(crate) fn mapping(&self, vma: &VmaRef, m: &mut Mapping) {
        let deferred = self.provider().lookup(vma, &mut m.id).is_err();
        // A task's own FIFO keeps `queued` above zero from its creation,
        // by this task, until its task_work is done: zero means none.
        if !deferred && self.queued.load(Relaxed) == 0 {
            m.emit();
            return;
        }
        let key = current_key();
        let has_fifo = self.fifos.lock().get(&key).is_some();
        if !deferred && !has_fifo {
            m.emit();
            return;
        }
        let file = if deferred { vma.file() } else { None };
        let Some(pending) = Pending::new(m, file) else {
            if deferred {
                m.id.replace(Missing::IoError);
            }
            m.emit();
            return;
        };
        if let Some(pending) = self.defer(key, has_fifo, pending) {
            pending.emit_unread(match way() {
                Way::Returns => Missing::IoError,
                Way::Dying | Way::Never => Missing::Skipped,
            });
        }
    }

    /// Queues `pending` on current's FIFO (`key`), making the FIFO and its
    /// task_work unless `has_fifo`. Gives `pending` back when it cannot
    /// be queued: no memory, or current will not return to user space.
    fn defer(&self, key: usize, has_fifo: bool, pending: Pending) -> Option<Pending> {
        if has_fifo {
            let mut fifos = self.fifos.lock();
            let Some(fifo) = fifos.get_mut(&key) else {
                return Some(pending);
            };
            if fifo.reserve(1, nowait()).is_err() {
                return Some(pending);
            }
            // Cannot fail: the room is reserved.
            let _ = fifo.push(pending, nowait());
            return None;
        }
        if way() == Way::Never {
            return Some(pending);
        }
        let (Ok(node), Ok(mut fifo), Ok(work)) = (
            RBTreeNodeReservation::new(nowait()),
            KVec::with_capacity(1, nowait()),
            KBox::new(
                Work {
                    head: bindings::callback_head::default(),
                    fifos: self,
                },
                nowait(),
            ),
        ) else {
            return Some(pending);
        };
        let mut fifos = self.fifos.lock();
        let work = KBox::into_raw(work);
        // SAFETY: `work` is ours until the task_work runs `run`, which
        // takes it back; `head` is its first field.
        let ret = unsafe { mmap3_task_work_add(addr_of_mut!((*work).head), run) };
        if ret != 0 {
            // Exiting: exit_task_work() has run. The work is ours again.
            // SAFETY: From `KBox::into_raw` above, and not queued.
            drop(unsafe { KBox::from_raw(work) });
            return Some(pending);
        }
        // INVARIANT: Written with `fifos` locked.
        self.queued.store(self.queued.load(Relaxed) + 1, Relaxed);
        self.used.store(true, Relaxed);
        // Cannot fail: the room is reserved.
        let _ = fifo.push(pending, nowait());
        fifos.insert(node.into_node(key, fifo));
        None
    }

    /// current's FIFO, on its way back to user space or at its exit (from
    /// `exit_task_work()`, before `perf_event_exit_task()`): no lock held.
    fn run(&self) {
        let fifo = self.fifos.lock().remove(&current_key());
        // Nothing is added meanwhile: only current adds, from its mappings.
        for pending in fifo.into_iter().flatten() {
            pending.emit(self.provider());
        }
        let _fifos = self.fifos.lock();
        let queued = self.queued.load(Relaxed) - 1;
        // INVARIANT: Written with `fifos` locked.
        self.queued.store(queued, Relaxed);
        if queued == 0 {
            self.idle.notify_all();
        }
    }

    /// Waits until every task_work added has run (each task's return to
    /// user space, or its exit). The caller has detached the probe: none
    /// is added any more.
    pub(crate) fn drain(&self) {
        let mut fifos = self.fifos.lock();
        while self.queued.load(Relaxed) != 0 {
            self.idle.wait(&mut fifos);
        }
    }
}

/// The task_work of a FIFO.
///
/// # Safety
///
/// `head` is the head of a [`Work`] that `Fifos::defer` queued.
unsafe extern "C" fn run(head: *mut bindings::callback_head) {
    // SAFETY: `head` is the first field of a `Work` from `KBox::into_raw`
    // (`repr(C)`), queued once: this is its only run.
    let work = unsafe { KBox::from_raw(head.cast::<Work>()) };
    // SAFETY: Module exit waits in `Fifos::drain` until this is done.
    let fifos = unsafe { &*work.fifos };
    drop(work);
    fifos.run();
}
