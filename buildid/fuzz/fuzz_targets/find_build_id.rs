// SPDX-License-Identifier: GPL-2.0

//! Fuzzes the build-id parser with arbitrary files: it must not panic, must
//! stay within its byte cap, and a build-id it returns is 1 to 20 bytes,
//! zero-padded, and the same whichever reader is used.

#![no_main]

use libfuzzer_sys::fuzz_target;
use mmap3_buildid::{
    find_build_id, ReadError, Reader, BUILD_ID_SIZE_MAX, FETCH_MAX, MAX_BYTES_READ,
};

/// Reads from the input, counting the bytes requested.
struct Counting<'a> {
    data: &'a [u8],
    requested: usize,
}

impl Reader for Counting<'_> {
    type Bytes<'b>
        = &'b [u8]
    where
        Self: 'b;

    fn fetch(&mut self, offset: u64, len: usize) -> Result<&[u8], ReadError> {
        assert!(len <= FETCH_MAX, "fetch of more than FETCH_MAX bytes");
        self.requested += len;
        assert!(self.requested <= MAX_BYTES_READ, "byte cap exceeded");
        let src = usize::try_from(offset)
            .ok()
            .and_then(|o| self.data.get(o..))
            .unwrap_or(&[]);
        Ok(src.get(..len).unwrap_or(src))
    }
}

fuzz_target!(|data: &[u8]| {
    let mut r = Counting { data, requested: 0 };
    let result = find_build_id(&mut r);
    assert!(r.requested <= MAX_BYTES_READ);
    if let Ok(id) = &result {
        let len = id.as_bytes().len();
        assert!((1..=BUILD_ID_SIZE_MAX).contains(&len));
        assert_eq!(&id.padded()[..len], id.as_bytes());
        assert!(id.padded()[len..].iter().all(|&b| b == 0));
    }
    let mut copy = data.to_vec();
    assert_eq!(find_build_id(copy.as_mut_slice()), result);
});
