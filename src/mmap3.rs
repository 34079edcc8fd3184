// SPDX-License-Identifier: GPL-2.0

//! mmap3: each executable mapping with its ELF build-id, found without
//! file I/O under `mmap_lock`; this file is the module's lifecycle.
//!
//! Two ways in, one lookup. On a kernel with the series the module is the
//! provider of PERF_RECORD_MMAP3 records while it is loaded, in place of
//! the kernel's built-in one, which has no cache (`rust/provider.rs`: the
//! kernel asks, pins deferred files and writes the records); on any kernel it
//! serves the trace event `mmap3:build_id` (`rust/probe.rs`, `rust/probe.c`:
//! a probe on `perf_event_mmap()` while the event is enabled; `rust/fifo.rs`:
//! a FIFO of its own per task). Both ask, under `mmap_lock` and without sleeping,
//! the lookup (`lookup.rs`): the cache (`cache.rs`, with the rule of
//! `policy.rs`), then the page cache (`note.rs`, the parser `buildid.rs`);
//! a file it cannot answer for is read on the mapping task's way back to
//! user space, with no lock held (`deferred.rs`), and each task's answers
//! keep the order of its mappings.

use kernel::{prelude::*, ThisModule};

#[path = "../rust/answer.rs"]
mod answer;
#[path = "buildid.rs"]
pub mod buildid;
#[path = "cache.rs"]
pub mod cache;
#[path = "../rust/compat.rs"]
mod compat;
#[path = "deferred.rs"]
mod deferred;
#[path = "../rust/fifo.rs"]
mod fifo;
#[path = "../rust/file.rs"]
mod file;
#[path = "lookup.rs"]
mod lookup;
#[path = "note.rs"]
mod note;
#[path = "../rust/params.rs"]
mod params;
#[path = "policy.rs"]
mod policy;
#[path = "../rust/probe.rs"]
mod probe;
#[cfg(mmap3_provider)]
#[path = "../rust/provider.rs"]
mod provider;
#[path = "../rust/stats.rs"]
mod stats;
#[path = "status.rs"]
mod status;
// The kernel's atomics and barriers, for the cache; stand-ins where the
// kernel crate has none (6.12).
#[cfg(mmap3_kernel_sync_atomic)]
use kernel::sync;
#[cfg(not(mmap3_kernel_sync_atomic))]
#[path = "sync.rs"]
mod sync;

use compat::InPlaceModule;
use file::Superblocks;
use lookup::Mmap3Provider;

compat::module! {
    type: Mmap3,
    name: "mmap3",
    authors: ["mmap3 developers"],
    description: "Mappings with their ELF build-id: PERF_RECORD_MMAP3 provider, trace event mmap3:build_id",
    license: "GPL",
}

/// Where the provider lives: in the series' registration, which the
/// kernel calls for its mmap3 perf events, or in the module alone.
#[cfg(mmap3_provider)]
type Home = provider::Registration<Mmap3Provider>;

/// The provider, alone: the kernel has no hook for it.
#[cfg(not(mmap3_provider))]
#[pin_data]
struct Home {
    provider: Mmap3Provider,
}

#[cfg(mmap3_provider)]
impl probe::AsProvider for Home {
    fn provider(&self) -> &Mmap3Provider {
        provider::Registration::provider(self)
    }
}

#[cfg(not(mmap3_provider))]
impl probe::AsProvider for Home {
    fn provider(&self) -> &Mmap3Provider {
        &self.provider
    }
}

/// The provider in its [`Home`], registered with the add-on's hook.
#[cfg(mmap3_provider)]
fn new_home() -> Result<impl PinInit<Home, Error>> {
    Ok(provider::Registration::new(Mmap3Provider::new()?))
}

/// The provider in its [`Home`].
#[cfg(not(mmap3_provider))]
fn new_home() -> Result<impl PinInit<Home, Error>> {
    let provider = Mmap3Provider::new()?;
    Ok(try_pin_init!(Home { provider }))
}

/// The module's state; dropped field by field, in this order: the trace
/// event first (its drop waits for its deferred reads), then the provider
/// it holds, so that no hook runs when the superblocks' serials go.
#[pin_data(PinnedDrop)]
struct Mmap3 {
    #[pin]
    event: probe::Event<Home>,
    _superblocks: Superblocks,
    #[pin]
    _stats: stats::Stats,
}

impl InPlaceModule for Mmap3 {
    fn init(_module: &'static ThisModule) -> impl PinInit<Self, Error> {
        try_pin_init!(Mmap3 {
            _stats <- stats::new()?,
            _superblocks: Superblocks::new()?,
            event <- probe::Event::new(new_home()?),
        })
        .pin_chain(|mmap3| {
            pr_info!(
                "loaded, cache of {} entries of {} bytes; trace event mmap3:build_id{}\n",
                probe::AsProvider::provider(mmap3.event.home())
                    .cache
                    .capacity(),
                core::mem::size_of::<cache::Set>() / cache::WAYS,
                if cfg!(mmap3_provider) {
                    ", MMAP3 provider"
                } else {
                    ""
                }
            );
            Ok(())
        })
    }
}

#[pinned_drop]
impl PinnedDrop for Mmap3 {
    fn drop(self: Pin<&mut Self>) {
        pr_info!("unloaded\n");
    }
}
