#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Seeds and seeded, structure-aware mutants of perf.data files with MMAP3 records.

    tests/perf/mmap3-fuzz.py rewrite [--big-endian] [--pipe] IN OUT
    tests/perf/mmap3-fuzz.py mutate --seed S (--count N | --index I) OUTDIR SEED...
    tests/perf/mmap3-fuzz.py classes

rewrite writes the little-endian perf.data file IN (file mode, as perf
record or perf inject writes it) again, as a big-endian machine writes it
with --big-endian, as a pipe-mode stream with --pipe: its attrs (the fields
perf byte-swaps, the bit fields in the big-endian order), its MMAP3,
MMAP3_BUILD_ID, MMAP2, MMAP, COMM, FORK, EXIT, SAMPLE and FINISHED_ROUND
records (every field in the byte order, the sample_id of sample_id_all
too; other records are left out) and the features HEADER_HOSTNAME,
HEADER_NRCPUS and HEADER_MMAP3_STATUS when IN has them (the other features
are left out). It shares no code with perf.

mutate writes mutants of the SEED files (perf.data files or pipe-mode
streams, either byte order) into OUTDIR, NNNN.data for mutant NNNN, and
prints one line per mutant: "NNNN CLASS SEED-NAME what was done". Mutant i
is made from SEED number (i // len(CLASSES)) % len(SEEDS) by class
CLASSES[i % len(CLASSES)], with a random.Random seeded with "S/i" alone:
--index I writes mutant I only, the same bytes as --count N writes for it
(given the same seed files); a mutant that would be its seed's bytes
is drawn again. classes prints the classes, in order. The targets are the seed's MMAP3 records, or
its MMAP2 records when it has none (the output of perf inject
--convert-mmap3, whose MMAP2 records HEADER_MMAP3_STATUS turns back into
MMAP3 ones). The classes:

  size-unaligned  a target's header.size off by 1 to 7 (not a multiple of 8)
  size-small      a target's header.size below its fixed fields (0 to 100)
  size-big        a target's header.size past its end: into the next
                  records, past the data's end, up to 0xffff
  bidsize         build_id_size 0 to 255 (an MMAP2 target: its build-id
                  form's size byte, the misc bit set)
  status          build_id_status 0 to 255, with or without a build-id
                  (MMAP2 targets: an entry of HEADER_MMAP3_STATUS)
  status-table    HEADER_MMAP3_STATUS (of the seed two places on, or the
                  next with one, when the seed has none): larger entries
                  (56 to 1024 bytes), a bad entry_size, nr, an entry's key,
                  start, pid, misc, status or size, the payload cut
  name            the file name: without a NUL up to header.size (into the
                  sample_id), empty, not UTF-8, printf conversions, names
                  perf gives a meaning ([kernel.kallsyms]_text, [vdso],
                  //anon, ...), longer (the record grows)
  sample-id       the sample_id tail cut (header.size follows, or not), or
                  attr.sample_id_all / the sample_type's id bits changed
  type-misc       a target's type changed (MMAP, MMAP2, COMM, 22, 24, ...),
                  or another record's made 23; misc bits flipped (cpumode,
                  MMAP_DATA, MMAP_BUILD_ID, ...)
  feature         the feature sections (file) or HEADER_FEATURE records
                  (pipe): offsets, sizes, ids, the adds_features bits, the
                  HEADER_MMAP3_STATUS payload's entry_size, nr and bytes
  header          the file header's data section (cut in a target, moved),
                  the attr's mmap3, mmap2, build_id, sample_id_all bits,
                  HEADER_ATTR records in pipe mode
  truncate        the file cut in a target or right after it
  flip            1 to 8 bytes of targets (and of the HEADER_MMAP3_STATUS
                  payload) set to random values
  sample          a SAMPLE record's fields, where the attr's sample_type
                  puts them: the ip at, just inside or just outside an
                  edge of a target's mapping (half the time one whose
                  status is not FOUND), in the target's thread and
                  cpumode, the time perhaps the target's own or just
                  before it; the pid/tid of a thread without maps or of
                  none; the ip 0, huge, a callchain context, in the
                  kernel; the time 0, huge, before a target's; the period,
                  cpu, id, stream_id, identifier or addr 0, 1 or huge; the
                  cpumode in misc (kernel, user, guest, ...) or misc bits
  sample-layout   a SAMPLE record's layout: header.size cut (its fields run
                  off the end), or wrong; or PERF_SAMPLE_CALLCHAIN added to
                  the attrs, each sample a callchain (its cpumode's context,
                  its ip), then one sample's callchain nr huge, past the
                  record's end or 0, its entries PERF_CONTEXT_* markers
                  and addresses at mapping edges, or longer than perf's
                  max stack (126 to 1024 entries)
  multi           2 to 4 of the above at once
"""
import argparse
import os
import random
import struct
import sys

PERF_RECORD_MMAP = 1
PERF_RECORD_COMM = 3
PERF_RECORD_EXIT = 4
PERF_RECORD_FORK = 7
PERF_RECORD_SAMPLE = 9
PERF_RECORD_MMAP2 = 10
PERF_RECORD_MMAP3 = 23
PERF_RECORD_MMAP3_BUILD_ID = 24
PERF_RECORD_HEADER_ATTR = 64
PERF_RECORD_FINISHED_ROUND = 68
PERF_RECORD_HEADER_FEATURE = 80
MISC_MMAP_BUILD_ID = 1 << 14
MISC_CPUMODE_MASK, MISC_KERNEL = 7, 1
# PERF_CONTEXT_* callchain markers (u64): HV, KERNEL, USER, USER_DEFERRED,
# GUEST, GUEST_KERNEL, GUEST_USER, MAX
CONTEXTS = [2**64 - v for v in (32, 128, 512, 640, 2048, 2176, 2560, 4095)]
CONTEXT_KERNEL, CONTEXT_USER = CONTEXTS[1], CONTEXTS[2]
HEADER_HOSTNAME = 3
HEADER_NRCPUS = 7
HEADER_MMAP3_STATUS = 35
MAGIC = b"PERFILE2"

# sample_type bits
S_IP, S_TID, S_TIME, S_ADDR, S_READ, S_CALLCHAIN, S_ID, S_CPU, S_PERIOD, S_STREAM_ID, \
    S_RAW = (1 << i for i in range(11))
S_IDENTIFIER = 1 << 16
# attr bit fields (bit numbers)
A_MMAP, A_SAMPLE_ID_ALL, A_MMAP2, A_BUILD_ID, A_MMAP3 = 8, 18, 23, 34, 40


def bitrev8(b):
    return int(f"{b:08b}"[::-1], 2)


class Perf:
    """A perf.data file or pipe-mode stream, either byte order: the bytes
    before the data (file mode), the records, the feature sections."""

    def __init__(self, buf):
        if buf[:8] == MAGIC:
            self.e = "<"
        elif buf[:8] == MAGIC[::-1]:
            self.e = ">"
        else:
            sys.exit("not a perf.data file")
        e = self.e
        size, = struct.unpack_from(e + "Q", buf, 8)
        self.pipe = size == 16
        self.features = []  # [bit, payload] in section order (file mode)
        if self.pipe:
            self.head = bytearray(buf[:16])
            data = buf[16:]
        else:
            (_, _, self.attr_size, self.attrs_off, self.attrs_size, data_off, data_size,
             _, _) = struct.unpack_from(e + "8sQQQQQQQQ", buf)
            self.head = bytearray(buf[:data_off])
            data = buf[data_off:data_off + data_size]
            bits = int.from_bytes(buf[72:104], "little" if e == "<" else "big")
            if e == ">":  # a u64[4] bitmap: the words in order, each swapped
                bits = sum(int.from_bytes(buf[72 + 8 * w:80 + 8 * w], "big") << (64 * w)
                           for w in range(4))
            sec = data_off + data_size
            for bit in range(256):
                if bits >> bit & 1:
                    off, sz = struct.unpack_from(e + "QQ", buf, sec)
                    self.features.append([bit, bytearray(buf[off:off + sz])])
                    sec += 16
        self.records = []  # bytearrays
        pos = 0
        while pos + 8 <= len(data):
            _, _, rsize = struct.unpack_from(e + "IHH", data, pos)
            if rsize < 8 or pos + rsize > len(data):
                sys.exit(f"bad record at data offset {pos}")
            self.records.append(bytearray(data[pos:pos + rsize]))
            pos += rsize
        self.tail = b""  # bytes appended after everything (mutants)

    def typ(self, rec):
        return struct.unpack_from(self.e + "I", rec)[0]

    def attrs(self):
        """(container, offset) of each attr: the head (file) or a record."""
        if self.pipe:
            return [(r, 8) for r in self.records if self.typ(r) == PERF_RECORD_HEADER_ATTR]
        return [(self.head, o) for o in range(self.attrs_off, self.attrs_off + self.attrs_size,
                                              self.attr_size)]

    def attr_bits(self, buf, off):
        """The attr bit fields as an int (bit n = field bit n)."""
        raw = bytes(buf[off + 40:off + 48])
        if self.e == ">":
            raw = bytes(bitrev8(b) for b in raw)
        return int.from_bytes(raw, "little")

    def set_attr_bits(self, buf, off, bits):
        raw = bits.to_bytes(8, "little")
        if self.e == ">":
            raw = bytes(bitrev8(b) for b in raw)
        buf[off + 40:off + 48] = raw

    def serialize(self):
        e = self.e
        data = b"".join(self.records)
        if self.pipe:
            return bytes(self.head) + data + self.tail
        head = bytearray(self.head)
        data_off = len(head)
        struct.pack_into(e + "QQ", head, 40, data_off, len(data))
        bits = 0
        for bit, _ in self.features:
            bits |= 1 << bit
        if e == "<":
            head[72:104] = bits.to_bytes(32, "little")
        else:
            head[72:104] = b"".join(((bits >> (64 * w)) & (2**64 - 1)).to_bytes(8, "big")
                                    for w in range(4))
        off = data_off + len(data) + 16 * len(self.features)
        table, payloads = b"", b""
        for _, p in self.features:
            table += struct.pack(e + "QQ", off, len(p))
            payloads += p
            off += len(p)
        return bytes(head) + data + table + payloads + self.tail


# --- rewrite --------------------------------------------------------------

def sample_id_fields(st):
    """The struct formats of a sample_id of sample_type st, in order."""
    order = ((S_TID, "II"), (S_TIME, "Q"), (S_ID, "Q"), (S_STREAM_ID, "Q"),
             (S_CPU, "II"), (S_IDENTIFIER, "Q"))
    return [fmt for bit, fmt in order if st & bit]


def sample_fields(st):
    """(bit, struct format, offset) of each field of a SAMPLE record of
    sample_type st up to PERIOD (READ, CALLCHAIN and the others follow)."""
    order = ((S_IDENTIFIER, "Q"), (S_IP, "Q"), (S_TID, "II"), (S_TIME, "Q"), (S_ADDR, "Q"),
             (S_ID, "Q"), (S_STREAM_ID, "Q"), (S_CPU, "II"), (S_PERIOD, "Q"))
    out, off = [], 8
    for bit, fmt in order:
        if st & bit:
            out.append((bit, fmt, off))
            off += struct.calcsize("<" + fmt)
    return out


def swap_fields(buf, pos, fmts, e):
    """buf[pos:] rewritten field by field from little-endian to e."""
    out = b""
    for f in fmts:
        n = struct.calcsize("<" + f)
        out += struct.pack(e + f, *struct.unpack_from("<" + f, buf, pos))
        pos += n
    return out, pos


def rewrite_attr(attr, e):
    """A little-endian struct perf_event_attr written in byte order e: the
    fields perf_event__attr_swap() swaps, the bit fields' bytes bit-reversed."""
    a = bytearray(attr)
    size = len(a)
    fields = [(0, "I"), (4, "I"), (8, "Q"), (16, "Q"), (24, "Q"), (32, "Q"), (48, "I"),
              (52, "I"), (56, "Q"), (64, "Q"), (72, "Q"), (80, "Q"), (88, "I"), (104, "I"),
              (108, "H"), (112, "I")]
    for off, f in fields:
        if off + struct.calcsize(f) <= size:
            struct.pack_into(e + f, a, off, *struct.unpack_from("<" + f, attr, off))
    if e == ">":
        a[40:48] = bytes(bitrev8(b) for b in attr[40:48])
    return bytes(a)


def swap_status(payload, e):
    """A little-endian HEADER_MMAP3_STATUS payload in byte order e."""
    entry_size, nr = struct.unpack_from("<II", payload)
    out = struct.pack(e + "II", entry_size, nr)
    pos = 8
    while pos + 48 <= len(payload) and entry_size >= 48:
        out += struct.pack(e + "QQQQIIIH", *struct.unpack_from("<QQQQIIIH", payload, pos))
        out += payload[pos + 46:pos + entry_size]
        pos += entry_size
    return out + payload[pos:]


def cmd_rewrite(args):
    with open(args.input, "rb") as f:
        src = Perf(f.read())
    if src.e != "<" or src.pipe:
        sys.exit(f"{args.input}: not a little-endian perf.data file")
    e = ">" if args.big_endian else "<"
    attrs = [bytes(src.head[o:o + src.attr_size - 16]) for _, o in src.attrs()]
    types = {struct.unpack_from("<Q", a, 24)[0] for a in attrs}
    flags = {struct.unpack_from("<Q", a, 40)[0] >> A_SAMPLE_ID_ALL & 1 for a in attrs}
    if len(types) != 1 or len(flags) != 1:
        sys.exit(f"{args.input}: attrs of different sample_type or sample_id_all")
    st, sid_all = types.pop(), flags.pop()
    if st & ~(S_IP | S_TID | S_TIME | S_ADDR | S_ID | S_CPU | S_PERIOD | S_STREAM_ID |
              S_IDENTIFIER):
        sys.exit(f"{args.input}: sample_type {st:#x} has fields this does not swap")
    sid = sample_id_fields(st) if sid_all else []
    sid_len = sum(struct.calcsize("<" + f) for f in sid)
    records, skipped = [], {}
    for rec in src.records:
        typ, misc, size = struct.unpack_from("<IHH", rec)
        if typ in (PERF_RECORD_MMAP3, PERF_RECORD_MMAP2, PERF_RECORD_MMAP, PERF_RECORD_COMM):
            fixed = {PERF_RECORD_MMAP3: ["II", "QQQ", "II", "QQ", "II", "BBH", "20s"],
                     PERF_RECORD_MMAP2: ["II", "QQQ", "II", "QQ", "II"],
                     PERF_RECORD_MMAP: ["II", "QQQ"], PERF_RECORD_COMM: ["II"]}[typ]
            if typ == PERF_RECORD_MMAP2 and misc & MISC_MMAP_BUILD_ID:
                fixed = ["II", "QQQ", "24s", "II"]
            body, pos = swap_fields(rec, 8, fixed, e)
            name_end = size - sid_len
            body += rec[pos:name_end]
            tail, _ = swap_fields(rec, name_end, sid, e)
            body += tail
        elif typ == PERF_RECORD_MMAP3_BUILD_ID:
            body, pos = swap_fields(rec, 8, ["II", "QQQ", "II", "QQ", "BBH", "20s"] + sid, e)
        elif typ in (PERF_RECORD_FORK, PERF_RECORD_EXIT):
            body, pos = swap_fields(rec, 8, ["IIII", "Q"] + sid, e)
        elif typ == PERF_RECORD_SAMPLE:
            body, pos = swap_fields(rec, 8, [f for _, f, _ in sample_fields(st)], e)
        elif typ == PERF_RECORD_FINISHED_ROUND:
            body = b""
        else:
            skipped[typ] = skipped.get(typ, 0) + 1
            continue
        if 8 + len(body) != size:
            sys.exit(f"record of type {typ}, {size} bytes: {8 + len(body)} rewritten")
        records.append(struct.pack(e + "IHH", typ, misc, size) + body)
    feats = {bit: bytes(p) for bit, p in src.features}
    out_feats = []
    if HEADER_HOSTNAME in feats:
        p = feats[HEADER_HOSTNAME]
        out_feats.append((HEADER_HOSTNAME, struct.pack(e + "I", *struct.unpack_from("<I", p)) +
                          p[4:]))
    if HEADER_NRCPUS in feats:
        out_feats.append((HEADER_NRCPUS, struct.pack(e + "II", *struct.unpack_from("<II",
                                                                                feats[HEADER_NRCPUS]))))
    if HEADER_MMAP3_STATUS in feats:
        out_feats.append((HEADER_MMAP3_STATUS, swap_status(feats[HEADER_MMAP3_STATUS], e)))
    eattrs = [rewrite_attr(a, e) for a in attrs]
    magic = MAGIC[::-1] if e == ">" else MAGIC
    if args.pipe:
        def rec(typ, body):
            return struct.pack(e + "IHH", typ, 0, 8 + len(body)) + body
        out = magic + struct.pack(e + "Q", 16)
        # One id per attr, so that each attr has its evsel.
        for i, a in enumerate(eattrs):
            out += rec(PERF_RECORD_HEADER_ATTR, a + struct.pack(e + "Q", i + 1))
        for bit, p in out_feats:
            if bit != HEADER_MMAP3_STATUS:
                out += rec(PERF_RECORD_HEADER_FEATURE, struct.pack(e + "Q", bit) + p)
        # HEADER_LAST_FEATURE: the end of the features; the status entries
        # come before the records they describe.
        out += rec(PERF_RECORD_HEADER_FEATURE, struct.pack(e + "Q", HEADER_MMAP3_STATUS + 1))
        for bit, p in out_feats:
            if bit == HEADER_MMAP3_STATUS:
                out += rec(PERF_RECORD_HEADER_FEATURE, struct.pack(e + "Q", bit) + p)
        out += b"".join(records)
    else:
        attr_size = len(attrs[0]) + 16
        attrs_off = 104
        data_off = attrs_off + attr_size * len(eattrs)
        out = bytearray(magic + struct.pack(e + "QQQQQQQQ", 104, attr_size, attrs_off,
                                            attr_size * len(eattrs), data_off, 0, 0, 0) +
                        bytes(32))
        for a in eattrs:
            out += a + struct.pack(e + "QQ", 0, 0)
        pd = Perf.__new__(Perf)
        pd.e, pd.pipe, pd.head, pd.tail = e, False, out, b""
        pd.records = records
        pd.features = [[bit, p] for bit, p in out_feats]
        out = pd.serialize()
    with open(args.output, "wb") as f:
        f.write(out)
    print(f"{args.output}: {len(records)} records{', big-endian' if args.big_endian else ''}"
          f"{', pipe mode' if args.pipe else ''}; left out: "
          f"{', '.join(f'{n} of type {t}' for t, n in sorted(skipped.items())) or 'none'}")


# --- mutate ---------------------------------------------------------------

SPECIAL_NAMES = [b"[kernel.kallsyms]_text", b"[kernel.kallsyms]", b"[vdso]", b"[vsyscall]",
                 b"//anon", b"[heap]", b"[stack]", b"/", b"..", b"[guest.kernel.kallsyms]",
                 b"/tmp/perf-1.map", b"/memfd: (deleted)", b"[kernel.kallsyms]_stext",
                 b"/dev/zero", b"[uprobes]", b"/lib/modules/x.ko"]


# The sample fields m_sample sets to 0, 1, huge values.
SAMPLE_VALUES = {S_PERIOD: "period", S_CPU: "cpu", S_ID: "id", S_STREAM_ID: "stream_id",
                 S_IDENTIFIER: "identifier", S_ADDR: "addr"}


class Mutator:
    def __init__(self, pd, rng):
        self.pd, self.r = pd, rng
        self.e = pd.e
        self.what = []

    def targets(self):
        recs = self.pd.records
        t = [i for i, r in enumerate(recs) if self.pd.typ(r) == PERF_RECORD_MMAP3]
        return t or [i for i, r in enumerate(recs) if self.pd.typ(r) == PERF_RECORD_MMAP2]

    def target(self):
        t = self.targets()
        i = self.r.choice(t) if t else self.r.randrange(len(self.pd.records))
        return i, self.pd.records[i]

    def size_of(self, rec):
        return struct.unpack_from(self.e + "H", rec, 6)[0]

    def set_size(self, rec, size):
        struct.pack_into(self.e + "H", rec, 6, size & 0xffff)

    def is3(self, rec):
        return self.pd.typ(rec) == PERF_RECORD_MMAP3

    def name_off(self, rec):
        return 96 if self.is3(rec) else 72

    def sample_type(self):
        """The sample_type of the seed's first attr (0 without one)."""
        attrs = self.pd.attrs()
        if not attrs:
            return 0
        buf, off = attrs[0]
        return struct.unpack_from(self.e + "Q", buf, off + 24)[0]

    def sid_len(self):
        """The sample_id length of the seed's first attr."""
        attrs = self.pd.attrs()
        if not attrs or not self.pd.attr_bits(*attrs[0]) >> A_SAMPLE_ID_ALL & 1:
            return 0
        return sum(struct.calcsize("<" + f) for f in sample_id_fields(self.sample_type()))

    def samples(self):
        return [i for i, r in enumerate(self.pd.records) if self.pd.typ(r) == PERF_RECORD_SAMPLE]

    def maps(self):
        """The targets' mappings: (pid, tid, start, len, cpumode, status,
        time); status from HEADER_MMAP3_STATUS for an MMAP2 target (None
        without an entry), time from the sample_id (None without one)."""
        e, st, sid = self.e, self.sample_type(), self.sid_len()
        statuses = {}
        for p, off in self.status_payload():
            for eo in self.status_entries(p, off):
                start, = struct.unpack_from(e + "Q", p, eo + 8)
                pid, = struct.unpack_from(e + "I", p, eo + 40)
                statuses[start, pid] = p[eo + 46]
        out = []
        for i in self.targets():
            rec = self.pd.records[i]
            if len(rec) < self.name_off(rec) + sid:
                continue
            misc, _, pid, tid, start, length = struct.unpack_from(e + "HHIIQQ", rec, 4)
            status = rec[73] if self.is3(rec) else statuses.get((start, pid))
            t = None
            if sid and st & S_TIME:
                t, = struct.unpack_from(e + "Q", rec, len(rec) - sid + (8 if st & S_TID else 0))
            out.append((pid, tid, start, length, misc & MISC_CPUMODE_MASK, status, t))
        return out

    def status_payload(self):
        """The HEADER_MMAP3_STATUS payload(s): (bytearray, offset)."""
        out = [(p, 0) for bit, p in self.pd.features if bit == HEADER_MMAP3_STATUS]
        for r in self.pd.records:
            if self.pd.typ(r) == PERF_RECORD_HEADER_FEATURE and len(r) >= 16 and \
                    struct.unpack_from(self.e + "Q", r, 8)[0] == HEADER_MMAP3_STATUS:
                out.append((r, 16))
        return out

    def status_entries(self, p, off):
        """The offsets in p of the entries of the HEADER_MMAP3_STATUS payload
        at p[off:], its first nr that lie whole in p (48 bytes each, the
        entry_size apart)."""
        if len(p) < off + 8:
            return range(0)
        esize, nr = struct.unpack_from(self.e + "II", p, off)
        return range(off + 8, len(p) - 47, esize)[:nr] if esize >= 48 else range(0)

    def m_size_unaligned(self):
        i, rec = self.target()
        d = self.r.choice([-7, -6, -5, -4, -3, -2, -1, 1, 2, 3, 4, 5, 6, 7])
        self.set_size(rec, self.size_of(rec) + d)
        self.what.append(f"record {i}: size {d:+d}")

    def m_size_small(self):
        i, rec = self.target()
        s = self.r.choice([0, 1, 7, 8, 16, 24, 40, 64, 72, 80, 88, 92, 96, 97, 100])
        self.set_size(rec, s)
        self.what.append(f"record {i}: size {s}")

    def m_size_big(self):
        i, rec = self.target()
        k = self.r.randrange(4)
        if k == 0:
            s = self.size_of(rec) + 8 * self.r.randint(1, 16)
        elif k == 1:
            s = self.r.choice([0xfff8, 0xffff, 0x8000, 0x1000])
        else:
            # The last record, header.size past the end of the data.
            i = len(self.pd.records) - 1
            rec = self.pd.records[i] = bytearray(self.pd.records[i])
            if k == 3:  # a target moved to the end
                j = self.target()[0]
                rec = self.pd.records[j]
                del self.pd.records[j]
                self.pd.records.append(rec)
                i = len(self.pd.records) - 1
            s = self.size_of(rec) + 8 * self.r.randint(1, 4)
        self.set_size(rec, s)
        self.what.append(f"record {i}: size {s}")

    def m_bidsize(self):
        i, rec = self.target()
        v = self.r.choice([0, 1, 16, 19, 20, 21, 24, 32, 127, 128, 200, 255,
                           self.r.randrange(256)])
        if self.is3(rec):
            rec[72] = v
        else:
            struct.pack_into(self.e + "H", rec, 4,
                             struct.unpack_from(self.e + "H", rec, 4)[0] | MISC_MMAP_BUILD_ID)
            rec[40] = v
        self.what.append(f"record {i}: build_id_size {v}")

    def m_status(self):
        v = self.r.choice(list(range(10)) + [127, 128, 200, 254, 255])
        payloads = self.status_payload()
        i, rec = self.target()
        if self.is3(rec) or not payloads:
            rec[73] = v
            if self.r.random() < 0.5:
                rec[72] = self.r.choice([0, 20, 21])
            self.what.append(f"record {i}: build_id_status {v}, build_id_size {rec[72]}")
            return
        p, off = self.r.choice(payloads)
        entries = self.status_entries(p, off)
        if not entries:
            self.what.append("status: no entry")
            return
        k = self.r.randrange(len(entries))
        eo = entries[k]
        p[eo + 46] = v
        if self.r.random() < 0.5:
            p[eo + 47] = self.r.choice([0, 20, 21, 255])
        self.what.append(f"status entry {k}: status {v}, build_id_size {p[eo + 47]}")

    def m_status_table(self):
        payloads = self.status_payload()
        if not payloads:
            return self.m_status()
        p, off = self.r.choice(payloads)
        if len(p) < off + 8:
            return self.m_feature()
        e = self.e
        esize, nr = struct.unpack_from(e + "II", p, off)
        entries = self.status_entries(p, off)
        k = self.r.randrange(6)
        if k < 2 and esize == 48 and len(p) >= off + 8 + 48 * nr:
            # Larger entries, as a later perf may write them: each entry
            # followed by bytes a reader skips.
            v = self.r.choice([56, 64, 128, 256, 264, 304, 312, 320, 512, 1024])
            ents = [p[off + 8 + 48 * j:off + 56 + 48 * j] for j in range(nr)]
            pad = bytes([self.r.randrange(256)]) * (v - 48)
            p[off:] = struct.pack(e + "II", v, nr) + b"".join(x + pad for x in ents)
            self.what.append(f"status: {nr} entries of {v} bytes")
        elif k == 2:
            v = self.r.choice([0, 1, 8, 47, 49, 52, 0xffff, 0xffffffff, self.r.randrange(2048)])
            struct.pack_into(e + "I", p, off, v)
            self.what.append(f"status: entry_size {v}")
        elif k == 3:
            v = self.r.choice([0, 1, max(nr - 1, 0), nr + 1, 0x7fffffff, 0xffffffff])
            struct.pack_into(e + "I", p, off + 4, v)
            self.what.append(f"status: nr {v}")
        elif k == 4 and entries:
            j = self.r.randrange(len(entries))
            eo = entries[j]
            fld = self.r.choice(["key", "start", "pid", "status", "size", "misc"])
            if fld == "key":
                v = self.r.choice([0, 2**64 - 1, j + 1000, max(j - 1, 0)])
                struct.pack_into(e + "Q", p, eo, v)
            elif fld == "start":
                v = self.r.getrandbits(64)
                struct.pack_into(e + "Q", p, eo + 8, v)
            elif fld == "pid":
                v = self.r.getrandbits(32)
                struct.pack_into(e + "I", p, eo + 40, v)
            elif fld == "misc":
                v = self.r.getrandbits(16)
                struct.pack_into(e + "H", p, eo + 44, v)
            else:
                v = self.r.choice([0, 1, 7, 8, 20, 21, 200, 255])
                p[eo + (46 if fld == "status" else 47)] = v
            self.what.append(f"status entry {j}: {fld} {v}")
        else:
            n = self.r.randint(1, max(len(p) - off - 1, 1))
            del p[len(p) - n:]
            if off and self.r.random() < 0.5:  # a feature record: its size follows
                self.set_size(p, len(p))
            self.what.append(f"status: {n} bytes cut")

    def m_name(self):
        i, rec = self.target()
        no = self.name_off(rec)
        size = len(rec)
        sid = self.sid_len()
        k = self.r.randrange(7)
        if k == 0:  # no NUL up to header.size, over the sample_id
            end = size if self.r.random() < 0.5 else size - sid
            rec[no:end] = bytes(self.r.randrange(1, 256) for _ in range(end - no))
            self.what.append(f"record {i}: name without NUL to byte {end}")
            return
        if k == 1:
            name = b""
        elif k == 2:
            name = bytes(self.r.randrange(0x80, 0x100) for _ in range(self.r.randint(1, 40)))
        elif k == 3:
            name = self.r.choice([b"%s%s%s%n", b"/%x%x%x%x", b"\x1b[2J", b"/a\nb", b"%*.*s"])
        elif k == 4:
            name = self.r.choice(SPECIAL_NAMES)
        elif k == 5:
            name = b"/" + b"x" * self.r.choice([255, 4095, 4096, 8000])
        else:
            name = b"/" + b"a" * self.r.randint(1, 30) + b"\0" + b"b" * self.r.randint(1, 30)
        padded = name + b"\0" * (8 - len(name) % 8)
        tail = rec[size - sid:] if sid else b""
        new = rec[:no] + padded + tail
        if len(new) > 0xffff:
            new = new[:0xfff8]
        self.pd.records[i] = rec = bytearray(new)
        self.set_size(rec, len(rec))
        self.what.append(f"record {i}: name {name[:40]!r}{'...' if len(name) > 40 else ''}")

    def m_sample_id(self):
        k = self.r.randrange(3)
        if k < 2:
            i, rec = self.target()
            sid = self.sid_len()
            cut = self.r.choice([8, 16, sid or 8, 24, 32])
            del rec[len(rec) - min(cut, len(rec) - 8):]
            if k == 0:
                self.set_size(rec, len(rec))
            self.what.append(f"record {i}: {cut} bytes of its end cut"
                             f"{', size kept' if k else ''}")
            return
        attrs = self.pd.attrs()
        if not attrs:
            return self.m_sample_id()
        buf, off = self.r.choice(attrs)
        if self.r.random() < 0.5:
            bits = self.pd.attr_bits(buf, off) ^ (1 << A_SAMPLE_ID_ALL)
            self.pd.set_attr_bits(buf, off, bits)
            self.what.append("attr: sample_id_all flipped")
        else:
            bit = self.r.choice([S_TID, S_TIME, S_ID, S_STREAM_ID, S_CPU, S_IDENTIFIER,
                                 S_READ, S_CALLCHAIN, S_RAW])
            st, = struct.unpack_from(self.e + "Q", buf, off + 24)
            struct.pack_into(self.e + "Q", buf, off + 24, st ^ bit)
            self.what.append(f"attr: sample_type ^ {bit:#x}")

    def m_type_misc(self):
        k = self.r.randrange(3)
        if k == 0:
            i, rec = self.target()
            t = self.r.choice([PERF_RECORD_MMAP, PERF_RECORD_MMAP2, PERF_RECORD_COMM,
                               PERF_RECORD_SAMPLE, 22, 24, 255, PERF_RECORD_HEADER_ATTR,
                               PERF_RECORD_HEADER_FEATURE, self.r.getrandbits(32)])
            struct.pack_into(self.e + "I", rec, 0, t)
            self.what.append(f"record {i}: type {t}")
        elif k == 1:
            others = [j for j, r in enumerate(self.pd.records)
                      if self.pd.typ(r) not in (PERF_RECORD_MMAP3, PERF_RECORD_HEADER_ATTR)]
            j = self.r.choice(others or [0])
            self.what.append(f"record {j} (type {self.pd.typ(self.pd.records[j])}): type 23")
            struct.pack_into(self.e + "I", self.pd.records[j], 0, PERF_RECORD_MMAP3)
        else:
            i, rec = self.target()
            misc, = struct.unpack_from(self.e + "H", rec, 4)
            x = self.r.choice([1, 2, 3, 4, 5, 6, 7, 1 << 12, 1 << 13, 1 << 14, 1 << 15,
                               self.r.getrandbits(16)])
            struct.pack_into(self.e + "H", rec, 4, misc ^ x)
            self.what.append(f"record {i}: misc ^ {x:#x}")

    def m_feature(self):
        pd = self.pd
        payloads = self.status_payload()
        k = self.r.randrange(4)
        if k == 0 and payloads:  # the status payload's head or bytes
            p, off = self.r.choice(payloads)
            if len(p) < off + 8:
                return self.m_flip()
            f = self.r.randrange(3)
            if f == 0:
                v = self.r.choice([0, 1, 8, 47, 49, 56, 64, 256, 264, 304, 312, 512, 1024,
                                   0xffff, 0xffffffff, self.r.randrange(2048)])
                struct.pack_into(self.e + "I", p, off, v)
                self.what.append(f"status: entry_size {v}")
                if v and self.r.random() < 0.5:
                    # As many entries as the payload holds at that size.
                    nr = (len(p) - off - 8) // v
                    struct.pack_into(self.e + "I", p, off + 4, nr)
                    self.what.append(f"nr {nr}")
            elif f == 1:
                v = self.r.choice([0, 1, 2, 0x7fffffff, 0xffffffff, 0x10000])
                struct.pack_into(self.e + "I", p, off + 4, v)
                self.what.append(f"status: nr {v}")
            else:
                for _ in range(self.r.randint(1, 8)):
                    b = self.r.randrange(off, len(p))
                    p[b] = self.r.randrange(256)
                self.what.append("status: bytes changed")
            return
        if pd.pipe:
            feats = [j for j, r in enumerate(pd.records)
                     if pd.typ(r) == PERF_RECORD_HEADER_FEATURE]
            if not feats:
                return self.m_flip()
            j = self.r.choice(feats)
            rec = pd.records[j]
            if k in (1, 0):
                v = self.r.choice([0, HEADER_MMAP3_STATUS, HEADER_MMAP3_STATUS + 1, 255, 256,
                                   2**32, 2**64 - 1])
                struct.pack_into(self.e + "Q", rec, 8, v)
                self.what.append(f"feature record {j}: feat_id {v}")
            elif k == 2:
                cut = self.r.choice([8, 16, len(rec) - 8])
                cut = min(cut, len(rec) - 8)
                del rec[len(rec) - cut:]
                self.set_size(rec, len(rec))
                self.what.append(f"feature record {j}: {cut} bytes cut")
            else:
                s = self.r.choice([8, 12, 16, 20, 0xfff8])
                self.set_size(rec, s)
                self.what.append(f"feature record {j}: size {s}")
            return
        if not pd.features:
            return self.m_header()
        if k == 1:  # a section's offset or size, set after serializing
            j = self.r.randrange(len(pd.features))
            fld = self.r.randrange(2)
            v = self.r.choice([0, 1, 2**63, 2**64 - 1, 104, -8, 8, 1 << 20])
            self.post = (j, fld, v)
            self.what.append(f"feature section {j} (bit {pd.features[j][0]}): "
                             f"{'offset' if fld == 0 else 'size'} {f'{v:+d}' if v in (-8, 8) else v}")
        elif k == 2:  # a feature bit set or cleared: the sections shift
            bit = self.r.choice([HEADER_MMAP3_STATUS, HEADER_MMAP3_STATUS + 1, 2, 3, 255,
                                 self.r.randrange(256)])
            have = [f[0] for f in pd.features]
            if bit in have:
                self.post_bits = (bit, 0)
            else:
                self.post_bits = (bit, 1)
            self.what.append(f"adds_features bit {bit} {'cleared' if bit in have else 'set'}")
        else:  # a payload cut or grown
            j = self.r.randrange(len(pd.features))
            p = pd.features[j][1]
            if self.r.random() < 0.5 and len(p):
                n = self.r.randint(1, len(p))
                del p[len(p) - n:]
                self.what.append(f"feature bit {pd.features[j][0]}: {n} bytes cut")
            else:
                p += bytes(self.r.randrange(256) for _ in range(self.r.choice([1, 8, 48])))
                self.what.append(f"feature bit {pd.features[j][0]}: grown")

    def m_header(self):
        pd = self.pd
        attrs = pd.attrs()
        k = self.r.randrange(3)
        if k == 0 and attrs:
            buf, off = self.r.choice(attrs)
            bit = self.r.choice([A_MMAP3, A_MMAP2, A_BUILD_ID, A_MMAP, A_SAMPLE_ID_ALL])
            self.pd.set_attr_bits(buf, off, self.pd.attr_bits(buf, off) ^ (1 << bit))
            self.what.append(f"attr: bit {bit} flipped")
        elif k == 1 and attrs and pd.pipe:
            buf, off = self.r.choice(attrs)
            v = self.r.choice([0, 8, 64, 72, 200, 0xffff])
            struct.pack_into(self.e + "I", buf, off + 4, v)
            self.what.append(f"HEADER_ATTR: attr.size {v}")
        elif not pd.pipe:
            # data.size: cut in a target
            i, rec = self.target()
            before = sum(len(r) for r in pd.records[:i])
            cut = before + self.r.randrange(1, len(rec))
            d = self.r.choice([cut, cut, -8, 8])
            self.post_data = d
            self.what.append(f"data.size {'ends in record %d' % i if d > 8 else '%+d' % d}")
        else:
            return self.m_truncate()

    def m_truncate(self):
        i, rec = self.target()
        cut_in = self.r.random() < 0.7
        # Cut at serialize time: remember how many record bytes to keep.
        before = sum(len(r) for r in self.pd.records[:i])
        self.post_trunc = before + (self.r.randrange(1, len(rec)) if cut_in else len(rec))
        self.what.append(f"file cut {'in' if cut_in else 'after'} record {i}")

    def m_flip(self):
        i, rec = self.target()
        n = self.r.randint(1, 8)
        for _ in range(n):
            b = self.r.randrange(8 if self.r.random() < 0.3 else 0, len(rec))
            rec[b] = self.r.randrange(256)
        payloads = self.status_payload()
        if payloads and self.r.random() < 0.3:
            p, off = self.r.choice(payloads)
            b = self.r.randrange(off, len(p)) if len(p) > off else 0
            if len(p) > off:
                p[b] = self.r.randrange(256)
        self.what.append(f"record {i}: {n} bytes set")

    def sample(self):
        """A SAMPLE record and its fields that it holds: (index, record,
        {bit: (format, offset)})."""
        i = self.r.choice(self.samples())
        rec = self.pd.records[i]
        fields = {bit: (f, off) for bit, f, off in sample_fields(self.sample_type())
                  if off + struct.calcsize(f) <= len(rec)}
        return i, rec, fields

    def ip_near(self, m):
        """An address at, just inside or just outside an edge of mapping m."""
        start, length = m[2], m[3]
        return self.r.choice([start - 1, start, start + 1, start + length // 2,
                              start + length - 1, start + length, start + length + 1]) % 2**64

    def chain_addr(self, maps):
        """A callchain address: at an edge of one of maps, or of no mapping
        (0, huge, just below the contexts, the kernel's text)."""
        if maps and self.r.random() < 0.8:
            return self.ip_near(self.r.choice(maps))
        return self.r.choice([0, 2**64 - 1, 2**64 - 4096, 2**64 - 1 - self.r.randrange(4096),
                              0xffffffff81000000])

    def m_sample(self):
        if not self.samples():
            return self.m_flip()
        i, rec, fields = self.sample()
        e, maps = self.e, self.maps()
        k = self.r.randrange(6)
        if k == 0 and S_IP in fields and maps:
            # The IP at an edge of a mapping (one without a FOUND build-id
            # every other time), sampled by its thread in its cpumode,
            # perhaps just before the mapping was made.
            bad = [m for m in maps if m[5] != 1]
            m = self.r.choice(bad if bad and self.r.random() < 0.5 else maps)
            ip = self.ip_near(m)
            struct.pack_into(e + "Q", rec, fields[S_IP][1], ip)
            misc, = struct.unpack_from(e + "H", rec, 4)
            struct.pack_into(e + "H", rec, 4, misc & ~MISC_CPUMODE_MASK | m[4])
            self.what.append(f"sample record {i}: ip {ip:#x} (mapping {m[2]:#x}+{m[3]:#x} of "
                             f"{m[0]}/{m[1]}, status {m[5]})")
            if S_TID in fields and m[0] != 2**32 - 1:  # (not the kernel's -1/0)
                struct.pack_into(e + "II", rec, fields[S_TID][1], m[0], m[1])
            if S_TIME in fields and m[6] is not None and self.r.random() < 0.3:
                t = (m[6] - self.r.choice([0, 1])) % 2**64
                struct.pack_into(e + "Q", rec, fields[S_TIME][1], t)
                self.what.append(f"time {t} (the mapping's {m[6]})")
        elif k == 1 and S_TID in fields:
            pid, tid = struct.unpack_from(e + "II", rec, fields[S_TID][1])
            others = [m[0] for m in maps if m[0] != pid] or [pid]
            v = self.r.choice([(0, 0), (1, 1), (2**32 - 1, 2**32 - 1), (pid, tid + 1000),
                               (pid + 1000, pid + 1000), (self.r.choice(others), tid),
                               (pid, 0), (self.r.getrandbits(32), self.r.getrandbits(32))])
            v = (v[0] % 2**32, v[1] % 2**32)
            struct.pack_into(e + "II", rec, fields[S_TID][1], *v)
            self.what.append(f"sample record {i}: pid/tid {v[0]}/{v[1]}")
        elif k == 2 and S_IP in fields:
            v = self.r.choice([0, 1, 0x1000, 2**63, 2**64 - 1, 0xffffffff81000000 - 1,
                               self.r.choice(CONTEXTS), self.r.getrandbits(64)])
            struct.pack_into(e + "Q", rec, fields[S_IP][1], v)
            self.what.append(f"sample record {i}: ip {v:#x}")
        elif k == 3 and S_TIME in fields:
            v = self.r.choice([0, 1, 2**63, 2**64 - 1] +
                              [(m[6] - 1) % 2**64 for m in maps if m[6] is not None][:4])
            struct.pack_into(e + "Q", rec, fields[S_TIME][1], v)
            self.what.append(f"sample record {i}: time {v}")
        elif k == 4 and fields.keys() & SAMPLE_VALUES.keys():
            bit = self.r.choice(sorted(fields.keys() & SAMPLE_VALUES.keys()))
            f, off = fields[bit]
            v = self.r.choice([0, 1, 2**31, 2**32 - 1, 4096, 2**63, 2**64 - 1])
            if f == "II":  # cpu, res
                struct.pack_into(e + "I", rec, off, v % 2**32)
            else:
                struct.pack_into(e + f, rec, off, v)
            self.what.append(f"sample record {i}: {SAMPLE_VALUES[bit]} {v}")
        else:
            misc, = struct.unpack_from(e + "H", rec, 4)
            if self.r.random() < 0.7:
                v = misc & ~MISC_CPUMODE_MASK | self.r.randrange(8)
            else:
                v = misc ^ self.r.choice([1 << 12, 1 << 13, 1 << 14, 1 << 15,
                                          self.r.getrandbits(16)])
            struct.pack_into(e + "H", rec, 4, v)
            self.what.append(f"sample record {i}: misc {v:#x} (cpumode {v & MISC_CPUMODE_MASK})")

    def m_sample_layout(self):
        st = self.sample_type()
        if not self.samples():
            return self.m_flip()
        e = self.e
        k = self.r.randrange(4)
        if k == 0 or st & (S_READ | S_CALLCHAIN):
            # header.size: the record cut (its fields run off the end) or
            # not, a size that is not its own.
            i, rec, _ = self.sample()
            if self.r.random() < 0.5:
                n = self.r.choice([4, 8, 16, len(rec) - 8])
                del rec[len(rec) - min(n, len(rec) - 8):]
                self.set_size(rec, len(rec))
                self.what.append(f"sample record {i}: cut to {len(rec)} bytes")
            else:
                v = self.r.choice([0, 8, 12, len(rec) - 8, len(rec) - 4, len(rec) + 8, 0xffff])
                self.set_size(rec, v)
                self.what.append(f"sample record {i}: size {v & 0xffff}")
            return
        # PERF_SAMPLE_CALLCHAIN in the attrs, in each sample a callchain as
        # the kernel writes one, its cpumode's context and its ip; then
        # one sample's callchain damaged.
        for buf, off in self.pd.attrs():
            v, = struct.unpack_from(e + "Q", buf, off + 24)
            struct.pack_into(e + "Q", buf, off + 24, v | S_CALLCHAIN)
        fields = sample_fields(st)
        at = 8 + sum(struct.calcsize("<" + f) for _, f, _ in fields)
        ipoff = dict((bit, off) for bit, _, off in fields).get(S_IP)
        for j in self.samples():
            rec = self.pd.records[j]
            if len(rec) < at:
                continue
            misc, = struct.unpack_from(e + "H", rec, 4)
            ctx = CONTEXT_KERNEL if misc & MISC_CPUMODE_MASK == MISC_KERNEL else CONTEXT_USER
            ip = struct.unpack_from(e + "Q", rec, ipoff)[0] if ipoff else 0
            rec[at:at] = struct.pack(e + "QQQ", 2, ctx, ip)
            self.set_size(rec, len(rec))
        self.what.append("a callchain in each sample")
        i, rec, _ = self.sample()
        if len(rec) < at + 24:
            return
        maps = self.maps()
        if k == 1:
            v = self.r.choice([0, 1, 3, 127, 128, 0x10000, 2**32, 2**61, 2**63, 2**64 - 1])
            struct.pack_into(e + "Q", rec, at, v)
            self.what.append(f"sample record {i}: callchain nr {v}")
            return
        if k == 2:
            # Contexts and addresses, in any order.
            n = self.r.randint(1, 16)
            chain = [self.r.choice(CONTEXTS) if self.r.random() < 0.4 else self.chain_addr(maps)
                     for _ in range(n)]
        else:
            # Longer than perf's max stack (127), a context first.
            n = self.r.choice([126, 127, 128, 255, 1024])
            chain = [self.r.choice(CONTEXTS)] + [self.chain_addr(maps) for _ in range(n - 1)]
        rec[at:at + 24] = struct.pack(e + "Q", n) + b"".join(struct.pack(e + "Q", x)
                                                            for x in chain)
        self.set_size(rec, len(rec))
        self.what.append(f"sample record {i}: callchain of {n}: "
                         f"{' '.join(f'{x:#x}' for x in chain[:6])}{' ...' if n > 6 else ''}")

    def m_multi(self):
        for _ in range(self.r.randint(2, 4)):
            self.r.choice([m for c, m in self.methods() if c != "multi"])(self)

    @staticmethod
    def methods():
        return [(c, getattr(Mutator, "m_" + c.replace("-", "_"))) for c in CLASSES]

    def run(self, cls):
        self.post = self.post_bits = self.post_data = self.post_trunc = None
        dict(self.methods())[cls](self)
        return self.finish()

    def finish(self):
        pd, e = self.pd, self.e
        out = bytearray(pd.serialize())
        base = 16 if pd.pipe else len(pd.head)
        if not pd.pipe:
            data_size, = struct.unpack_from(e + "Q", out, 48)
            table = base + data_size
            if self.post:
                j, fld, v = self.post
                at = table + 16 * j + 8 * fld
                old, = struct.unpack_from(e + "Q", out, at)
                if v in (-8, 8):
                    v = old + v
                struct.pack_into(e + "Q", out, at, v & (2**64 - 1))
            if self.post_bits:
                bit, on = self.post_bits
                w, b = divmod(bit, 64)
                word, = struct.unpack_from(e + "Q", out, 72 + 8 * w)
                word = word | (1 << b) if on else word & ~(1 << b)
                struct.pack_into(e + "Q", out, 72 + 8 * w, word)
            if self.post_data is not None:
                d = self.post_data
                size = data_size + d if d in (-8, 8) else d
                struct.pack_into(e + "Q", out, 48, max(size, 0))
        if self.post_trunc is not None:
            del out[base + self.post_trunc:]
        return bytes(out)


CLASSES = ["size-unaligned", "size-small", "size-big", "bidsize", "status", "status-table",
           "name", "sample-id", "type-misc", "feature", "header", "truncate", "flip", "sample",
           "sample-layout", "multi"]


def mutant(seeds, seed, i):
    """(class, seed index, bytes, description) of mutant i."""
    cls = CLASSES[i % len(CLASSES)]
    s = (i // len(CLASSES)) % len(seeds)
    rng = random.Random(f"{seed}/{i}")
    with open(seeds[s], "rb") as f:
        orig = f.read()
    if cls == "status-table":
        # A seed with a HEADER_MMAP3_STATUS table: this one, the one two
        # places on (le-file: le-conv-file) or the next that has one.
        for t in [s, (s + 2) % len(seeds)] + list(range(s + 1, s + len(seeds))):
            with open(seeds[t % len(seeds)], "rb") as f:
                buf = f.read()
            if Mutator(Perf(buf), rng).status_payload():
                s, orig = t % len(seeds), buf
                break
    # Draws that change nothing (a value the field had) are drawn again.
    for _ in range(20):
        m = Mutator(Perf(orig), rng)
        out = m.run(cls)
        if out != orig:
            break
    return cls, s, out, "; ".join(m.what)


def cmd_mutate(args):
    os.makedirs(args.outdir, exist_ok=True)
    idx = [args.index] if args.index is not None else range(args.count)
    for i in idx:
        cls, s, out, what = mutant(args.seeds, args.seed, i)
        with open(os.path.join(args.outdir, f"{i:04d}.data"), "wb") as f:
            f.write(out)
        print(f"{i:04d} {cls} {os.path.basename(args.seeds[s])} {what}")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    rw = sub.add_parser("rewrite")
    rw.add_argument("--big-endian", action="store_true")
    rw.add_argument("--pipe", action="store_true")
    rw.add_argument("input")
    rw.add_argument("output")
    mu = sub.add_parser("mutate")
    mu.add_argument("--seed", required=True)
    g = mu.add_mutually_exclusive_group(required=True)
    g.add_argument("--count", type=int)
    g.add_argument("--index", type=int)
    mu.add_argument("outdir")
    mu.add_argument("seeds", nargs="+")
    sub.add_parser("classes")
    args = ap.parse_args()
    if args.cmd == "classes":
        print(" ".join(CLASSES))
        return
    {"rewrite": cmd_rewrite, "mutate": cmd_mutate}[args.cmd](args)


if __name__ == "__main__":
    main()
