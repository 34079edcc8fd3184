#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Make a recording of MMAP2 records and the trace event mmap3:build_id.

    tests/perf/mmap3-event-data.py [--order warm|cold] [--mangle KIND:PATH]...
                                   [--status NAME:PATH]... IN OUT

What perf record --mmap3 writes on a kernel without PERF_RECORD_MMAP3, with
the mmap3 module loaded, for testing perf on a host without either: IN is a
perf.data file recorded with --no-buildid-mmap (MMAP2 records with device
and inode numbers) and two events, the one that records the mappings (such
as task-clock) and one tracepoint (such as sched:sched_process_exec), with
sample IDs. In OUT the tracepoint is mmap3:build_id: its format (that of
the module's TRACE_EVENT, DESIGN.md's fields) in HEADER_TRACING_DATA under
the tracepoint's ID, its name in HEADER_EVENT_DESC, its samples dropped;
and for each MMAP2 record of an executable user-space mapping with device
and inode numbers one sample of it, with the record's pid, tid, address,
length, offset, device, inode, generation, protection and flags, the
build-id and status of the file the record names (read now, as
mmap3-perf-data.py reads them), the file name, and as time the mapping's,
1 ns before the record's. With --order warm (the default) the sample is 1 ns
before the MMAP2 record, as the module emits it when the build-id is in
the page cache; with --order cold after the record and after the task's
MMAP2 records of the next 2 ms (exec maps the program, the interpreter and
the vDSO before it returns to user space, where the module reads a cold
file), 1 ns after the last of them, as the module emits it after the read.

--status NAME:PATH gives the events of the file PATH the status NAME
(IO_ERROR, SKIPPED, ...) without a build-id. --mangle KIND:PATH makes the
events of PATH describe another mapping than their MMAP2 record: ino (the
inode number plus one), addr (the address plus a page), tid (another
thread); perf must then give the record no build-id.

With --pipe, OUT is in pipe mode: the attrs, the features of the
machine and the tracing data in records, then the data. Files in pipe
mode, of the other endianness, or with compressed records are refused.
Prints one line per event: its order, status, build-id, file.
"""
import argparse
import importlib.util
import os
import struct
import sys

_spec = importlib.util.spec_from_file_location(
    "mmap3_perf_data", os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                    "mmap3-perf-data.py"))
mpd = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(mpd)

PERF_RECORD_MMAP2, PERF_RECORD_SAMPLE = 10, 9
PERF_RECORD_COMPRESSED = 81
PERF_RECORD_MISC_CPUMODE_MASK, PERF_RECORD_MISC_USER = 7, 2
PERF_TYPE_TRACEPOINT = 2
PROT_EXEC = 4
HEADER_TRACING_DATA, HEADER_EVENT_DESC = 1, 12
PERF_RECORD_HEADER_ATTR, PERF_RECORD_HEADER_TRACING_DATA = 64, 66
PERF_RECORD_HEADER_FEATURE = 80
# HOSTNAME, OSRELEASE, VERSION, ARCH, NRCPUS, CPUDESC, CPUID, TOTAL_MEM
PIPE_FEATURES = range(3, 11)
ATTR_MMAP, ATTR_SAMPLE_ID_ALL = 1 << 8, 1 << 18

# enum perf_event_sample_format: the bits this supports, in record order.
S_IP, S_TID, S_TIME, S_ADDR, S_READ, S_CALLCHAIN, S_ID, S_CPU, S_PERIOD, \
    S_STREAM_ID, S_RAW = (1 << i for i in range(11))
S_IDENTIFIER = 1 << 16
SUPPORTED = S_IP | S_TID | S_TIME | S_ID | S_CPU | S_PERIOD | S_STREAM_ID | \
    S_RAW | S_IDENTIFIER

STATUS = {v: k for k, v in mpd.STATUS_NAMES.items()}

# The event's format as the module's TRACE_EVENT gives it (rust/trace.h).
FORMAT = """name: build_id
ID: %d
format:
\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;
\tfield:unsigned char common_flags;\toffset:2;\tsize:1;\tsigned:0;
\tfield:unsigned char common_preempt_count;\toffset:3;\tsize:1;\tsigned:0;
\tfield:int common_pid;\toffset:4;\tsize:4;\tsigned:1;

\tfield:u32 pid;\toffset:8;\tsize:4;\tsigned:0;
\tfield:u32 tid;\toffset:12;\tsize:4;\tsigned:0;
\tfield:u64 addr;\toffset:16;\tsize:8;\tsigned:0;
\tfield:u64 len;\toffset:24;\tsize:8;\tsigned:0;
\tfield:u64 pgoff;\toffset:32;\tsize:8;\tsigned:0;
\tfield:u32 maj;\toffset:40;\tsize:4;\tsigned:0;
\tfield:u32 min;\toffset:44;\tsize:4;\tsigned:0;
\tfield:u64 ino;\toffset:48;\tsize:8;\tsigned:0;
\tfield:u64 ino_generation;\toffset:56;\tsize:8;\tsigned:0;
\tfield:u32 prot;\toffset:64;\tsize:4;\tsigned:0;
\tfield:u32 flags;\toffset:68;\tsize:4;\tsigned:0;
\tfield:u8 build_id_size;\toffset:72;\tsize:1;\tsigned:0;
\tfield:u8 build_id_status;\toffset:73;\tsize:1;\tsigned:0;
\tfield:u8 build_id[20];\toffset:74;\tsize:20;\tsigned:0;
\tfield:u64 time;\toffset:96;\tsize:8;\tsigned:0;
\tfield:__data_loc char[] filename;\toffset:104;\tsize:4;\tsigned:0;

print fmt: "pid=%%u tid=%%u addr=0x%%llx len=0x%%llx pgoff=0x%%llx dev=%%u:%%u ino=%%llu \
gen=%%llu prot=0x%%x flags=0x%%x status=%%s build_id=%%s time=%%llu file=%%s", REC->pid, \
REC->tid, REC->addr, REC->len, REC->pgoff, REC->maj, REC->min, REC->ino, \
REC->ino_generation, REC->prot, REC->flags, __print_symbolic(REC->build_id_status, \
{ 1, "FOUND" }, { 2, "NO_FILE" }, { 3, "NOT_ELF" }, { 4, "NO_BUILD_ID" }, \
{ 5, "MALFORMED" }, { 6, "IO_ERROR" }, { 7, "SKIPPED" }), REC->build_id_size ? \
__print_hex_str(REC->build_id, REC->build_id_size) : "-", REC->time, \
__get_str(filename)
"""


def die(msg):
    sys.exit(f"mmap3-event-data.py: {msg}")


def tracing_data(td, tp_id):
    """The tracing data td with mmap3:build_id as its only event, ID tp_id."""
    if td[:10] != b"\x17\x08\x44tracing":
        die("HEADER_TRACING_DATA is not tracing data")
    p = td.index(b"\0", 10) + 1 + 2 + 4  # version, endian, long size, page size
    for name in (b"header_page", b"header_event"):
        if td[p:p + len(name) + 1] != name + b"\0":
            die(f"no {name.decode()} in the tracing data")
        p += len(name) + 1
        p += 8 + struct.unpack_from("<Q", td, p)[0]
    n, = struct.unpack_from("<I", td, p)  # ftrace's formats
    p += 4
    for _ in range(n):
        p += 8 + struct.unpack_from("<Q", td, p)[0]
    start = p
    n, = struct.unpack_from("<I", td, p)  # the event systems
    p += 4
    for _ in range(n):
        p = td.index(b"\0", p) + 1
        cnt, = struct.unpack_from("<I", td, p)
        p += 4
        for _ in range(cnt):
            p += 8 + struct.unpack_from("<Q", td, p)[0]
    fmt = (FORMAT % tp_id).encode()
    events = struct.pack("<I", 1) + b"mmap3\0" + struct.pack("<IQ", 1, len(fmt)) + fmt
    return td[:start] + events + td[p:]


def event_desc(desc, tp_ids):
    """HEADER_EVENT_DESC with the tracepoint named mmap3:build_id."""
    nr, attr_size = struct.unpack_from("<II", desc, 0)
    out, p = bytearray(desc[:8]), 8
    for _ in range(nr):
        attr = desc[p:p + attr_size]
        p += attr_size
        nr_ids, = struct.unpack_from("<I", desc, p)
        p += 4
        slen, = struct.unpack_from("<I", desc, p)
        name = desc[p + 4:p + 4 + slen]
        p += 4 + slen
        ids = desc[p:p + 8 * nr_ids]
        p += 8 * nr_ids
        if set(struct.unpack(f"<{nr_ids}Q", ids)) & tp_ids:
            name = b"mmap3:build_id".ljust(64, b"\0")
        out += attr + struct.pack("<II", nr_ids, len(name)) + name + ids
    return bytes(out)


def sample_id(rec, stype):
    """(pid, tid, time, cpu) of a non-sample record's sample_id."""
    fields = [(S_TID, "II"), (S_TIME, "Q"), (S_ID, "Q"), (S_STREAM_ID, "Q"),
              (S_CPU, "II"), (S_IDENTIFIER, "Q")]
    size = sum(struct.calcsize("<" + f) for bit, f in fields if stype & bit)
    p, out = len(rec) - size, {}
    for bit, f in fields:
        if stype & bit:
            out[bit] = struct.unpack_from("<" + f, rec, p)
            p += struct.calcsize("<" + f)
    return out.get(S_TIME, (0,))[0], out.get(S_CPU, (0, 0))[0]


def sample_tid(rec, stypes):
    """The tid of a sample (its sample_type has IDENTIFIER), or None."""
    stype = stypes.get(struct.unpack_from("<Q", rec, 8)[0], 0)
    if not stype & S_TID:
        return None
    return struct.unpack_from("<I", rec, 16 + (8 if stype & S_IP else 0) + 4)[0]


def event_sample(stype, ident, tp_id, fields, status, bid, time, map_time, cpu, mangle):
    """The mmap3:build_id sample of an MMAP2 record, at time; the mapping's
    time map_time."""
    (pid, tid, start, length, pgoff, maj, mnr, ino, gen, prot, flags, name) = fields
    if mangle == "ino":
        ino += 1
    elif mangle == "addr":
        start += 4096
    elif mangle == "tid":
        tid += 1
    raw = struct.pack("<HBBi IIQQQ IIQQ II BB20s2x Q HH", tp_id & 0xffff, 0, 0, pid,
                      pid, tid, start, length, pgoff, maj, mnr, ino, gen, prot, flags,
                      len(bid), status, bid.ljust(20, b"\0"), map_time, 108, len(name) + 1)
    raw += name + b"\0"
    raw += b"\0" * ((-(len(raw) + 4)) % 8)
    body = b""
    if stype & S_IDENTIFIER:
        body += struct.pack("<Q", ident)
    if stype & S_IP:
        body += struct.pack("<Q", 0xffffffff81000000)
    if stype & S_TID:
        body += struct.pack("<II", pid, tid)
    if stype & S_TIME:
        body += struct.pack("<Q", time)
    if stype & S_ID:
        body += struct.pack("<Q", ident)
    if stype & S_STREAM_ID:
        body += struct.pack("<Q", ident)
    if stype & S_CPU:
        body += struct.pack("<II", cpu, 0)
    if stype & S_PERIOD:
        body += struct.pack("<Q", 1)
    if stype & S_RAW:
        body += struct.pack("<I", len(raw)) + raw
    return struct.pack("<IHH", PERF_RECORD_SAMPLE, 1, 8 + len(body)) + body


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--order", choices=("warm", "cold"), default="warm")
    ap.add_argument("--mangle", action="append", default=[], metavar="KIND:PATH")
    ap.add_argument("--status", action="append", default=[], metavar="NAME:PATH")
    ap.add_argument("--pipe", action="store_true", help="write OUT in pipe mode")
    ap.add_argument("input")
    ap.add_argument("output")
    args = ap.parse_args()
    mangles = dict(reversed(m.split(":", 1)) for m in args.mangle)
    statuses = {p: STATUS[n] for n, p in (s.split(":", 1) for s in args.status)}

    with open(args.input, "rb") as f:
        buf = f.read()
    (magic, hdr_size, attr_size, attrs_off, attrs_size, data_off, data_size,
     et_off, et_size, features) = mpd.HEADER.unpack_from(buf)
    if magic != b"PERFILE2" or hdr_size != mpd.HEADER.size:
        die(f"{args.input}: not a little-endian perf.data file (pipe mode is not supported)")

    # struct perf_file_attr: the attr, then a perf_file_section of its ids.
    tp = track = None
    stypes, attrs = {}, []
    for off in range(attrs_off, attrs_off + attrs_size, attr_size):
        typ, = struct.unpack_from("<I", buf, off)
        config, _, stype = struct.unpack_from("<QQQ", buf, off + 8)
        flags, = struct.unpack_from("<Q", buf, off + mpd.ATTR_FLAGS_OFFSET)
        ids_off, ids_size = struct.unpack_from("<QQ", buf, off + attr_size - 16)
        ids = set(struct.unpack_from(f"<{ids_size // 8}Q", buf, ids_off))
        stypes.update((i, stype) for i in ids)
        attrs.append((buf[off:off + attr_size - 16], buf[ids_off:ids_off + ids_size]))
        if typ == PERF_TYPE_TRACEPOINT:
            tp = (config, stype, ids)
        elif flags & ATTR_MMAP:
            track = (stype, flags)
    if not tp or not track or not tp[2]:
        die(f"{args.input}: no tracepoint with IDs, or no event with attr.mmap")
    tp_id, tp_stype, tp_ids = tp
    if tp_stype & ~SUPPORTED or not tp_stype & S_RAW or not tp_stype & S_IDENTIFIER:
        die(f"{args.input}: tracepoint sample_type {tp_stype:#x} not supported")
    if not track[1] & ATTR_SAMPLE_ID_ALL or not track[0] & S_TIME:
        die(f"{args.input}: the MMAP2 records have no time (sample_id_all)")
    ident = min(tp_ids)

    data = buf[data_off:data_off + data_size]
    recs, pos = [], 0
    while pos + 8 <= len(data):
        typ, misc, size = struct.unpack_from("<IHH", data, pos)
        if size < 8 or pos + size > len(data):
            die(f"{args.input}: bad record at data offset {pos}")
        rec = data[pos:pos + size]
        pos += size
        if typ == PERF_RECORD_COMPRESSED:
            die(f"{args.input}: compressed records (perf record -z) are not supported")
        if typ == PERF_RECORD_SAMPLE and struct.unpack_from("<Q", rec, 8)[0] in tp_ids:
            continue  # the tracepoint's own samples
        recs.append(rec)

    # Where each event goes: before its record (warm), or after the last
    # MMAP2 record of its task within 2 ms, and before the task's next
    # sample in user space (cold).
    before, after = {}, {}
    for i, rec in enumerate(recs):
        typ, misc, _ = struct.unpack_from("<IHH", rec)
        if typ != PERF_RECORD_MMAP2 or misc & mpd.PERF_RECORD_MISC_MMAP_BUILD_ID or \
                misc & PERF_RECORD_MISC_CPUMODE_MASK != PERF_RECORD_MISC_USER:
            continue
        fields = struct.unpack_from("<II QQQ IIQQ II", rec, 8)
        if not fields[9] & PROT_EXEC:
            continue
        end = rec.index(b"\0", 72)
        name = rec[72:end]
        path = name.decode("utf-8", "surrogateescape")
        time, cpu = sample_id(rec, track[0])
        if time == 0:
            continue  # synthesized: perf record gets no event for these
        if path in statuses:
            status, bid = statuses[path], b""
        else:
            status, bid = mpd.build_id_of(path)
        where, last = i, time
        if args.order == "cold":
            for j in range(i + 1, len(recs)):
                t2, m2, _ = struct.unpack_from("<IHH", recs[j])
                if t2 == PERF_RECORD_SAMPLE and \
                        m2 & PERF_RECORD_MISC_CPUMODE_MASK == PERF_RECORD_MISC_USER and \
                        sample_tid(recs[j], stypes) == fields[1]:
                    break
                if t2 != PERF_RECORD_MMAP2:
                    continue
                tj, _ = sample_id(recs[j], track[0])
                if tj > time + 2000000:
                    break
                if struct.unpack_from("<I", recs[j], 12)[0] == fields[1]:
                    where, last = j, tj
            ev = event_sample(tp_stype, ident, tp_id, fields + (name,), status, bid,
                              last + 1, time - 1, cpu, mangles.get(path))
            after.setdefault(where, []).append(ev)
        else:
            ev = event_sample(tp_stype, ident, tp_id, fields + (name,), status, bid,
                              time - 1, time - 2, cpu, mangles.get(path))
            before.setdefault(i, []).append(ev)
        print(f"{args.order} {mpd.STATUS_NAMES[status]:12} {bid.hex() or '-':40} {path}"
              f"{' (mangled: ' + mangles[path] + ')' if path in mangles else ''}")

    out = bytearray()
    for i, rec in enumerate(recs):
        for ev in before.get(i, []):
            out += ev
        out += rec
        for ev in after.get(i, []):
            out += ev

    # The feature sections, after the data, with HEADER_TRACING_DATA and
    # HEADER_EVENT_DESC rewritten; in pipe mode the attrs, a few features
    # and the tracing data in records before the data, as perf record
    # writes them.
    bits = int.from_bytes(features, "little")
    feats = [f for f in range(256) if bits >> f & 1]
    secs = []
    for n, f in enumerate(feats):
        off, size = struct.unpack_from("<QQ", buf, data_off + data_size + 16 * n)
        sec = buf[off:off + size]
        if f == HEADER_TRACING_DATA:
            sec = tracing_data(sec, tp_id)
        elif f == HEADER_EVENT_DESC:
            sec = event_desc(sec, tp_ids)
        secs.append(sec)
    if HEADER_TRACING_DATA not in feats:
        die(f"{args.input}: no HEADER_TRACING_DATA")
    if args.pipe:
        pipe = bytearray(b"PERFILE2" + struct.pack("<Q", 16))
        for attr, ids in attrs:
            pipe += struct.pack("<IHH", PERF_RECORD_HEADER_ATTR, 0, 8 + len(attr) + len(ids))
            pipe += attr + ids
        for f, sec in zip(feats, secs):
            if f in PIPE_FEATURES:
                pipe += struct.pack("<IHHQ", PERF_RECORD_HEADER_FEATURE, 0, 16 + len(sec), f)
                pipe += sec
        td = secs[feats.index(HEADER_TRACING_DATA)]
        td += b"\0" * (-len(td) % 8)
        pipe += struct.pack("<IHHII", PERF_RECORD_HEADER_TRACING_DATA, 0, 16, len(td), 0)
        pipe += td
        with open(args.output, "wb") as f:
            f.write(pipe + out)
        return
    table = bytearray()
    off = data_off + len(out) + 16 * len(feats)
    for sec in secs:
        table += struct.pack("<QQ", off, len(sec))
        off += len(sec)
    head = bytearray(buf[:data_off])
    struct.pack_into("<QQ", head, 40, data_off, len(out))  # header.data
    if et_size:
        struct.pack_into("<QQ", head, 56, 0, 0)  # header.event_types, unused
    with open(args.output, "wb") as f:
        f.write(head + out + table + b"".join(secs))


if __name__ == "__main__":
    main()
