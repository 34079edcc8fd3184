#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Read, and write for robustness tests, what perf inject --convert-mmap3 makes.

    tests/perf/mmap3-status-data.py stat FILE
    tests/perf/mmap3-status-data.py minimal [--big-endian] [--pipe]
                                   [--mangle KIND] IN OUT

perf inject --convert-mmap3 writes each PERF_RECORD_MMAP3 (type 23) of a
perf.data file as a PERF_RECORD_MMAP2 (type 10), which readers without
MMAP3 support read, and what the MMAP2 record cannot hold in the header
feature HEADER_MMAP3_STATUS (bit 35): u32 entry_size, u32 nr, then nr
entries (u64 key, start, ino, ino_generation; u32 maj, min, pid; u16 misc;
u8 build_id_status, build_id_size), the key being the ordinal of the MMAP2
record among the MMAP2 records of the data. In pipe mode the entries come
in PERF_RECORD_HEADER_FEATURE records (type 80, feat_id 35) before the
records they describe. This is an independent reader of that format (it
shares no code with perf):

stat FILE prints the number of records of each type in the data of FILE
(a perf.data file or a pipe-mode stream, little-endian), how many MMAP2
records have a build-id (PERF_RECORD_MISC_MMAP_BUILD_ID), and the
HEADER_MMAP3_STATUS entries, one line each, in the form

    records MMAP2 17
    mmap2 build-id 15 inode 2
    status 0 pid 1234 start 0x401000 FOUND fe:00 10028228 0

minimal IN OUT writes a small perf.data file from a converted IN: one attr
(task-clock, no sample_id_all), IN's MMAP2 records without their sample_id,
HEADER_HOSTNAME and IN's HEADER_MMAP3_STATUS (from its header, or from its
feature records in pipe mode), little-endian or with --big-endian as a
big-endian machine writes it, as a file or with --pipe as a pipe-mode
stream (the entries in one feature record before the MMAP2 records). --mangle damages the feature:
truncated (its section or record 8 bytes short), hugecount (nr 0xffffffff),
entrysize (entry_size 12), bigentry (entry_size 56, 8 more bytes per entry
that a reader skips: not damage, a later version of the format), keys (the
first two keys swapped: they must grow), mismatch (the first entry's start
moved by a page), status (the status of the first entry without a build-id
set to 200), beyond (one more entry, for an MMAP2 record past the last).
"""
import argparse
import struct
import sys

PERF_RECORD_MMAP2 = 10
PERF_RECORD_MMAP3 = 23
PERF_RECORD_HEADER_ATTR = 64
PERF_RECORD_HEADER_FEATURE = 80
PERF_RECORD_MISC_MMAP_BUILD_ID = 1 << 14
HEADER_HOSTNAME = 3
HEADER_MMAP3_STATUS = 35
MAGIC = b"PERFILE2"
NAMES = {1: "MMAP", 2: "LOST", 3: "COMM", 4: "EXIT", 7: "FORK", 9: "SAMPLE",
         10: "MMAP2", 23: "MMAP3", 64: "HEADER_ATTR", 67: "HEADER_BUILD_ID",
         68: "FINISHED_ROUND", 69: "ID_INDEX", 73: "THREAD_MAP", 74: "CPU_MAP",
         78: "EVENT_UPDATE", 79: "TIME_CONV", 80: "HEADER_FEATURE", 81: "COMPRESSED",
         82: "FINISHED_INIT"}
STATUS = {1: "FOUND", 2: "NO_FILE", 3: "NOT_ELF", 4: "NO_BUILD_ID",
          5: "MALFORMED", 6: "IO_ERROR", 7: "SKIPPED"}
ENTRY = "QQQQIIIHBB"  # struct mmap3_status_entry, 48 bytes
assert struct.calcsize("<" + ENTRY) == 48


class PerfData:
    """The records and features of a little-endian perf.data file or stream."""

    def __init__(self, path):
        with open(path, "rb") as f:
            self.buf = f.read()
        if self.buf[:8] != MAGIC:
            sys.exit(f"{path}: not a little-endian perf.data file")
        size, = struct.unpack_from("<Q", self.buf, 8)
        self.pipe = size == 16
        self.features = {}  # bit: bytes, from the header or feature records
        self.status_records = []  # HEADER_MMAP3_STATUS payloads, pipe mode
        if self.pipe:
            self.data = self.buf[16:]
            self.attrs = []
            return
        (_, _, self.attr_size, attrs_off, attrs_size, data_off, data_size,
         _, _) = struct.unpack_from("<8sQQQQQQQQ", self.buf)
        self.attrs = [self.buf[o:o + self.attr_size - 16]
                      for o in range(attrs_off, attrs_off + attrs_size, self.attr_size)]
        self.data = self.buf[data_off:data_off + data_size]
        bits = int.from_bytes(self.buf[72:104], "little")
        sec = data_off + data_size
        for bit in range(256):
            if bits >> bit & 1:
                off, sz = struct.unpack_from("<QQ", self.buf, sec)
                self.features[bit] = self.buf[off:off + sz]
                sec += 16

    def records(self):
        pos = 0
        while pos + 8 <= len(self.data):
            typ, misc, size = struct.unpack_from("<IHH", self.data, pos)
            if size < 8 or pos + size > len(self.data):
                sys.exit(f"bad record at data offset {pos}")
            rec = self.data[pos:pos + size]
            if typ == PERF_RECORD_HEADER_FEATURE:
                feat, = struct.unpack_from("<Q", rec, 8)
                if feat == HEADER_MMAP3_STATUS:
                    self.status_records.append(rec[16:])
                elif feat not in self.features and size > 16:
                    self.features[feat] = rec[16:]
            yield typ, misc, rec
            pos += size


def parse_status(payload):
    """The entries of a HEADER_MMAP3_STATUS payload, as tuples."""
    entry_size, nr = struct.unpack_from("<II", payload)
    if entry_size < 48 or 8 + nr * entry_size > len(payload):
        sys.exit(f"HEADER_MMAP3_STATUS: entry size {entry_size}, {nr} entries in {len(payload)} bytes")
    return [struct.unpack_from("<" + ENTRY, payload, 8 + i * entry_size) for i in range(nr)]


def cmd_stat(args):
    pd = PerfData(args.file)
    counts, bid, ino = {}, 0, 0
    for typ, misc, _ in pd.records():
        counts[typ] = counts.get(typ, 0) + 1
        if typ == PERF_RECORD_MMAP2:
            if misc & PERF_RECORD_MISC_MMAP_BUILD_ID:
                bid += 1
            else:
                ino += 1
    for typ in sorted(counts):
        print(f"records {NAMES.get(typ, typ)} {counts[typ]}")
    print(f"mmap2 build-id {bid} inode {ino}")
    payloads = ([pd.features[HEADER_MMAP3_STATUS]] if HEADER_MMAP3_STATUS in pd.features
                else []) + pd.status_records
    for p in payloads:
        for (key, start, i, gen, maj, mnr, pid, misc, status, size) in parse_status(p):
            print(f"status {key} pid {pid} start {start:#x} {STATUS.get(status, status)} "
                  f"{maj:02x}:{mnr:02x} {i} {gen}")


def mangle(payload, kind, mmap2_form):
    """HEADER_MMAP3_STATUS payload damaged as KIND says, and the real size
    of its entries (which a damaged entry_size does not give)."""
    entry_size, nr = struct.unpack_from("<II", payload)
    entries = [list(e) for e in parse_status(payload)]
    if kind == "bigentry":
        return struct.pack("<II", 56, nr) + b"".join(
            struct.pack("<" + ENTRY, *e) + b"\xee" * 8 for e in entries), 56
    if kind == "truncated":
        return payload[:-8], 48
    if kind == "hugecount":
        return struct.pack("<II", entry_size, 0xffffffff) + payload[8:], 48
    if kind == "entrysize":
        return struct.pack("<II", 12, nr) + payload[8:], 48
    if kind == "keys":
        entries[0][0], entries[1][0] = entries[1][0], entries[0][0]
    elif kind == "mismatch":
        entries[0][1] += 4096
    elif kind == "status":
        e = next(e for e in entries if not mmap2_form[e[0]])
        e[8] = 200
    elif kind == "beyond":
        e = list(entries[-1])
        e[0] = len(mmap2_form)
        entries.append(e)
        nr += 1
    return struct.pack("<II", 48, nr) + b"".join(struct.pack("<" + ENTRY, *e) for e in entries), 48


def swap_status(payload, stride, e):
    """The little-endian payload in the byte order e: its u32, u64 and u16
    fields, entry by entry (stride bytes apart), swapped; the bytes, and
    what is left of a cut entry, as they are."""
    out = struct.pack(e + "II", *struct.unpack_from("<II", payload))
    pos = 8
    while pos + 48 <= len(payload):
        out += struct.pack(e + "QQQQIIIH", *struct.unpack_from("<QQQQIIIH", payload, pos))
        out += payload[pos + 46:pos + stride]
        pos += stride
    return out + payload[pos:]


def cmd_minimal(args):
    pd = PerfData(args.input)
    e = ">" if args.big_endian else "<"
    mmap2s, mmap2_form = [], []
    for typ, misc, rec in pd.records():
        if typ != PERF_RECORD_MMAP2:
            continue
        end = rec.index(b"\0", 72)
        name = rec[72:end + 1]
        name += b"\0" * (-len(name) % 8)
        f = struct.unpack_from("<IIQQQ", rec, 8)
        if misc & PERF_RECORD_MISC_MMAP_BUILD_ID:
            ids = rec[40:64]  # build_id_size, reserved, build-id: bytes
        else:
            ids = struct.pack(e + "IIQQ", *struct.unpack_from("<IIQQ", rec, 40))
        prot_flags = struct.pack(e + "II", *struct.unpack_from("<II", rec, 64))
        size = 72 + len(name)
        mmap2s.append(struct.pack(e + "IHH", typ, misc, size) + struct.pack(e + "IIQQQ", *f) +
                      ids + prot_flags + name)
        mmap2_form.append(bool(misc & PERF_RECORD_MISC_MMAP_BUILD_ID))
    if HEADER_MMAP3_STATUS in pd.features:
        payload = pd.features[HEADER_MMAP3_STATUS]
    else:
        entries = [e for p in pd.status_records for e in parse_status(p)]
        payload = struct.pack("<II", 48, len(entries)) + b"".join(
            struct.pack("<" + ENTRY, *x) for x in entries)
    stride = 48
    if args.mangle:
        payload, stride = mangle(payload, args.mangle, mmap2_form)
    nr, = struct.unpack_from("<I", payload, 4)
    status = swap_status(payload, stride, e)
    host = b"mmap3-test"
    host += b"\0" * (64 - len(host))
    hostname = struct.pack(e + "I", len(host)) + host
    # struct perf_event_attr, PERF_ATTR_SIZE_VER0: task-clock, sample_type
    # IP | TID | TIME | PERIOD, no flags (no sample_id_all).
    attr = struct.pack(e + "IIQQQQQIIQ", 1, 64, 1, 250000, 0x107, 0, 0, 0, 0, 0)
    assert len(attr) == 64
    data = b"".join(mmap2s)
    magic = MAGIC[::-1] if args.big_endian else MAGIC
    if args.pipe:
        def rec(typ, body):
            return struct.pack(e + "IHH", typ, 0, 8 + len(body)) + body

        def feature(bit, body):
            return rec(PERF_RECORD_HEADER_FEATURE, struct.pack(e + "Q", bit) + body)
        out = magic + struct.pack(e + "Q", 16)
        out += rec(PERF_RECORD_HEADER_ATTR, attr)
        out += feature(HEADER_HOSTNAME, hostname)
        out += feature(HEADER_MMAP3_STATUS + 1, b"")  # HEADER_LAST_FEATURE: the mark
        out += feature(HEADER_MMAP3_STATUS, status) + data
    else:
        attrs_off = 104
        data_off = attrs_off + 80
        feat_off = data_off + len(data)
        sec_hostname = feat_off + 32
        sec_status = sec_hostname + len(hostname)
        bits = (1 << HEADER_HOSTNAME) | (1 << HEADER_MMAP3_STATUS)
        bitmap = struct.pack(e + "QQQQ", bits & (2**64 - 1), bits >> 64, 0, 0)
        out = magic + struct.pack(e + "QQQQQQQQ", 104, 80, attrs_off, 80, data_off, len(data), 0, 0)
        out += bitmap
        out += attr + struct.pack(e + "QQ", 0, 0)
        out += data
        out += struct.pack(e + "QQ", sec_hostname, len(hostname))
        out += struct.pack(e + "QQ", sec_status, len(status))
        out += hostname + status
    with open(args.output, "wb") as f:
        f.write(out)
    print(f"{args.output}: {len(mmap2s)} MMAP2 records, {nr} HEADER_MMAP3_STATUS entries"
          f"{', big-endian' if args.big_endian else ''}{', pipe mode' if args.pipe else ''}"
          f"{', ' + args.mangle if args.mangle else ''}")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    st = sub.add_parser("stat")
    st.add_argument("file")
    mi = sub.add_parser("minimal")
    mi.add_argument("--big-endian", action="store_true")
    mi.add_argument("--pipe", action="store_true")
    mi.add_argument("--mangle", choices=("truncated", "hugecount", "entrysize", "bigentry",
                                         "keys", "mismatch", "status", "beyond"))
    mi.add_argument("input")
    mi.add_argument("output")
    args = ap.parse_args()
    {"stat": cmd_stat, "minimal": cmd_minimal}[args.cmd](args)


if __name__ == "__main__":
    main()
