// SPDX-License-Identifier: GPL-2.0

//! Real ELF files, built by `cc` during the test with a build-id chosen by
//! the test (or none), then parsed and compared with what the linker was
//! given and with `readelf -n`.

mod common;

use common::{cc, cc_ok, fresh_id, hex, parse_bytes, parse_file, readelf_build_id, TempDir};
use mmap3_buildid::Error;
use std::path::{Path, PathBuf};
use std::process::Command;

const MAIN_C: &str = "int main(void) { return 0; }\n";

fn write(dir: &TempDir, name: &str, text: &str) -> PathBuf {
    let p = dir.path(name);
    std::fs::write(&p, text).expect("write source");
    p
}

fn s(p: &Path) -> &str {
    p.to_str().expect("temp paths are UTF-8")
}

/// Builds `src` with `flags` and `-Wl,--build-id=0x<id>`, then checks that
/// the parser and readelf both report `id`.
fn check_id(dir: &TempDir, out: &str, src: &Path, flags: &[&str], id: &[u8]) -> PathBuf {
    let exe = dir.path(out);
    let id_flag = format!("-Wl,--build-id=0x{}", hex(id));
    let mut args = vec!["-o", s(&exe), s(src), &id_flag];
    args.extend_from_slice(flags);
    cc_ok(&args);
    let got = parse_file(&exe).unwrap().result.expect("a build-id");
    assert_eq!(
        hex(got.as_bytes()),
        hex(id),
        "{out}: what the linker was given"
    );
    // ld sizes the note section without its trailing padding, which
    // readelf then rejects as "invalid descsz": compare only when there is
    // no padding. (The PT_NOTE segment spans the padding, so the parser is
    // fine with it.)
    if id.len().is_multiple_of(4) {
        assert_eq!(
            readelf_build_id(&exe),
            Some(hex(id)),
            "{out}: readelf agrees"
        );
    }
    exe
}

#[test]
fn executables_with_20_and_16_byte_ids() {
    let dir = TempDir::new("exe");
    let src = write(&dir, "main.c", MAIN_C);
    check_id(&dir, "pie20", &src, &[], &fresh_id(20));
    check_id(&dir, "pie16", &src, &[], &fresh_id(16));
    check_id(&dir, "nopie20", &src, &["-no-pie"], &fresh_id(20));
    check_id(&dir, "id1", &src, &[], &fresh_id(1));
    check_id(&dir, "id5", &src, &[], &fresh_id(5));
    check_id(&dir, "id8", &src, &[], &fresh_id(8));
}

#[test]
fn shared_library() {
    let dir = TempDir::new("so");
    let src = write(&dir, "lib.c", "int f(int x) { return x + 1; }\n");
    check_id(&dir, "lib.so", &src, &["-shared", "-fPIC"], &fresh_id(20));
}

#[test]
fn static_executable() {
    let dir = TempDir::new("static");
    let src = write(&dir, "main.c", MAIN_C);
    let exe = dir.path("probe");
    if !cc(&["-static", "-o", s(&exe), s(&src)]).0 {
        eprintln!("no static libc: using -nostdlib");
        let src = write(&dir, "start.c", "void _start(void) { for (;;) ; }\n");
        check_id(
            &dir,
            "static",
            &src,
            &["-static", "-nostdlib"],
            &fresh_id(20),
        );
        return;
    }
    check_id(&dir, "static", &src, &["-static"], &fresh_id(20));
}

#[test]
fn default_sha1_and_uuid_styles() {
    // The expected value comes from readelf.
    let dir = TempDir::new("styles");
    let src = write(&dir, "main.c", MAIN_C);
    for style in ["sha1", "md5", "uuid"] {
        let exe = dir.path(style);
        cc_ok(&["-o", s(&exe), s(&src), &format!("-Wl,--build-id={style}")]);
        let want = readelf_build_id(&exe).expect("readelf shows a build-id");
        let got = parse_file(&exe).unwrap().result.expect("a build-id");
        assert_eq!(hex(got.as_bytes()), want, "{style}");
    }
}

#[test]
fn no_build_id() {
    let dir = TempDir::new("none");
    let src = write(&dir, "main.c", MAIN_C);
    for (name, flags) in [("pie", &[][..]), ("so", &["-shared", "-fPIC"][..])] {
        let exe = dir.path(name);
        let mut args = vec!["-o", s(&exe), s(&src), "-Wl,--build-id=none"];
        args.extend_from_slice(flags);
        cc_ok(&args);
        assert_eq!(readelf_build_id(&exe), None);
        assert_eq!(
            parse_file(&exe).unwrap().result,
            Err(Error::NoBuildId),
            "{name}"
        );
    }
    // A relocatable object: no program headers, so no build-id is found,
    // whatever its sections say (like lib/buildid.c).
    let obj = dir.path("main.o");
    cc_ok(&["-c", "-o", s(&obj), s(&src)]);
    assert_eq!(parse_file(&obj).unwrap().result, Err(Error::NoBuildId));
}

#[test]
fn elf32() {
    // The toolchain can compile for i386 but may lack the 32-bit libc, so
    // link a freestanding program; fall back to a crafted file otherwise.
    let dir = TempDir::new("elf32");
    let src = write(&dir, "start.c", "void _start(void) { for (;;) ; }\n");
    let probe = dir.path("probe");
    let flags = ["-m32", "-static", "-nostdlib"];
    let mut args = vec!["-o", s(&probe), s(&src)];
    args.extend_from_slice(&flags);
    if !cc(&args).0 {
        eprintln!("cc -m32 cannot link here: ELF32 is covered by the crafted tests only");
        return;
    }
    for len in [20, 16] {
        let exe = check_id(&dir, &format!("elf32-{len}"), &src, &flags, &fresh_id(len));
        assert_eq!(std::fs::read(&exe).unwrap()[4], 1, "ELFCLASS32");
    }
    let exe = dir.path("elf32-none");
    let mut args = vec!["-o", s(&exe), s(&src), "-Wl,--build-id=none"];
    args.extend_from_slice(&flags);
    cc_ok(&args);
    assert_eq!(parse_file(&exe).unwrap().result, Err(Error::NoBuildId));
}

/// The default linker script with `.note.gnu.build-id` moved after
/// `.rodata`, so that a large constant array puts the note far into the
/// file.
fn late_note_script() -> Option<String> {
    let out = Command::new("cc").arg("-Wl,--verbose").output().ok()?;
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    let mut parts = text.split("==================================================");
    let script = parts.nth(1)?;
    let line = script
        .lines()
        .find(|l| l.contains(".note.gnu.build-id"))?
        .to_owned();
    let without = script.replacen(&format!("{line}\n"), "", 1);
    let at = without.find("  .rodata1")?;
    Some(format!("{}{}\n{}", &without[..at], line, &without[at..]))
}

#[test]
fn note_far_into_the_file() {
    let dir = TempDir::new("late");
    let script = late_note_script().expect("the linker prints its default script");
    let lds = write(&dir, "late.ld", &script);
    let src = write(
        &dir,
        "big.c",
        "const char pad[200000] = {1};\nint main(void) { return pad[0]; }\n",
    );
    let t = format!("-Wl,-T,{}", s(&lds));
    for len in [20, 16] {
        let exe = check_id(&dir, &format!("late{len}"), &src, &[&t], &fresh_id(len));
        // Check that the note really is late: readelf gives its offset.
        let out = Command::new("readelf")
            .args(["-lW", s(&exe)])
            .output()
            .unwrap();
        let notes: Vec<u64> = String::from_utf8_lossy(&out.stdout)
            .lines()
            .filter(|l| l.trim_start().starts_with("NOTE"))
            .filter_map(|l| l.split_whitespace().nth(1))
            .filter_map(|o| u64::from_str_radix(o.trim_start_matches("0x"), 16).ok())
            .collect();
        assert!(
            notes.iter().all(|&o| o > 0x10000),
            "note offsets {notes:x?}"
        );
    }
}

#[test]
fn truncated_real_file() {
    let dir = TempDir::new("trunc");
    let src = write(&dir, "main.c", MAIN_C);
    let id = fresh_id(20);
    let exe = check_id(&dir, "exe", &src, &[], &id);
    let bytes = std::fs::read(&exe).unwrap();
    // Where the build-id ends: after that, every prefix still finds it.
    let end = (0..bytes.len())
        .find(|&n| parse_bytes(&bytes[..n]).is_ok())
        .expect("found in some prefix");
    assert_eq!(&bytes[end - 20..end], id.as_slice());
    for n in 0..bytes.len() {
        let r = parse_bytes(&bytes[..n]);
        if n < 4 {
            assert_eq!(r, Err(Error::NotElf), "{n} bytes");
        } else if n < end {
            assert_eq!(r, Err(Error::Malformed), "{n} bytes");
        } else {
            assert_eq!(r.unwrap().as_bytes(), id.as_slice(), "{n} bytes");
        }
    }
}

#[test]
fn bytes_read_are_few() {
    let dir = TempDir::new("few");
    let src = write(&dir, "main.c", MAIN_C);
    let exe = check_id(&dir, "exe", &src, &[], &fresh_id(20));
    let p = parse_file(&exe).unwrap();
    let size = std::fs::metadata(&exe).unwrap().len();
    eprintln!(
        "{} of {size} bytes requested ({} returned)",
        p.requested, p.returned
    );
    assert!(p.requested < 2048);
}
