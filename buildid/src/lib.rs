// SPDX-License-Identifier: GPL-2.0

//! Host build of the mmap3 module's ELF build-id parser and build-id cache.
//!
//! The parser lives in `src/buildid.rs` and the cache in `src/cache.rs` at
//! the top of the repository, where the kernel module includes them as
//! submodules with `#[path]`. A submodule cannot carry crate-level attributes
//! such as `#![no_std]`, so this tiny crate root supplies them and includes
//! the very same files, for `cargo test`, `cargo clippy` and `cargo fuzz`.
//! The files' own module-level lint attributes (no unsafe code, no indexing,
//! no unchecked arithmetic, no panics) apply in both builds.

#![cfg_attr(not(test), no_std)]
#![warn(missing_docs, unreachable_pub, rust_2018_idioms)]

#[path = "../../src/buildid.rs"]
mod buildid;

pub use buildid::*;

#[path = "../../src/cache.rs"]
pub mod cache;

// What the cache uses of the kernel's atomics, over core's (as on 6.12).
#[path = "../../src/sync.rs"]
mod sync;
