#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Turn the PERF_RECORD_MMAP2 records of a perf.data file into MMAP3 ones.

    tests/perf/mmap3-perf-data.py [--keep-mmap2] [--stat-ids] [--no-attr]
                                  [--mangle KIND [--mangle-file PATH]]
                                  [--pending KIND [--pending-file PATH]] IN OUT

Without the kernel module nothing writes PERF_RECORD_MMAP3 (type 23) into
a perf.data file, so this makes one for testing the perf tools: each MMAP2
record of IN becomes the MMAP3 record that the mmap3 module would have
written for the same mapping (same fields, same sample_id), with the
build-id and the status read from the file the record names, or taken from
the record when it was written with --buildid-mmap (then the device and inode
numbers, which such a record does not have, are zero, or with --stat-ids
those of the file now). With --keep-mmap2 the MMAP2 record is kept,
followed by the MMAP3 one.

The attributes that asked for MMAP/MMAP2 records (attr.mmap or attr.mmap2)
are changed as perf record --mmap3 sets them: attr.mmap3 (bit 40) instead
of attr.mmap, attr.mmap2 and attr.build_id; --no-attr leaves them, for a
file whose type 23 records a reader must not take for MMAP3 ones.

--mangle KIND damages the first MMAP3 record (of the file PATH, with
--mangle-file) for robustness tests: short16 (header.size 16), short96
(header.size 96: the fixed fields, no file name), nonul (the file name and
what follows filled up to header.size with 'A', no NUL), bidsize
(build_id_size 255), status (build_id_status 200), nofound (FOUND with
build_id_size 0); ioerror and skipped are well-formed records with the
status IO_ERROR or SKIPPED and no build-id; kernel gives the record the
kernel's cpumode (PERF_RECORD_MISC_KERNEL in misc), as if it mapped a
kernel module.

--pending KIND makes the first MMAP3 record (of the file PATH, with
--pending-file) one whose build-id the kernel had not read at mapping
time, as the MMAP3 series writes it then: the status PENDING (8), no
build-id, and an answer, a PERF_RECORD_MMAP3_BUILD_ID record (type 24,
the record's pid, tid, address, length, offset, device and inode numbers
and misc, then its build-id fields; its sample_id, with a time 1 ns
later, as the kernel writes the answer after the record), right after
it: answered (the answer has the record's build-id and status), early
(the same, the answer stored before the record, as when perf record read
the buffer of the CPU the answer was written on first), unanswered (no
answer), orphan (the record is left as it is, with its build-id, and an
answer with another build-id follows: an answer without a PENDING
record, which a reader ignores), other (the answer names another
mapping: its inode number + 1), notfinal (the answer says PENDING
itself, which the kernel never writes).

Only the data section changes size: the feature sections that follow it
are moved and their offsets in the header adjusted. Files in pipe mode,
of the other endianness, or with compressed records (record -z) are
refused.
"""
import argparse
import os
import stat
import struct
import sys

PERF_RECORD_MMAP2 = 10
PERF_RECORD_MMAP3 = 23
PERF_RECORD_MMAP3_BUILD_ID = 24
PERF_RECORD_COMPRESSED = 81
PERF_RECORD_MISC_MMAP_BUILD_ID = 1 << 14
PERF_RECORD_MISC_CPUMODE_MASK, PERF_RECORD_MISC_KERNEL = 7, 1

# enum perf_mmap3_build_id_status
FOUND, NO_FILE, NOT_ELF, NO_BUILD_ID, MALFORMED, IO_ERROR, SKIPPED, PENDING = range(1, 9)
STATUS_NAMES = {FOUND: "FOUND", NO_FILE: "NO_FILE", NOT_ELF: "NOT_ELF",
                NO_BUILD_ID: "NO_BUILD_ID", MALFORMED: "MALFORMED",
                IO_ERROR: "IO_ERROR", SKIPPED: "SKIPPED", PENDING: "PENDING"}

HEADER = struct.Struct("<8sQQ QQ QQ QQ 32s")  # struct perf_file_header
ATTR_FLAGS_OFFSET = 40  # the u64 of bit fields in struct perf_event_attr
ATTR_MMAP, ATTR_MMAP2, ATTR_BUILD_ID, ATTR_MMAP3 = 1 << 8, 1 << 23, 1 << 34, 1 << 40
MMAP2_FIXED = struct.Struct("<IHH II QQQ IIQQ II")  # 72 bytes
MMAP3_FIXED = struct.Struct("<IHH II QQQ IIQQ II BBH20s")  # 96 bytes
ANSWER_FIXED = struct.Struct("<IHH II QQQ IIQQ BBH20s")  # 88 bytes
assert MMAP2_FIXED.size == 72 and MMAP3_FIXED.size == 96 and ANSWER_FIXED.size == 88


def elf_build_id(path):
    """(status, build-id bytes) of the ELF file at path."""
    try:
        st = os.stat(path)
    except OSError:
        return IO_ERROR, b""
    if not stat.S_ISREG(st.st_mode):
        return SKIPPED, b""
    try:
        with open(path, "rb") as f:
            data = f.read()
    except OSError:
        return IO_ERROR, b""
    if data[:4] != b"\x7fELF":
        return NOT_ELF, b""
    try:
        cls, enc = data[4], data[5]
        if cls not in (1, 2) or enc not in (1, 2):
            return MALFORMED, b""
        e = "<" if enc == 1 else ">"
        if cls == 2:
            phoff, shoff = struct.unpack_from(e + "QQ", data, 0x20)
            phentsize, phnum, shentsize, shnum = struct.unpack_from(e + "HHHH", data, 0x36)
        else:
            phoff, shoff = struct.unpack_from(e + "II", data, 0x1c)
            phentsize, phnum, shentsize, shnum = struct.unpack_from(e + "HHHH", data, 0x2a)
        notes = []
        for i in range(phnum):
            off = phoff + i * phentsize
            if cls == 2:
                p_type, _, p_offset, _, _, p_filesz = struct.unpack_from(e + "IIQQQQ", data, off)
            else:
                p_type, p_offset, _, _, p_filesz = struct.unpack_from(e + "IIIII", data, off)
            if p_type == 4:  # PT_NOTE
                notes.append((p_offset, p_filesz))
        if not notes:
            for i in range(shnum):
                off = shoff + i * shentsize
                if cls == 2:
                    sh_type, = struct.unpack_from(e + "I", data, off + 4)
                    sh_offset, sh_size = struct.unpack_from(e + "QQ", data, off + 24)
                else:
                    sh_type, = struct.unpack_from(e + "I", data, off + 4)
                    sh_offset, sh_size = struct.unpack_from(e + "II", data, off + 16)
                if sh_type == 7:  # SHT_NOTE
                    notes.append((sh_offset, sh_size))
        for off, size in notes:
            end = off + size
            if end > len(data):
                return MALFORMED, b""
            while off + 12 <= end:
                namesz, descsz, n_type = struct.unpack_from(e + "III", data, off)
                name_off = off + 12
                desc_off = name_off + ((namesz + 3) & ~3)
                nxt = desc_off + ((descsz + 3) & ~3)
                if nxt > end:
                    return MALFORMED, b""
                if n_type == 3 and data[name_off:name_off + namesz] == b"GNU\0":
                    if descsz == 0 or descsz > 20:
                        return MALFORMED, b""
                    return FOUND, data[desc_off:desc_off + descsz]
                off = nxt
    except struct.error:
        return MALFORMED, b""
    return NO_BUILD_ID, b""


def build_id_of(filename, cache={}):
    if not filename.startswith("/") or filename in ("//anon",) or \
            filename.startswith(("/dev/zero", "/anon_hugepage", "/SYSV")):
        return NO_FILE, b""
    if filename not in cache:
        cache[filename] = elf_build_id(filename)
    return cache[filename]


def mmap2_to_mmap3(rec, stat_ids=False):
    (typ, misc, size, pid, tid, start, length, pgoff,
     maj, mnr, ino, ino_gen, prot, flags) = MMAP2_FIXED.unpack_from(rec)
    end = rec.index(b"\0", 72)
    filename = rec[72:end].decode("utf-8", "surrogateescape")
    padded = (end + 1 - 72 + 7) & ~7
    tail = rec[72 + padded:]  # the sample_id, if any
    if misc & PERF_RECORD_MISC_MMAP_BUILD_ID:
        # --buildid-mmap: the build-id replaced maj, min, ino, ino_generation.
        bid_size = rec[40]
        status, bid = FOUND, rec[44:44 + bid_size]
        maj = mnr = ino = ino_gen = 0
        if stat_ids:
            try:
                st = os.stat(filename)
                maj, mnr, ino = os.major(st.st_dev), os.minor(st.st_dev), st.st_ino
            except OSError:
                pass
        misc &= ~PERF_RECORD_MISC_MMAP_BUILD_ID
    else:
        status, bid = build_id_of(filename)
    name = rec[72:72 + padded]
    out = MMAP3_FIXED.pack(PERF_RECORD_MMAP3, misc, 96 + padded + len(tail),
                           pid, tid, start, length, pgoff, maj, mnr, ino, ino_gen,
                           prot, flags, len(bid), status, 0, bid.ljust(20, b"\0"))
    return out + name + tail, filename, status, bid


MANGLE_KINDS = ("short16", "short96", "nonul", "bidsize", "status", "nofound",
                "ioerror", "skipped", "kernel")


def mangle(rec, kind):
    """The MMAP3 record rec, damaged as KIND says."""
    rec = bytearray(rec)
    if kind == "short16":
        rec = rec[:16]
    elif kind == "short96":
        rec = rec[:96]
    elif kind == "nonul":
        rec[96:] = b"A" * (len(rec) - 96)
    elif kind == "bidsize":
        rec[72] = 255
    elif kind == "status":
        rec[73] = 200
    elif kind == "nofound":
        rec[72], rec[73] = 0, FOUND
    elif kind == "kernel":
        misc, = struct.unpack_from("<H", rec, 4)
        misc = (misc & ~PERF_RECORD_MISC_CPUMODE_MASK) | PERF_RECORD_MISC_KERNEL
        struct.pack_into("<H", rec, 4, misc)
    elif kind in ("ioerror", "skipped"):
        rec[72], rec[73] = 0, IO_ERROR if kind == "ioerror" else SKIPPED
        rec[76:96] = bytes(20)
    struct.pack_into("<H", rec, 6, len(rec))
    return bytes(rec)


PENDING_KINDS = ("answered", "early", "unanswered", "orphan", "other", "notfinal")
SAMPLE_TID, SAMPLE_TIME = 1 << 1, 1 << 2
ATTR_SAMPLE_ID_ALL = 1 << 18


def pending(rec, kind, time_off):
    """The MMAP3 record rec as KIND says (PENDING, ...) and its answer, if
    any; time_off: where the time is in the sample_id, or None."""
    (typ, misc, size, pid, tid, start, length, pgoff, maj, mnr, ino, ino_gen,
     prot, flags, bid_size, status, _, bid) = MMAP3_FIXED.unpack_from(rec)
    end = rec.index(b"\0", 96)
    tail = rec[96 + ((end + 1 - 96 + 7) & ~7):]  # the sample_id, if any
    rec = bytearray(rec)
    if kind != "orphan":
        rec[72], rec[73] = 0, PENDING
        rec[76:96] = bytes(20)
    if kind == "unanswered":
        return bytes(rec)
    if kind == "orphan":
        bid = bytes(reversed(bid[:bid_size])).ljust(20, b"\0")
    if kind == "other":
        ino += 1
    if kind == "notfinal":
        bid_size, status, bid = 0, PENDING, bytes(20)
    answer = ANSWER_FIXED.pack(PERF_RECORD_MMAP3_BUILD_ID, misc, 88 + len(tail), pid, tid,
                               start, length, pgoff, maj, mnr, ino, ino_gen,
                               bid_size, status, 0, bid)
    tail = bytearray(tail)
    if time_off is not None and time_off + 8 <= len(tail):
        t, = struct.unpack_from("<Q", tail, time_off)
        struct.pack_into("<Q", tail, time_off, t + 1)
    if kind == "early":
        return answer + bytes(tail) + bytes(rec)
    return bytes(rec) + answer + bytes(tail)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--keep-mmap2", action="store_true",
                    help="keep each MMAP2 record before its MMAP3 copy")
    ap.add_argument("--stat-ids", action="store_true",
                    help="device and inode numbers from stat() for --buildid-mmap records")
    ap.add_argument("--no-attr", action="store_true",
                    help="leave the attributes as they are (no attr.mmap3)")
    ap.add_argument("--mangle", choices=MANGLE_KINDS,
                    help="damage the first MMAP3 record (robustness tests)")
    ap.add_argument("--mangle-file", default="",
                    help="damage the first MMAP3 record of this file instead")
    ap.add_argument("--pending", choices=PENDING_KINDS,
                    help="make the first MMAP3 record PENDING, with an answer or not")
    ap.add_argument("--pending-file", default="",
                    help="make the first MMAP3 record of this file PENDING instead")
    ap.add_argument("-v", "--verbose", action="store_true")
    ap.add_argument("input")
    ap.add_argument("output")
    args = ap.parse_args()

    with open(args.input, "rb") as f:
        buf = f.read()
    (magic, hdr_size, attr_size, attrs_off, attrs_size, data_off, data_size,
     et_off, et_size, features) = HEADER.unpack_from(buf)
    if magic != b"PERFILE2":
        sys.exit(f"{args.input}: not a little-endian perf.data file (pipe mode is not supported)")

    # Where the time is in a record's sample_id (that of the first attr).
    sample_type, = struct.unpack_from("<Q", buf, attrs_off + 24)
    flags, = struct.unpack_from("<Q", buf, attrs_off + ATTR_FLAGS_OFFSET)
    time_off = None
    if flags & ATTR_SAMPLE_ID_ALL and sample_type & SAMPLE_TIME:
        time_off = 8 if sample_type & SAMPLE_TID else 0

    data = buf[data_off:data_off + data_size]
    out = bytearray()
    pos = converted = 0
    while pos + 8 <= len(data):
        typ, misc, size = struct.unpack_from("<IHH", data, pos)
        if size < 8 or pos + size > len(data):
            sys.exit(f"{args.input}: bad record at data offset {pos}")
        rec = data[pos:pos + size]
        if typ == PERF_RECORD_COMPRESSED:
            sys.exit(f"{args.input}: compressed records (perf record -z) are not supported")
        if typ == PERF_RECORD_MMAP2:
            if args.keep_mmap2:
                out += rec
            rec, filename, status, bid = mmap2_to_mmap3(rec, args.stat_ids)
            converted += 1
            if args.mangle and filename.endswith(args.mangle_file):
                rec = mangle(rec, args.mangle)
                args.mangle = None
            if args.pending and filename.endswith(args.pending_file):
                rec = pending(rec, args.pending, time_off)
                args.pending = None
            if args.verbose:
                print(f"MMAP3 {STATUS_NAMES[status]:12} {bid.hex() or '-':40} {filename}")
        out += rec
        pos += size

    delta = len(out) - data_size
    # Feature sections: one perf_file_section per bit set in adds_features,
    # right after the data; every offset past the data moves by delta.
    nfeat = bin(int.from_bytes(features, "little")).count("1")
    rest = bytearray(buf[data_off + data_size:])
    for i in range(nfeat):
        off, size = struct.unpack_from("<QQ", rest, i * 16)
        if off >= data_off + data_size:
            off += delta
        struct.pack_into("<QQ", rest, i * 16, off, size)
    head = bytearray(buf[:data_off])
    if not args.no_attr:
        # struct perf_file_attr: the attr, then a perf_file_section of ids.
        for off in range(attrs_off, attrs_off + attrs_size, attr_size):
            flags, = struct.unpack_from("<Q", head, off + ATTR_FLAGS_OFFSET)
            if flags & (ATTR_MMAP | ATTR_MMAP2):
                flags &= ~(ATTR_MMAP | ATTR_MMAP2 | ATTR_BUILD_ID)
                struct.pack_into("<Q", head, off + ATTR_FLAGS_OFFSET, flags | ATTR_MMAP3)
    struct.pack_into("<QQ", head, 40, data_off, len(out))  # header.data
    if et_size and et_off >= data_off + data_size:
        struct.pack_into("<Q", head, 56, et_off + delta)  # header.event_types
    with open(args.output, "wb") as f:
        f.write(head + out + rest)
    print(f"{args.output}: {converted} MMAP2 records turned into MMAP3"
          f"{' (MMAP2 kept)' if args.keep_mmap2 else ''}")


if __name__ == "__main__":
    main()
