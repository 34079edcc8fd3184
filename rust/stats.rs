// SPDX-License-Identifier: GPL-2.0

//! The module's counters, shown in `/sys/kernel/debug/mmap3/stats`.

extern "C" {
    fn mmap3_stat_add(stat: u32, delta: i64);
    fn mmap3_debugfs_create();
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

/// Adds `delta` to `stat`.
pub(crate) fn add(stat: Stat, delta: i64) {
    // SAFETY: `stat` is below `mmap3_nr_stats` (checked by `Debugfs::new`).
    unsafe { mmap3_stat_add(stat as u32, delta) };
}

/// The debugfs directory of the counters, removed on drop.
pub(crate) struct Debugfs(());

impl Debugfs {
    /// Zeroes the counters and shows them in debugfs.
    pub(crate) fn new() -> kernel::error::Result<Self> {
        // SAFETY: A constant defined by `rust/helpers.c`.
        if unsafe { mmap3_nr_stats } != Stat::Capacity as u32 + 1 {
            return Err(kernel::error::code::EINVAL);
        }
        // SAFETY: Called once per load; paired with `mmap3_debugfs_remove()` in `drop`.
        unsafe { mmap3_debugfs_create() };
        Ok(Self(()))
    }
}

impl Drop for Debugfs {
    fn drop(&mut self) {
        // SAFETY: Created in `new`.
        unsafe { mmap3_debugfs_remove() };
    }
}
