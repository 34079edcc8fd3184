// SPDX-License-Identifier: GPL-2.0

//! The module's parameters, kept by `rust/helpers.c`: the parameters of
//! `module!` are not shown in `/sys/module/*/parameters`.

extern "C" {
    fn mmap3_param_cache_entries() -> u32;
}

/// The module parameter `cache_entries`.
pub(crate) fn cache_entries() -> usize {
    // SAFETY: Reads a module parameter, set before init.
    unsafe { mmap3_param_cache_entries() as usize }
}
