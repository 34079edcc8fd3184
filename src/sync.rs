// SPDX-License-Identifier: GPL-2.0

//! What `src/cache.rs` uses of `kernel::sync::atomic` and
//! `kernel::sync::barrier`, with their API, over `core::sync::atomic`: for
//! the kernels whose `kernel` crate has neither (6.12), and for the host
//! build (`buildid/`). Where the kernel has them the module uses the
//! kernel's, whose accesses are those of the kernel memory model (LKMM).
//!
//! Each operation here is the C11 one that is at least as strong as the
//! kernel's: `Relaxed` for `READ_ONCE()`/`WRITE_ONCE()` and the `_relaxed`
//! forms, `Acquire` loads and `Release` stores for `smp_load_acquire()` and
//! `smp_store_release()`, an `Acquire` compare-and-exchange (`Relaxed` on
//! failure) for `cmpxchg_acquire()`, and for the barriers an `Acquire`
//! fence for `smp_rmb()` (it orders earlier loads before later loads and
//! stores) and a `Release` fence for `smp_wmb()` (earlier loads and stores
//! before later stores).

/// `kernel::sync::atomic`: [`atomic::Atomic`] of `u64`, `bool` and `i8`.
pub(crate) mod atomic {
    use core::sync::atomic::{AtomicBool, AtomicI8, AtomicU64, Ordering as O};

    /// The orderings, as types (`kernel::sync::atomic::ordering`).
    pub(crate) mod ordering {
        use core::sync::atomic::Ordering as O;

        /// `Relaxed`.
        pub(crate) struct Relaxed;
        /// `Acquire`.
        pub(crate) struct Acquire;
        /// `Release`.
        pub(crate) struct Release;

        /// An ordering: the C11 ordering of an access, and of a failed
        /// compare-and-exchange.
        pub(crate) trait Ordering {
            /// The access's.
            const ORDER: O;
            /// A failed compare-and-exchange's.
            const ON_FAILURE: O;
        }

        impl Ordering for Relaxed {
            const ORDER: O = O::Relaxed;
            const ON_FAILURE: O = O::Relaxed;
        }

        impl Ordering for Acquire {
            const ORDER: O = O::Acquire;
            const ON_FAILURE: O = O::Relaxed;
        }

        impl Ordering for Release {
            const ORDER: O = O::Release;
            const ON_FAILURE: O = O::Relaxed;
        }

        /// The orderings of a load.
        pub(crate) trait AcquireOrRelaxed: Ordering {}
        impl AcquireOrRelaxed for Relaxed {}
        impl AcquireOrRelaxed for Acquire {}

        /// The orderings of a store.
        pub(crate) trait ReleaseOrRelaxed: Ordering {}
        impl ReleaseOrRelaxed for Relaxed {}
        impl ReleaseOrRelaxed for Release {}
    }

    pub(crate) use ordering::{Acquire, Relaxed, Release};

    /// A type with an atomic counterpart in `core`.
    pub(crate) trait AtomicType: Copy {
        /// The `core` atomic.
        type Core;
        /// A new atomic holding `v`.
        fn new(v: Self) -> Self::Core;
        /// Loads.
        fn load(a: &Self::Core, o: O) -> Self;
        /// Stores.
        fn store(a: &Self::Core, v: Self, o: O);
        /// Compares and exchanges.
        fn cmpxchg(a: &Self::Core, old: Self, new: Self, o: O, f: O) -> Result<Self, Self>;
    }

    macro_rules! atomic_type {
        ($($t:ty => $core:ty),* $(,)?) => {$(
            // Inlined, also into other crates (the host's benchmarks): the
            // ordering is a constant only once inlined.
            impl AtomicType for $t {
                type Core = $core;
                #[inline(always)]
                fn new(v: Self) -> $core {
                    <$core>::new(v)
                }
                #[inline(always)]
                fn load(a: &$core, o: O) -> Self {
                    a.load(o)
                }
                #[inline(always)]
                fn store(a: &$core, v: Self, o: O) {
                    a.store(v, o)
                }
                #[inline(always)]
                fn cmpxchg(a: &$core, old: Self, new: Self, o: O, f: O) -> Result<Self, Self> {
                    a.compare_exchange(old, new, o, f)
                }
            }
        )*};
    }

    atomic_type!(u64 => AtomicU64, bool => AtomicBool, i8 => AtomicI8);

    /// `kernel::sync::atomic::Atomic`.
    #[repr(transparent)]
    pub(crate) struct Atomic<T: AtomicType>(T::Core);

    impl<T: AtomicType> Atomic<T> {
        /// An atomic holding `v`.
        #[inline(always)]
        pub(crate) fn new(v: T) -> Self {
            Atomic(T::new(v))
        }

        /// Loads the value.
        #[inline(always)]
        pub(crate) fn load<Ord: ordering::AcquireOrRelaxed>(&self, _: Ord) -> T {
            T::load(&self.0, Ord::ORDER)
        }

        /// Stores `v`.
        #[inline(always)]
        pub(crate) fn store<Ord: ordering::ReleaseOrRelaxed>(&self, v: T, _: Ord) {
            T::store(&self.0, v, Ord::ORDER)
        }

        /// Stores `new` if the value is `old`: `Ok(old)`, else `Err` of the
        /// value.
        #[inline(always)]
        pub(crate) fn cmpxchg<Ord: ordering::Ordering>(
            &self,
            old: T,
            new: T,
            _: Ord,
        ) -> Result<T, T> {
            T::cmpxchg(&self.0, old, new, Ord::ORDER, Ord::ON_FAILURE)
        }
    }
}

/// `kernel::sync::barrier`: [`barrier::smp_mb`] of [`barrier::Read`] and
/// [`barrier::Write`].
pub(crate) mod barrier {
    use core::sync::atomic::{fence, Ordering as O};

    /// `smp_rmb()`'s.
    pub(crate) struct Read;
    /// `smp_wmb()`'s.
    pub(crate) struct Write;

    /// A barrier: its fence.
    pub(crate) trait MemoryBarrier {
        /// The fence.
        const FENCE: O;
    }

    impl MemoryBarrier for Read {
        const FENCE: O = O::Acquire;
    }

    impl MemoryBarrier for Write {
        const FENCE: O = O::Release;
    }

    /// `smp_mb(Read)` is `smp_rmb()`, `smp_mb(Write)` `smp_wmb()`.
    #[inline(always)]
    pub(crate) fn smp_mb<T: MemoryBarrier>(_: T) {
        fence(T::FENCE)
    }
}
