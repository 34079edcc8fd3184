// SPDX-License-Identifier: GPL-2.0

//! Helpers shared by the integration tests: a byte-counting file reader, a
//! temporary directory, the C toolchain and `readelf`, and an ELF builder
//! for crafted files.

#![allow(dead_code)] // Each test binary uses a different part.

use mmap3_buildid::{find_build_id, BuildId, Error, ReadError, Reader, FETCH_MAX, MAX_BYTES_READ};
use std::fs::File;
use std::io::{ErrorKind, Read};
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{SystemTime, UNIX_EPOCH};

/// A reader over a file or a byte slice that counts what is asked of it.
pub struct Counting<S> {
    pub src: S,
    /// Bytes requested (the sum of `len` over all calls).
    pub requested: usize,
    /// Bytes actually returned.
    pub returned: usize,
    pub calls: usize,
    /// What the last fetch from a file read.
    buf: Vec<u8>,
}

impl<S> Counting<S> {
    pub fn new(src: S) -> Self {
        Counting {
            src,
            requested: 0,
            returned: 0,
            calls: 0,
            buf: Vec::new(),
        }
    }

    fn count(&mut self, len: usize, returned: usize) {
        assert!(
            len <= FETCH_MAX,
            "fetch of {len} bytes, more than {FETCH_MAX}"
        );
        self.calls += 1;
        self.requested += len;
        self.returned += returned;
    }
}

impl Reader for Counting<File> {
    type Bytes<'a> = &'a [u8];

    fn fetch(&mut self, offset: u64, len: usize) -> Result<&[u8], ReadError> {
        self.buf.resize(len, 0);
        let mut done = 0;
        while done < len {
            match self
                .src
                .read_at(&mut self.buf[done..], offset + done as u64)
            {
                Ok(0) => break,
                Ok(n) => done += n,
                Err(e) if e.kind() == ErrorKind::Interrupted => {}
                Err(_) => return Err(ReadError),
            }
        }
        self.count(len, done);
        Ok(&self.buf[..done])
    }
}

impl Reader for Counting<&[u8]> {
    type Bytes<'a>
        = &'a [u8]
    where
        Self: 'a;

    fn fetch(&mut self, offset: u64, len: usize) -> Result<&[u8], ReadError> {
        let got = bytes_at(self.src, offset, len);
        self.count(len, got.len());
        Ok(got)
    }
}

/// The `len` bytes of `bytes` at `offset`, fewer at its end: what a
/// [`Reader`] over `bytes` fetches.
pub fn bytes_at(bytes: &[u8], offset: u64, len: usize) -> &[u8] {
    let src = usize::try_from(offset)
        .ok()
        .and_then(|o| bytes.get(o..))
        .unwrap_or(&[]);
    &src[..len.min(src.len())]
}

/// The outcome of parsing one file, with the byte counts.
pub struct Parsed {
    pub result: Result<BuildId, Error>,
    pub requested: usize,
    pub returned: usize,
}

/// Parses a file, asserting the byte cap.
pub fn parse_file(path: &Path) -> std::io::Result<Parsed> {
    let mut r = Counting::new(File::open(path)?);
    let result = find_build_id(&mut r);
    assert!(
        r.requested <= MAX_BYTES_READ,
        "{}: {} bytes requested, cap is {MAX_BYTES_READ}",
        path.display(),
        r.requested
    );
    Ok(Parsed {
        result,
        requested: r.requested,
        returned: r.returned,
    })
}

/// Parses bytes in memory through the counting reader and through the
/// `[u8]` reader, asserting that both agree and that the cap holds.
pub fn parse_bytes(bytes: &[u8]) -> Result<BuildId, Error> {
    let mut r = Counting::new(bytes);
    let result = find_build_id(&mut r);
    assert!(
        r.requested <= MAX_BYTES_READ,
        "{} bytes requested, cap is {MAX_BYTES_READ}",
        r.requested
    );
    let mut copy = bytes.to_vec();
    assert_eq!(find_build_id(copy.as_mut_slice()), result);
    if let Ok(id) = &result {
        assert!((1..=20).contains(&id.as_bytes().len()));
    }
    result
}

/// Lower-case hex of some bytes.
pub fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// `n` bytes that differ from run to run and from call to call, so that no
/// expected build-id is a literal kept from an earlier run.
pub fn fresh_id(n: usize) -> Vec<u8> {
    static COUNTER: AtomicUsize = AtomicUsize::new(0);
    let nanos = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or(0);
    let mut x = (nanos as u64)
        ^ (u64::from(std::process::id()) << 32)
        ^ (COUNTER.fetch_add(1, Ordering::Relaxed) as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15);
    (0..n)
        .map(|_| {
            // xorshift64*
            x ^= x >> 12;
            x ^= x << 25;
            x ^= x >> 27;
            (x.wrapping_mul(0x2545_f491_4f6c_dd1d) >> 56) as u8
        })
        .collect()
}

/// Regular files (not symlinks) under `dir` that start with `\x7fELF` and
/// can be opened.
pub fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        let Ok(meta) = std::fs::symlink_metadata(&path) else {
            continue;
        };
        if meta.is_dir() {
            walk(&path, out);
        } else if meta.is_file() && path.to_str().is_some_and(|p| !p.contains('\n')) {
            let mut magic = [0u8; 4];
            let Ok(mut f) = File::open(&path) else {
                continue;
            };
            if f.read_exact(&mut magic).is_ok() && &magic == b"\x7fELF" {
                out.push(path);
            }
        }
    }
}

/// The ELF files under `roots`, sorted (see [`walk`]).
pub fn elf_files(roots: &[&str]) -> Vec<PathBuf> {
    let mut files = Vec::new();
    for root in roots {
        walk(Path::new(root), &mut files);
    }
    files.sort();
    files
}

/// A temporary directory, removed on drop.
pub struct TempDir(pub PathBuf);

impl TempDir {
    pub fn new(tag: &str) -> TempDir {
        static COUNTER: AtomicUsize = AtomicUsize::new(0);
        let dir = std::env::temp_dir().join(format!(
            "mmap3-buildid-{}-{}-{}",
            tag,
            std::process::id(),
            COUNTER.fetch_add(1, Ordering::Relaxed)
        ));
        std::fs::create_dir_all(&dir).expect("create temp dir");
        TempDir(dir)
    }

    pub fn path(&self, name: &str) -> PathBuf {
        self.0.join(name)
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// Runs `cc` with `args`; returns whether it succeeded, and its stderr.
pub fn cc(args: &[&str]) -> (bool, String) {
    let out = Command::new("cc")
        .args(args)
        .output()
        .expect("cannot run cc: the tests build real ELF files and need a C toolchain");
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// Runs `cc` with `args`, panicking with its stderr if it fails.
pub fn cc_ok(args: &[&str]) {
    let (ok, err) = cc(args);
    assert!(ok, "cc {args:?} failed:\n{err}");
}

/// The first build-id `readelf -n` prints for `path`, if any.
pub fn readelf_build_id(path: &Path) -> Option<String> {
    let out = Command::new("readelf")
        .args(["-n", "--wide"])
        .arg(path)
        .output()
        .expect("cannot run readelf (binutils)");
    assert!(out.status.success(), "readelf failed on {}", path.display());
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .find_map(|l| l.split_once("Build ID: ").map(|(_, h)| h.trim().to_owned()))
}

/// A program header for [`Image::phdrs`].
#[derive(Clone, Copy, Debug)]
pub struct Phdr {
    pub p_type: u32,
    pub offset: u64,
    pub filesz: u64,
    pub align: u64,
}

pub const PT_LOAD: u32 = 1;
pub const PT_NOTE: u32 = 4;

impl Phdr {
    pub fn note(offset: u64, filesz: u64, align: u64) -> Phdr {
        Phdr {
            p_type: PT_NOTE,
            offset,
            filesz,
            align,
        }
    }
}

/// A crafted ELF file image.
#[derive(Clone)]
pub struct Image {
    pub bytes: Vec<u8>,
    pub class64: bool,
    pub big: bool,
}

impl Image {
    /// An ELF header (`ET_DYN`, no program headers) and nothing else.
    pub fn new(class64: bool, big: bool) -> Image {
        let mut img = Image {
            bytes: Vec::new(),
            class64,
            big,
        };
        img.put(0, b"\x7fELF");
        img.put(
            4,
            &[if class64 { 2 } else { 1 }, if big { 2 } else { 1 }, 1],
        );
        img.u16(16, 3); // e_type = ET_DYN
        img.u16(18, if class64 { 62 } else { 3 }); // e_machine
        img.u32(20, 1); // e_version
        let ehsize = img.ehsize();
        img.u16(if class64 { 52 } else { 40 }, ehsize as u16);
        if img.bytes.len() < ehsize {
            img.bytes.resize(ehsize, 0);
        }
        img
    }

    pub fn ehsize(&self) -> usize {
        if self.class64 {
            64
        } else {
            52
        }
    }

    pub fn phentsize(&self) -> usize {
        if self.class64 {
            56
        } else {
            32
        }
    }

    /// Writes `data` at `off`, growing the file as needed.
    pub fn put(&mut self, off: usize, data: &[u8]) {
        if self.bytes.len() < off + data.len() {
            self.bytes.resize(off + data.len(), 0);
        }
        self.bytes[off..off + data.len()].copy_from_slice(data);
    }

    pub fn u16(&mut self, off: usize, v: u16) {
        let b = if self.big {
            v.to_be_bytes()
        } else {
            v.to_le_bytes()
        };
        self.put(off, &b);
    }

    pub fn u32(&mut self, off: usize, v: u32) {
        let b = if self.big {
            v.to_be_bytes()
        } else {
            v.to_le_bytes()
        };
        self.put(off, &b);
    }

    pub fn u64(&mut self, off: usize, v: u64) {
        let b = if self.big {
            v.to_be_bytes()
        } else {
            v.to_le_bytes()
        };
        self.put(off, &b);
    }

    /// Writes an address-sized field (`u32` for ELF32, `u64` for ELF64).
    pub fn addr(&mut self, off: usize, v: u64) {
        if self.class64 {
            self.u64(off, v);
        } else {
            self.u32(off, u32::try_from(v).expect("ELF32 field too large"));
        }
    }

    /// Sets `e_phoff`.
    pub fn set_phoff(&mut self, phoff: u64) {
        self.addr(if self.class64 { 32 } else { 28 }, phoff);
    }

    /// Sets `e_phentsize`.
    pub fn set_phentsize(&mut self, v: u16) {
        self.u16(if self.class64 { 54 } else { 42 }, v);
    }

    /// Sets `e_phnum`.
    pub fn set_phnum(&mut self, v: u16) {
        self.u16(if self.class64 { 56 } else { 44 }, v);
    }

    /// Writes one program header at `off`.
    pub fn phdr(&mut self, off: usize, p: Phdr) {
        self.u32(off, p.p_type);
        if self.class64 {
            self.u32(off + 4, 4); // p_flags = PF_R
            self.u64(off + 8, p.offset);
            self.u64(off + 16, p.offset); // p_vaddr
            self.u64(off + 24, p.offset); // p_paddr
            self.u64(off + 32, p.filesz);
            self.u64(off + 40, p.filesz); // p_memsz
            self.u64(off + 48, p.align);
        } else {
            let w = |v: u64| u32::try_from(v).expect("ELF32 field too large");
            self.u32(off + 4, w(p.offset));
            self.u32(off + 8, w(p.offset));
            self.u32(off + 12, w(p.offset));
            self.u32(off + 16, w(p.filesz));
            self.u32(off + 20, w(p.filesz));
            self.u32(off + 24, 4);
            self.u32(off + 28, w(p.align));
        }
    }

    /// Writes a program-header table at `phoff` and points the ELF header
    /// at it.
    pub fn phdrs(&mut self, phoff: u64, phdrs: &[Phdr]) {
        self.set_phoff(phoff);
        self.set_phentsize(self.phentsize() as u16);
        self.set_phnum(u16::try_from(phdrs.len()).expect("too many phdrs"));
        for (i, p) in phdrs.iter().enumerate() {
            self.phdr(phoff as usize + i * self.phentsize(), *p);
        }
    }

    /// Encodes one note in this file's byte order, padded for `align`.
    pub fn note(&self, align: usize, name: &[u8], n_type: u32, desc: &[u8]) -> Vec<u8> {
        self.raw_note(
            align,
            name.len() as u32,
            desc.len() as u32,
            n_type,
            name,
            desc,
        )
    }

    /// Encodes a note whose size fields may lie.
    pub fn raw_note(
        &self,
        align: usize,
        namesz: u32,
        descsz: u32,
        n_type: u32,
        name: &[u8],
        desc: &[u8],
    ) -> Vec<u8> {
        let w = |v: u32| {
            if self.big {
                v.to_be_bytes()
            } else {
                v.to_le_bytes()
            }
        };
        let mut n = Vec::new();
        n.extend_from_slice(&w(namesz));
        n.extend_from_slice(&w(descsz));
        n.extend_from_slice(&w(n_type));
        n.extend_from_slice(name);
        n.resize(n.len().next_multiple_of(align), 0);
        n.extend_from_slice(desc);
        n.resize(n.len().next_multiple_of(align), 0);
        n
    }

    /// A GNU build-id note.
    pub fn build_id_note(&self, align: usize, id: &[u8]) -> Vec<u8> {
        self.note(align, b"GNU\0", 3, id)
    }
}
