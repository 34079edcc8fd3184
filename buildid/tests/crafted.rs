// SPDX-License-Identifier: GPL-2.0

//! Crafted ELF files: every supported layout, and malformed ones, each with
//! its expected status. Every call also asserts the byte cap.

mod common;

use common::{fresh_id, parse_bytes, Image, Phdr, PT_LOAD, PT_NOTE};
use mmap3_buildid::{
    find_build_id, BuildId, Error, ReadError, Reader, BUILD_ID_SIZE_MAX, FETCH_MAX, MAX_NOTES,
    MAX_PHDRS,
};

const NOTES_AT: u64 = 0x200;

/// An image with one `PT_NOTE` at `NOTES_AT` holding `notes`.
fn with_notes(class64: bool, big: bool, align: u64, notes: &[Vec<u8>]) -> Image {
    let mut img = Image::new(class64, big);
    let body: Vec<u8> = notes.concat();
    img.phdrs(
        img.ehsize() as u64,
        &[
            Phdr {
                p_type: PT_LOAD,
                offset: 0,
                filesz: 0x1000,
                align: 0x1000,
            },
            Phdr::note(NOTES_AT, body.len() as u64, align),
        ],
    );
    img.put(NOTES_AT as usize, &body);
    img
}

fn found(r: Result<BuildId, Error>) -> Vec<u8> {
    match r {
        Ok(id) => id.as_bytes().to_vec(),
        Err(e) => panic!("expected a build-id, got {e:?}"),
    }
}

#[test]
fn all_classes_and_byte_orders() {
    for class64 in [false, true] {
        for big in [false, true] {
            for len in [1, 8, 16, 20] {
                let id = fresh_id(len);
                let img = Image::new(class64, big);
                let note = img.build_id_note(4, &id);
                let img = with_notes(class64, big, 4, &[note]);
                assert_eq!(
                    found(parse_bytes(&img.bytes)),
                    id,
                    "class64={class64} big={big}"
                );
            }
        }
    }
}

#[test]
fn padded_is_zero_filled() {
    let id = fresh_id(16);
    let img = Image::new(true, false);
    let note = img.build_id_note(4, &id);
    let got = parse_bytes(&with_notes(true, false, 4, &[note]).bytes).unwrap();
    assert_eq!(&got.padded()[..16], id.as_slice());
    assert_eq!(&got.padded()[16..], &[0; 4]);
}

#[test]
fn other_notes_are_skipped() {
    for class64 in [false, true] {
        for big in [false, true] {
            let id = fresh_id(20);
            let i = Image::new(class64, big);
            let notes = [
                i.note(
                    4,
                    b"GNU\0",
                    1,
                    &[0, 0, 0, 0, 3, 0, 0, 0, 2, 0, 0, 0, 0, 0, 0, 0],
                ), // ABI tag
                i.note(
                    4,
                    b"Go\0\0",
                    4,
                    b"aaaaaaaaaaaaaaaaaaaa/bbbbbbbbbbbbbbbbbbbb/ccccc",
                ), // Go build id
                i.note(4, b"GNU\0", 5, &[0; 16]),     // property
                i.note(4, b"stapsdt\0", 3, &[0; 20]), // type 3, other owner
                i.note(4, b"GNU", 3, &[0; 20]),       // namesz 3: not "GNU\0"
                i.note(4, b"GNU\0", 4, &[0; 20]),     // type 4: gold version
                i.note(4, b"", 0, b""),               // empty note
                i.build_id_note(4, &id),
                i.build_id_note(4, &fresh_id(20)), // only the first counts
            ];
            let img = with_notes(class64, big, 4, &notes);
            assert_eq!(found(parse_bytes(&img.bytes)), id);
        }
    }
}

#[test]
fn eight_byte_alignment() {
    // A name of 5 bytes puts the descriptor at 24 with alignment 8, at 20
    // with alignment 4: only a parser that honours p_align finds the id.
    for big in [false, true] {
        let id = fresh_id(20);
        let i = Image::new(true, big);
        let notes = [
            i.note(8, b"GNU\0", 5, &[0; 12]),
            i.note(8, b"abcd\0", 7, &[1; 13]),
            i.build_id_note(8, &id),
        ];
        let img = with_notes(true, big, 8, &notes);
        assert_eq!(found(parse_bytes(&img.bytes)), id);
        // Read with alignment 4, the same bytes are inconsistent.
        let mut wrong = img.clone();
        wrong.phdr(
            64 + 56,
            Phdr::note(NOTES_AT, notes.concat().len() as u64, 4),
        );
        assert_ne!(
            parse_bytes(&wrong.bytes)
                .ok()
                .map(|b| b.as_bytes().to_vec()),
            Some(id)
        );
    }
}

#[test]
fn p_align_zero_one_two_mean_four() {
    for align in [0, 1, 2, 3, 4] {
        let id = fresh_id(20);
        let i = Image::new(true, false);
        let notes = [i.note(4, b"abcde\0", 1, &[9; 3]), i.build_id_note(4, &id)];
        let img = with_notes(true, false, align, &notes);
        assert_eq!(found(parse_bytes(&img.bytes)), id, "p_align {align}");
    }
}

#[test]
fn several_note_segments_and_late_headers() {
    for class64 in [false, true] {
        for big in [false, true] {
            let id = fresh_id(20);
            let mut img = Image::new(class64, big);
            // Program headers at 16 KiB, notes at 40 KiB and 1 MiB.
            let phoff = 0x4000u64;
            let first = img.note(8, b"GNU\0", 5, &[0; 16]);
            let second = [
                img.note(4, b"GNU\0", 1, &[0; 16]),
                img.build_id_note(4, &id),
            ]
            .concat();
            let mut phdrs: Vec<Phdr> = (0..5)
                .map(|n| Phdr {
                    p_type: PT_LOAD,
                    offset: n * 0x1000,
                    filesz: 0x1000,
                    align: 0x1000,
                })
                .collect();
            phdrs.push(Phdr::note(0xa000, first.len() as u64, 8));
            phdrs.push(Phdr::note(0x10_0000, second.len() as u64, 4));
            img.phdrs(phoff, &phdrs);
            img.put(0xa000, &first);
            img.put(0x10_0000, &second);
            assert_eq!(found(parse_bytes(&img.bytes)), id);
        }
    }
}

#[test]
fn many_program_headers_are_read_in_chunks() {
    // The note is described by the last of 256 headers: every chunk is read.
    for class64 in [false, true] {
        let id = fresh_id(20);
        let mut img = Image::new(class64, false);
        let mut phdrs = vec![
            Phdr {
                p_type: PT_LOAD,
                offset: 0,
                filesz: 0,
                align: 0x1000
            };
            MAX_PHDRS - 1
        ];
        let note = img.build_id_note(4, &id);
        phdrs.push(Phdr::note(0x8000, note.len() as u64, 4));
        img.phdrs(0x100, &phdrs);
        img.put(0x8000, &note);
        assert_eq!(found(parse_bytes(&img.bytes)), id);
    }
}

#[test]
fn no_build_id() {
    // No program headers at all (like a relocatable object).
    assert_eq!(
        parse_bytes(&Image::new(true, false).bytes),
        Err(Error::NoBuildId)
    );
    // No PT_NOTE.
    let mut img = Image::new(false, true);
    img.phdrs(
        52,
        &[Phdr {
            p_type: PT_LOAD,
            offset: 0,
            filesz: 0x100,
            align: 4,
        }],
    );
    assert_eq!(parse_bytes(&img.bytes), Err(Error::NoBuildId));
    // Notes, but no build-id; and an empty PT_NOTE anywhere.
    let i = Image::new(true, false);
    let mut img = with_notes(true, false, 4, &[i.note(4, b"GNU\0", 1, &[0; 16])]);
    img.set_phnum(3);
    img.phdr(64 + 2 * 56, Phdr::note(u64::MAX, 0, 4));
    assert_eq!(parse_bytes(&img.bytes), Err(Error::NoBuildId));
}

#[test]
fn not_elf() {
    for bytes in [
        &b""[..],
        b"\x7f",
        b"\x7fEL",
        b"#!/bin/sh\necho hello\n",
        b"!<arch>\n",
        b"\x7fELG\x02\x01\x01",
        &[0u8; 100],
    ] {
        assert_eq!(parse_bytes(bytes), Err(Error::NotElf), "{bytes:?}");
    }
}

#[test]
fn truncated_or_bad_header() {
    let id = fresh_id(20);
    for class64 in [false, true] {
        let i = Image::new(class64, false);
        let img = with_notes(class64, false, 4, &[i.build_id_note(4, &id)]);
        // Cut anywhere inside the ELF header.
        for len in 4..img.ehsize() {
            assert_eq!(
                parse_bytes(&img.bytes[..len]),
                Err(Error::Malformed),
                "len {len}"
            );
        }
        // Cut anywhere: never a wrong answer.
        for len in 0..img.bytes.len() {
            let r = parse_bytes(&img.bytes[..len]);
            let want = if len < 4 {
                Error::NotElf
            } else {
                Error::Malformed
            };
            assert_eq!(r, Err(want), "len {len}");
        }
        assert_eq!(found(parse_bytes(&img.bytes)), id);
        // Unknown class and byte order.
        for (at, v) in [(4, 0), (4, 3), (5, 0), (5, 3)] {
            let mut bad = img.clone();
            bad.bytes[at] = v;
            assert_eq!(
                parse_bytes(&bad.bytes),
                Err(Error::Malformed),
                "byte {at} = {v}"
            );
        }
        // e_phentsize not the class's size.
        for size in [0, 32, 55, 56, 57, 64, 0xffff] {
            if size as usize == img.phentsize() {
                continue;
            }
            let mut bad = img.clone();
            bad.set_phentsize(size);
            assert_eq!(
                parse_bytes(&bad.bytes),
                Err(Error::Malformed),
                "phentsize {size}"
            );
        }
    }
}

#[test]
fn program_header_table_out_of_bounds() {
    let id = fresh_id(20);
    for class64 in [false, true] {
        let i = Image::new(class64, false);
        let img = with_notes(class64, false, 4, &[i.build_id_note(4, &id)]);
        let len = img.bytes.len() as u64;
        // e_phoff past the end, at the end, and straddling the end.
        for phoff in [len, len + 1, len - 1, 0x10_0000, u64::from(u32::MAX)] {
            let mut bad = img.clone();
            bad.set_phoff(phoff);
            assert_eq!(
                parse_bytes(&bad.bytes),
                Err(Error::Malformed),
                "phoff {phoff}"
            );
        }
        if class64 {
            // e_phoff + e_phnum * e_phentsize overflows.
            for phoff in [u64::MAX, u64::MAX - 56, u64::MAX - 111] {
                let mut bad = img.clone();
                bad.set_phoff(phoff);
                assert_eq!(
                    parse_bytes(&bad.bytes),
                    Err(Error::Malformed),
                    "phoff {phoff:#x}"
                );
            }
        }
        // A table that claims more entries than the file holds.
        let mut bad = img.clone();
        bad.set_phnum(40);
        assert_eq!(found(parse_bytes(&bad.bytes)), id, "the note comes first");
        let mut bad = Image::new(class64, false);
        bad.set_phentsize(bad.phentsize() as u16);
        bad.set_phoff(bad.ehsize() as u64);
        bad.set_phnum(3);
        assert_eq!(parse_bytes(&bad.bytes), Err(Error::Malformed));
    }
}

#[test]
fn phnum_65535() {
    for class64 in [false, true] {
        let id = fresh_id(20);
        let i = Image::new(class64, false);
        // The build-id is in the first header: found, reading at most 256.
        let mut img = with_notes(class64, false, 4, &[i.build_id_note(4, &id)]);
        img.phdr(img.ehsize(), img_note_first(&img));
        img.set_phnum(0xffff);
        img.bytes.resize(0x10_0000, 0);
        assert_eq!(found(parse_bytes(&img.bytes)), id);
        // No build-id in the first 256: past the bound, so malformed.
        let mut img = Image::new(class64, false);
        img.phdrs(img.ehsize() as u64, &[Phdr::note(0, 0, 4)]);
        img.set_phnum(0xffff);
        img.bytes.resize(0x20_0000, 0);
        assert_eq!(parse_bytes(&img.bytes), Err(Error::Malformed));
        // And with the table past the end of the file.
        img.bytes.truncate(0x1000);
        assert_eq!(parse_bytes(&img.bytes), Err(Error::Malformed));
        // 257 headers of which none is a note: still past the bound.
        let mut img = Image::new(class64, false);
        img.phdrs(
            img.ehsize() as u64,
            &vec![Phdr::note(0, 0, 4); MAX_PHDRS + 1],
        );
        assert_eq!(parse_bytes(&img.bytes), Err(Error::Malformed));
        // 256 of them: a file without a build-id.
        img.set_phnum(MAX_PHDRS as u16);
        assert_eq!(parse_bytes(&img.bytes), Err(Error::NoBuildId));
    }
}

/// The note header of [`with_notes`], moved to the first slot.
fn img_note_first(img: &Image) -> Phdr {
    let len = img.bytes.len() as u64 - NOTES_AT;
    Phdr::note(NOTES_AT, len, 4)
}

#[test]
fn segment_out_of_bounds() {
    for class64 in [false, true] {
        let id = fresh_id(20);
        let i = Image::new(class64, false);
        let img = with_notes(class64, false, 4, &[i.build_id_note(4, &id)]);
        let note_slot = img.ehsize() + img.phentsize();
        let len = img.bytes.len() as u64 - NOTES_AT;
        let max = if class64 {
            u64::MAX
        } else {
            u64::from(u32::MAX) & !3
        };
        let cases = [
            (img.bytes.len() as u64, len),     // past the end of the file
            (0x10_0000, len),                  // far past
            (img.bytes.len() as u64 - 8, len), // straddling the end
            (max & !7, 0x100),                 // p_offset + p_filesz overflows (64-bit)
            (0x100, max),                      // p_filesz huge
        ];
        for (offset, filesz) in cases {
            let mut bad = img.clone();
            bad.phdr(note_slot, Phdr::note(offset, filesz, 4));
            let r = parse_bytes(&bad.bytes);
            assert_eq!(
                r,
                Err(Error::Malformed),
                "class64={class64} {offset:#x}+{filesz:#x}"
            );
        }
        // A segment running past the end of the file, whose build-id comes
        // before the end: found (only what is needed is read).
        let mut long = img.clone();
        long.phdr(note_slot, Phdr::note(NOTES_AT, len + 0x100, 4));
        assert_eq!(found(parse_bytes(&long.bytes)), id);
        // Without the build-id, the next note header is cut short.
        long.bytes[NOTES_AT as usize + 8] = 1;
        assert_eq!(parse_bytes(&long.bytes), Err(Error::Malformed));
    }
}

#[test]
fn note_sizes_that_overflow_or_lie() {
    for class64 in [false, true] {
        for big in [false, true] {
            let id = fresh_id(20);
            let i = Image::new(class64, big);
            let bad_notes = [
                i.raw_note(4, u32::MAX, 20, 3, b"GNU\0", &id), // namesz overflows
                i.raw_note(4, 4, u32::MAX, 3, b"GNU\0", &id),  // descsz overflows
                i.raw_note(4, u32::MAX - 3, u32::MAX, 3, b"GNU\0", &id),
                i.raw_note(4, 4, 21, 3, b"GNU\0", &id), // runs past the segment
                i.raw_note(4, 4, 24, 1, b"GNU\0", &id), // other type, same
                i.raw_note(4, 0x1000, 0, 1, b"GNU\0", &id), // name past the segment
            ];
            for (n, note) in bad_notes.iter().enumerate() {
                let img = with_notes(class64, big, 4, std::slice::from_ref(note));
                assert_eq!(parse_bytes(&img.bytes), Err(Error::Malformed), "note {n}");
            }
        }
    }
}

#[test]
fn build_id_sizes() {
    for class64 in [false, true] {
        let i = Image::new(class64, false);
        for len in [0usize, 21, 32, 64, 255] {
            let img = with_notes(class64, false, 4, &[i.build_id_note(4, &vec![0xab; len])]);
            assert_eq!(
                parse_bytes(&img.bytes),
                Err(Error::Malformed),
                "descsz {len}"
            );
        }
        for len in 1..=BUILD_ID_SIZE_MAX {
            let id = fresh_id(len);
            let img = with_notes(class64, false, 4, &[i.build_id_note(4, &id)]);
            assert_eq!(found(parse_bytes(&img.bytes)), id);
        }
        // A bad build-id note does not hide a good one after it.
        let id = fresh_id(20);
        let notes = [i.build_id_note(4, &[1; 21]), i.build_id_note(4, &id)];
        assert_eq!(
            found(parse_bytes(&with_notes(class64, false, 4, &notes).bytes)),
            id
        );
    }
}

#[test]
fn misaligned_notes() {
    let id = fresh_id(20);
    let i = Image::new(true, false);
    let note = i.build_id_note(4, &id);
    // p_offset not a multiple of p_align.
    for (off, align) in [(NOTES_AT + 2, 4), (NOTES_AT + 1, 0), (NOTES_AT + 4, 8)] {
        let mut img = Image::new(true, false);
        img.phdrs(64, &[Phdr::note(off, note.len() as u64, align)]);
        img.put(off as usize, &note);
        assert_eq!(
            parse_bytes(&img.bytes),
            Err(Error::Malformed),
            "{off:#x} align {align}"
        );
    }
    // An alignment that is neither 4 nor 8.
    for align in [5, 7, 16, 0x1000, u64::MAX] {
        let img = with_notes(true, false, align, std::slice::from_ref(&note));
        assert_eq!(
            parse_bytes(&img.bytes),
            Err(Error::Malformed),
            "align {align}"
        );
    }
    // A segment that ends with less than a note header.
    for extra in 1..12 {
        let mut img = with_notes(true, false, 4, &[i.note(4, b"GNU\0", 1, &[0; 16])]);
        let len = 32 + extra;
        img.phdr(64 + 56, Phdr::note(NOTES_AT, len, 4));
        img.bytes.resize(0x400, 0);
        assert_eq!(
            parse_bytes(&img.bytes),
            Err(Error::Malformed),
            "extra {extra}"
        );
    }
    // A note whose unpadded end fits but whose padding does not.
    let mut img = with_notes(true, false, 4, &[i.note(4, b"GNU\0", 1, &[0; 13])]);
    img.phdr(64 + 56, Phdr::note(NOTES_AT, 12 + 4 + 13, 4));
    assert_eq!(parse_bytes(&img.bytes), Err(Error::Malformed));
}

#[test]
fn a_damaged_segment_does_not_hide_a_good_one() {
    let id = fresh_id(20);
    let mut img = Image::new(true, true);
    let good = img.build_id_note(4, &id);
    let bad = img.raw_note(4, 4, 0x1000, 3, b"GNU\0", &[]);
    img.phdrs(
        64,
        &[
            Phdr::note(0x300, bad.len() as u64, 4),
            Phdr::note(0x401, 12, 4),
            Phdr::note(0x500, good.len() as u64, 4),
        ],
    );
    img.put(0x300, &bad);
    img.put(0x500, &good);
    assert_eq!(found(parse_bytes(&img.bytes)), id);
    // Without the good one, malformed.
    img.set_phnum(2);
    assert_eq!(parse_bytes(&img.bytes), Err(Error::Malformed));
}

#[test]
fn note_count_is_bounded() {
    let i = Image::new(true, false);
    let empty = i.note(4, b"", 0, b"");
    for before in [MAX_NOTES - 1, MAX_NOTES, 10_000] {
        let id = fresh_id(20);
        let mut notes = vec![empty.clone(); before];
        notes.push(i.build_id_note(4, &id));
        let img = with_notes(true, false, 4, &notes);
        let r = parse_bytes(&img.bytes);
        if before < MAX_NOTES {
            assert_eq!(found(r), id);
        } else {
            assert_eq!(r, Err(Error::Malformed), "{before} notes first");
        }
    }
    // 256 headers all describing the same 1 MiB segment of empty notes.
    let mut img = Image::new(true, false);
    img.phdrs(64, &vec![Phdr::note(0x8000, 0x10_0000, 4); MAX_PHDRS]);
    img.bytes.resize(0x10_8000, 0);
    assert_eq!(parse_bytes(&img.bytes), Err(Error::Malformed));
}

#[test]
fn build_id_cut_by_end_of_file() {
    let id = fresh_id(20);
    let i = Image::new(true, false);
    let img = with_notes(true, false, 4, &[i.build_id_note(4, &id)]);
    for cut in 1..=36 {
        let bytes = &img.bytes[..img.bytes.len() - cut];
        assert_eq!(parse_bytes(bytes), Err(Error::Malformed), "cut {cut}");
    }
}

/// A reader that fails after `ok` successful calls: an error, or more bytes
/// than asked for.
struct Failing<'a> {
    bytes: &'a [u8],
    ok: usize,
    overlong: bool,
}

impl Reader for Failing<'_> {
    type Bytes<'b>
        = &'b [u8]
    where
        Self: 'b;

    fn fetch(&mut self, offset: u64, len: usize) -> Result<&[u8], ReadError> {
        if self.ok == 0 {
            static LONG: [u8; FETCH_MAX + 1] = [0; FETCH_MAX + 1];
            return if self.overlong {
                Ok(&LONG[..len + 1])
            } else {
                Err(ReadError)
            };
        }
        self.ok -= 1;
        Ok(common::bytes_at(self.bytes, offset, len))
    }
}

#[test]
fn io_errors() {
    let id = fresh_id(20);
    let i = Image::new(true, false);
    let img = with_notes(
        true,
        false,
        4,
        &[i.note(4, b"GNU\0", 1, &[0; 16]), i.build_id_note(4, &id)],
    );
    // ehdr, phdr, phdr, note, note, desc: a failure at any step is an I/O
    // error.
    for ok in 0..6 {
        for overlong in [false, true] {
            let mut r = Failing {
                bytes: &img.bytes,
                ok,
                overlong,
            };
            assert_eq!(find_build_id(&mut r), Err(Error::Io), "after {ok} reads");
        }
    }
    let mut r = Failing {
        bytes: &img.bytes,
        ok: 6,
        overlong: false,
    };
    assert_eq!(find_build_id(&mut r).map(|b| b.as_bytes().to_vec()), Ok(id));
}

#[test]
fn statuses_match_the_abi() {
    assert_eq!(Error::NotElf.status(), 3);
    assert_eq!(Error::NoBuildId.status(), 4);
    assert_eq!(Error::Malformed.status(), 5);
    assert_eq!(Error::Io.status(), 6);
    let _ = PT_NOTE;
}

/// Writes a seed corpus for the fuzz target into `$MMAP3_FUZZ_SEEDS`:
/// `MMAP3_FUZZ_SEEDS=dir cargo test --test crafted -- --ignored`.
#[test]
#[ignore]
fn write_fuzz_seeds() {
    let Some(dir) = std::env::var_os("MMAP3_FUZZ_SEEDS") else {
        return;
    };
    let dir = std::path::PathBuf::from(dir);
    std::fs::create_dir_all(&dir).unwrap();
    let mut n = 0;
    let mut save = |bytes: &[u8]| {
        std::fs::write(dir.join(format!("seed-{n:03}")), bytes).unwrap();
        n += 1;
    };
    for class64 in [false, true] {
        for big in [false, true] {
            let i = Image::new(class64, big);
            let id = fresh_id(20);
            let notes = [
                i.note(4, b"GNU\0", 1, &[0; 16]),
                i.note(4, b"Go\0\0", 4, b"abc/def"),
                i.build_id_note(4, &id),
            ];
            save(&with_notes(class64, big, 4, &notes).bytes);
            save(
                &with_notes(
                    class64,
                    big,
                    8,
                    &[i.note(8, b"GNU\0", 5, &[0; 12]), i.build_id_note(8, &id)],
                )
                .bytes,
            );
            save(&with_notes(class64, big, 4, &[i.build_id_note(4, &[7; 21])]).bytes);
            save(
                &with_notes(
                    class64,
                    big,
                    4,
                    &[i.raw_note(4, 4, u32::MAX, 3, b"GNU\0", &id)],
                )
                .bytes,
            );
            let mut img = Image::new(class64, big);
            let note = img.build_id_note(4, &id);
            img.phdrs(
                0x100,
                &[
                    Phdr::note(0x300, 12, 4),
                    Phdr::note(0x400, note.len() as u64, 4),
                ],
            );
            img.put(0x300, &img.note(4, b"", 0, b""));
            img.put(0x400, &note);
            save(&img.bytes);
        }
    }
}

#[test]
fn the_worst_case_reads_exactly_the_cap() {
    // 256 program headers, 255 note segments with one 16-byte note each, and
    // a build-id in the last: every bound is reached.
    let id = fresh_id(20);
    let mut img = Image::new(true, false);
    let filler = img.note(4, b"abc\0", 1, b"");
    let note = img.build_id_note(4, &id);
    let mut phdrs: Vec<Phdr> = (0..MAX_PHDRS as u64 - 1)
        .map(|n| Phdr::note(0x8000 + 16 * n, 16, 4))
        .collect();
    phdrs.push(Phdr::note(0x9000, note.len() as u64, 4));
    img.phdrs(64, &phdrs);
    for p in &phdrs[..MAX_PHDRS - 1] {
        img.put(p.offset as usize, &filler);
    }
    img.put(0x9000, &note);
    let mut r = common::Counting::new(img.bytes.as_slice());
    let got = find_build_id(&mut r).unwrap();
    assert_eq!(got.as_bytes(), id.as_slice());
    assert_eq!(r.requested, mmap3_buildid::MAX_BYTES_READ);
    // One more note anywhere and the bound is exceeded.
    let mut more = img.clone();
    more.put(0x8000, &[filler.clone(), filler].concat());
    more.phdr(64, Phdr::note(0x8000, 32, 4));
    assert_eq!(parse_bytes(&more.bytes), Err(Error::Malformed));
}

#[test]
fn fuzz_corpus_replays() {
    // The committed fuzz corpus, replayed on stable: the cap and the
    // build-id length hold (parse_bytes asserts both).
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("fuzz/corpus/find_build_id");
    let mut n = 0;
    for entry in std::fs::read_dir(&dir).expect("fuzz corpus") {
        let bytes = std::fs::read(entry.unwrap().path()).unwrap();
        let _ = parse_bytes(&bytes);
        n += 1;
    }
    assert!(n > 0, "empty corpus in {}", dir.display());
}
