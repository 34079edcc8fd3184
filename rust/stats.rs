// SPDX-License-Identifier: GPL-2.0

//! The module's counters, per CPU, summed in `/sys/kernel/debug/mmap3/stats`.

use crate::compat::{self, DebugfsFile, Writer};
use core::fmt;
use kernel::prelude::*;

extern "C" {
    fn mmap3_stats_alloc() -> core::ffi::c_int;
    fn mmap3_stats_free();
    fn mmap3_stat_add(stat: u32, delta: i64);
    fn mmap3_stat_sum(stat: u32) -> i64;
    static mmap3_nr_stats: u32;
}

/// One counter.
#[derive(Clone, Copy)]
#[repr(u32)]
pub(crate) enum Stat {
    /// Mappings answered from the cache.
    Hits = 0,
    /// Mappings whose file was not in the cache (or stale there).
    Misses,
    /// Cache entries replaced by others.
    Evictions,
    /// Lookups deferred to the return to user space.
    Deferred,
    /// Cache entries in use.
    Entries,
    /// Cache entries there is room for.
    Capacity,
}

impl Stat {
    /// Every counter, in the order of the file.
    const ALL: [Stat; 6] = [
        Stat::Hits,
        Stat::Misses,
        Stat::Evictions,
        Stat::Deferred,
        Stat::Entries,
        Stat::Capacity,
    ];

    /// The counter's name in the file.
    fn name(self) -> &'static str {
        match self {
            Stat::Hits => "hits",
            Stat::Misses => "misses",
            Stat::Evictions => "evictions",
            Stat::Deferred => "deferred",
            Stat::Entries => "entries",
            Stat::Capacity => "capacity",
        }
    }
}

/// Adds `delta` to `stat`, on this CPU's counters.
///
/// Counts only while the [`Counters`] exist (the C helper ignores a call
/// before, with a warning); the module drops them after everything that
/// counts.
pub(crate) fn add(stat: Stat, delta: i64) {
    // SAFETY: `stat` is below `mmap3_nr_stats` (checked by `Counters::new`);
    // the helper checks that the counters are allocated.
    unsafe { mmap3_stat_add(stat as u32, delta) };
}

/// The per-CPU counters of `rust/helpers.c`, zeroed at creation and freed
/// on drop.
pub(crate) struct Counters(());

impl Counters {
    fn new() -> Result<Self> {
        // SAFETY: A constant defined by `rust/helpers.c`.
        if unsafe { mmap3_nr_stats } != Stat::ALL.len() as u32 {
            return Err(EINVAL);
        }
        // SAFETY: Called once per load; freed by `drop`.
        kernel::error::to_result(unsafe { mmap3_stats_alloc() })?;
        Ok(Counters(()))
    }
}

impl Drop for Counters {
    fn drop(&mut self) {
        // SAFETY: Allocated by `new`. The module drops the counters after
        // its registration, whose drop waits for the hook, once no deferred
        // lookup is left (each pins the module), and after their debugfs
        // file: nothing counts or reads them any more.
        unsafe { mmap3_stats_free() };
    }
}

/// The lines of the debugfs file: `<name> <sum>`, one per counter.
impl Writer for Counters {
    fn write(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for stat in Stat::ALL {
            // SAFETY: `stat` is below `mmap3_nr_stats` (checked by `new`);
            // the counters are allocated while `self` exists.
            let sum = unsafe { mmap3_stat_sum(stat as u32) };
            writeln!(f, "{} {}", stat.name(), sum)?;
        }
        Ok(())
    }
}

/// The counters and their debugfs file `mmap3/stats`, removed first on drop.
pub(crate) type Stats = DebugfsFile<Counters>;

/// Allocates zeroed counters, to be shown in debugfs.
pub(crate) fn new() -> Result<impl PinInit<Stats>> {
    Ok(compat::debugfs_file(Counters::new()?, c"mmap3", c"stats"))
}
