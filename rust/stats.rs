// SPDX-License-Identifier: GPL-2.0

//! The module's counters, per CPU, summed in `/sys/kernel/debug/mmap3/stats`.

extern "C" {
    fn mmap3_stat_add(stat: u32, delta: i64);
    fn mmap3_debugfs_create() -> core::ffi::c_int;
    fn mmap3_debugfs_remove();
    static mmap3_nr_stats: u32;
}

/// One counter; the order is that of `mmap3_stat_names` in `rust/helpers.c`.
#[derive(Clone, Copy)]
#[repr(u32)]
pub(crate) enum Stat {
    /// Mappings answered from the cache.
    Hits = 0,
    /// Mappings whose file was not in the cache (or stale there).
    Misses,
    /// Cache entries replaced by others.
    Evictions,
    /// Lookups deferred to task_work.
    Deferred,
    /// MMAP3 records written.
    Emitted,
    /// Cache entries in use.
    Entries,
    /// Cache entries there is room for.
    Capacity,
}

/// Adds `delta` to `stat`, on this CPU's counters.
///
/// Counts only while a [`Debugfs`] exists (the C helper ignores a call
/// before, with a warning); the module drops it after everything that counts.
pub(crate) fn add(stat: Stat, delta: i64) {
    // SAFETY: `stat` is below `mmap3_nr_stats` (checked by `Debugfs::new`);
    // the helper checks that the counters are allocated.
    unsafe { mmap3_stat_add(stat as u32, delta) };
}

/// The counters and their debugfs file, freed on drop.
pub(crate) struct Debugfs(());

impl Debugfs {
    /// Allocates zeroed counters and shows them in debugfs.
    pub(crate) fn new() -> kernel::error::Result<Self> {
        // SAFETY: A constant defined by `rust/helpers.c`.
        if unsafe { mmap3_nr_stats } != Stat::Capacity as u32 + 1 {
            return Err(kernel::error::code::EINVAL);
        }
        // SAFETY: Called once per load; paired with `mmap3_debugfs_remove()` in `drop`.
        kernel::error::to_result(unsafe { mmap3_debugfs_create() })?;
        Ok(Self(()))
    }
}

impl Drop for Debugfs {
    fn drop(&mut self) {
        // SAFETY: Created in `new`. The module drops this after its
        // registration, whose drop waits for the hook, and once no deferred
        // lookup is left (each pins the module): nothing counts any more.
        unsafe { mmap3_debugfs_remove() };
    }
}
