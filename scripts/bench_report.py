#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""The report of `make bench`: markdown tables of ratios from the guests'
"bench KEY=VALUE ..." lines (tests/bench/mmap3_bench.c).

Usage: bench_report.py PATCHED_TESTS_LOG UPSTREAM_TESTS_LOG

mmap3_bench runs every configuration once per block, the blocks one after
the other, the order rotating from block to block; a cycle is as many
blocks as there are configurations (each runs once in each place). A
configuration's time in a cycle is its mean over the cycle's blocks; a
ratio is taken within each cycle, then summarised over the cycles as median
[interquartile range]; times likewise.
"""
import statistics
import sys

NAMES = {
    "none": "none (no event)",
    "mmap2": "MMAP2",
    "mmap2bid": "MMAP2+build_id (upstream)",
    "mmap3": "MMAP3 (cache hit)",
    "mmap3-nc": "MMAP3, cache off (`cache_entries=0`)",
    "ref": "user-space loop",
}
SHORT = {"none": "none", "mmap2": "MMAP2", "mmap2bid": "MMAP2+build_id",
         "mmap3": "MMAP3", "mmap3-nc": "MMAP3 cache off"}


def parse(path):
    rows, notes = [], []
    with open(path, errors="replace") as f:
        for line in f:
            line = line.rstrip("\r\n")
            if line.startswith("# ") and ("kernel: Linux" in line or "bench.conf:" in line):
                notes.append(line[2:])
            if not line.startswith("bench "):
                continue
            row = dict(kv.split("=", 1) for kv in line.split()[1:] if "=" in kv)
            for k, v in row.items():
                try:
                    row[k] = int(v)
                except ValueError:
                    pass
            rows.append(row)
    return rows, notes


def select(rows, **kw):
    return [r for r in rows if all(r.get(k) == v for k, v in kw.items())]


def quartiles(values):
    if len(values) == 1:
        return values[0], values[0], values[0]
    q1, q2, q3 = statistics.quantiles(values, n=4, method="inclusive")
    return q1, q2, q3


def summary(values, fmt="{:.3f}"):
    """'median [q1-q3]' of values."""
    if not values:
        return "n/a"
    q1, q2, q3 = quartiles(values)
    if len(values) == 1:
        return fmt.format(q2)
    return f"{fmt.format(q2)} [{fmt.format(q1)}–{fmt.format(q3)}]"


def med(values):
    return statistics.median(values) if values else float("nan")


def ratios(a, b):
    """a[k] / b[k] for each block k in both."""
    return [a[k] / b[k] for k in sorted(a) if k in b and b[k] > 0]


class Report:
    def __init__(self, patched, upstream):
        self.p, self.p_notes = parse(patched)
        self.u, self.u_notes = parse(upstream)
        self.out = []
        self.targets = []
        self.conf = {}
        for note in self.p_notes:
            if note.startswith("bench.conf:"):
                self.conf = dict(kv.split("=", 1) for kv in note.split()[1:] if "=" in kv)
        self.icount = self.conf.get("TIMING") == "icount"

    def w(self, s=""):
        self.out.append(s)

    def table(self, head, rows):
        self.w("| " + " | ".join(head) + " |")
        self.w("|---" + "|--:" * (len(head) - 1) + "|")
        for r in rows:
            self.w("| " + " | ".join(r) + " |")
        self.w()

    def target(self, what, ok, value, note="", tie=False):
        """ok: met; tie: missed by less than what a boot changes (1%)."""
        verdict = "met" if ok else "tie (missed by < 1%)" if tie else "**missed**"
        self.targets.append([what, value, verdict, note])

    def times(self, rows, test, per, **kw):
        """{cfg: {cycle: mean ns per call over the cycle's blocks}} of one test."""
        n = len({r["cfg"] for r in select(rows, test=test, **kw)})
        out = {}
        for cfg in NAMES:
            cycles = {}
            for r in select(rows, test=test, cfg=cfg, **kw):
                cycles.setdefault(r["block"] // n, []).append(per(r))
            if cycles:
                out[cfg] = {c: statistics.mean(v) for c, v in cycles.items()}
        return out

    def module(self, rows, cfg, **kw):
        sel = select(rows, cfg=cfg, **kw)
        if not cfg.startswith("mmap3") or not sel:
            return ""
        calls = sum(r["iters"] for r in sel)
        return (f"{sum(r['hits'] for r in sel) / calls:.2f} / "
                f"{sum(r['deferred'] for r in sel) / calls:.2f}")

    def ratio_table(self, t, unit, cols, extra):
        head = ["listening", unit] + [f"÷ {SHORT[c]}" for c in cols] + [e[0] for e in extra]
        body = []
        for cfg in t:
            if cfg == "ref":
                continue
            row = [NAMES[cfg], summary([v / 1000 for v in t[cfg].values()], "{:.1f}")]
            for c in cols:
                row.append("1" if c == cfg else summary(ratios(t[cfg], t[c])) if c in t else "n/a")
            row += [e[1](cfg) for e in extra]
            body.append(row)
        self.table(head, body)

    def added(self, t, cfg, base="none"):
        """Median over cycles of what cfg adds to base, in µs per call."""
        return med([(t[cfg][k] - t[base][k]) / 1000 for k in t[cfg] if k in t[base]])

    def item1(self):
        self.w("## 1. mmap+munmap of an ELF file, warm page cache, one event on the task")
        self.w()
        t = self.times(self.p, "map", lambda r: r["ns"] / r["iters"], item=1)
        self.ratio_table(t, "µs per call", ["none", "mmap2", "mmap2bid"],
                         [("module: hits / reads per call",
                           lambda c: self.module(self.p, c, test="map", item=1))])
        if all(c in t for c in ("none", "mmap2", "mmap2bid", "mmap3")):
            a2, ab, a3 = (self.added(t, c) for c in ("mmap2", "mmap2bid", "mmap3"))
            self.w(f"Over no event, per call (median of per-cycle differences): MMAP2 adds "
                   f"{a2:.1f} µs, MMAP2+build_id {ab:.1f} µs, MMAP3 {a3:.1f} µs "
                   f"({a3 / a2:.2f}× what MMAP2 adds).")
            self.w()
            rb = med(ratios(t["mmap3"], t["mmap2bid"]))
            r2 = med(ratios(t["mmap3"], t["mmap2"]))
            why = ("" if rb <= 1.0 else
                   f"MMAP3 adds {a3:.2f} µs per call to no event, MMAP2+build_id {ab:.2f}; "
                   "where it goes, and other boots: tests/bench/NOTES.md")
            self.target("1: MMAP3 cache hit ≤ MMAP2+build_id", rb <= 1.0, f"{rb:.3f}", why,
                        rb <= 1.01)
            self.target("1: MMAP3 cache hit within 10% of MMAP2", r2 <= 1.10, f"{r2:.3f}",
                        "" if r2 <= 1.10 else "where it goes: tests/bench/NOTES.md")
        self.warm = t

    def item2(self):
        self.w("## 2. mmap+munmap, the file's pages dropped before each call")
        self.w()
        t = self.times(self.p, "map", lambda r: (r["ns"] - r["drop_ns"]) / r["iters"], item=2)
        drops = [r["drop_ns"] / r["iters"] / 1000 for r in select(self.p, test="map", item=2)]
        self.ratio_table(t, "µs per call", ["none", "mmap2bid"],
                         [("module: hits / reads per call",
                           lambda c: self.module(self.p, c, test="map", item=2))])
        self.w("The pages are dropped with `posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED)` on "
               "the file (ext2 on a loop device, `/mnt`) before each call; the drops are "
               "timed again alone after each loop (mean "
               f"{statistics.mean(drops):.1f} µs per drop) and subtracted. MMAP3's read, "
               "from task_work before mmap() returns, is inside the timed call. The guest's "
               "disk is a loop device over a file in memory: a read costs the block layer "
               "and a copy, not a real device's latency.")
        self.w()
        if "mmap3-nc" in t and "mmap2bid" in t:
            r = med(ratios(t["mmap3-nc"], t["mmap2bid"]))
            self.w(f"With every lookup a read from the disk (cache off), MMAP3 costs "
                   f"{r:.2f}× MMAP2+build_id, which gives up instead (no build-id, item 5).")
            self.w()

    def item3(self):
        self.w("## 3. fork+exec+wait of a tiny static binary, system-wide event")
        self.w()
        t = self.times(self.p, "exec", lambda r: r["ns"] / r["iters"])

        def right(cfg):
            sel = select(self.p, test="exec", cfg=cfg)
            maps = sum(r["mappings"] for r in sel)
            if cfg == "none" or not maps:
                return ""
            return f"{100 * sum(r['right'] for r in sel) / maps:.0f}% of {maps}"
        self.ratio_table(t, "µs per exec", ["none", "mmap2bid"],
                         [("right build-id", right),
                          ("module: hits / reads per exec",
                           lambda c: self.module(self.p, c, test="exec"))])
        if "mmap3" in t and "mmap2bid" in t:
            r = med(ratios(t["mmap3"], t["mmap2bid"]))
            sel = select(self.p, test="exec", cfg="mmap3")
            n = sum(x["iters"] for x in sel)
            why = ("" if r <= 1.0 else
                   f"per exec the hook looked up {sum(x['hits'] + x['misses'] for x in sel) / n:.1f} "
                   f"files and emitted {sum(x['emitted'] for x in sel) / n:.1f} records, of which "
                   f"{sum(x['mmaps'] for x in sel) / n:.1f} reached a ring: non-executable "
                   "mappings, which no event records (tests/bench/NOTES.md)")
            self.target("3: exec, MMAP3 ≤ MMAP2+build_id", r <= 1.0, f"{r:.3f}", why, r <= 1.01)

    def item4(self):
        self.w("## 4. No MMAP3 event: the patched kernel, module loaded, against the unpatched kernel")
        self.w()
        per = lambda r: r["ns"] / r["iters"]  # noqa: E731
        pw = self.times(self.p, "map", per, item=4)
        uw = self.times(self.u, "map", per, item=4)
        body = []
        for cfg in ("none", "mmap2", "mmap2bid"):
            if cfg not in pw or cfg not in uw or "ref" not in pw or "ref" not in uw:
                continue
            # Cycles of the two boots paired by number; "norm": each time
            # over the user-space loop of its own cycle first.
            raw = ratios(pw[cfg], uw[cfg])
            pn = {k: v / pw["ref"][k] for k, v in pw[cfg].items() if k in pw["ref"]}
            un = {k: v / uw["ref"][k] for k, v in uw[cfg].items() if k in uw["ref"]}
            norm = ratios(pn, un)
            body.append([NAMES[cfg], summary([v / 1000 for v in pw[cfg].values()], "{:.2f}"),
                         summary([v / 1000 for v in uw[cfg].values()], "{:.2f}"),
                         summary(raw), summary(norm)])
            # Under -icount the host's speed is out already; without it,
            # only the normalised ratio compares the two boots.
            r = med(raw) if self.icount else med(norm)
            if cfg == "none":
                self.target("4: no listener, patched ÷ unpatched = 1.00", abs(r - 1) <= 0.01,
                            f"{r:.3f}", "1.00 ± 0.01")
            if cfg == "mmap2":
                self.target("4 (more): MMAP2 listener, patched ÷ unpatched = 1.00",
                            abs(r - 1) <= 0.01, f"{r:.3f}",
                            "the static key's branch is on this path")
        self.table(["listening", "patched µs/call", "unpatched µs/call", "patched ÷ unpatched",
                    "same, each over its user-space loop"], body)
        self.w("The same program, configurations and counts in both boots; no event is an "
               "MMAP3 event, so the hook's static key is off. With a listener (MMAP2 rows), "
               "perf_event_mmap() runs up to the static branch, which is where the series "
               "adds its call.")
        if self.icount:
            self.w("With -icount the host's speed does not enter the times; each block also "
                   "times a user-space loop (no system call), and the last column divides by "
                   "it first, which matters only without -icount.")
        else:
            self.w("Two boots: the host may run one faster than the other. Each block also "
                   "times a user-space loop (no system call); the last column divides each "
                   "time by that loop's time in the same cycle first.")
        self.w()

    def item5(self):
        self.w("## 5. Build-id coverage: mappings whose record has the right build-id")
        self.w()
        body = []
        for rows, kernel in ((self.p, "patched"), (self.u, "unpatched")):
            for cfg in ("mmap2bid", "mmap3", "mmap3-nc"):
                row = [f"{NAMES[cfg].replace(' (cache hit)', '')}, {kernel} kernel"]
                for mode in ("warm", "cold"):
                    sel = select(rows, test="cover", cfg=cfg, mode=mode)
                    files = sum(r["files"] for r in sel)
                    right = sum(r["right"] for r in sel)
                    row.append(f"{100 * right / files:.0f}% ({right}/{files})" if files else "n/a")
                    if cfg.startswith("mmap3") and files:
                        self.target(f"5: {NAMES[cfg].replace(' (cache hit)', '')}, {mode}: 100%",
                                    right == files, f"{100 * right / files:.0f}%")
                if row[1:] != ["n/a", "n/a"]:
                    body.append(row)
        self.table(["listening", "warm", "cold"], body)
        self.w("Each file of the fixtures' MANIFEST that has a build-id is mapped executable "
               "from `/mnt` (4 KiB, as a loader maps its first segment), once read first "
               "(warm), once after POSIX_FADV_DONTNEED (cold), with a freshly loaded module "
               "(empty cache). A record is right when its build-id equals MANIFEST's.")
        self.w()

    def run(self):
        self.w("# mmap3 benchmark: MMAP3 against MMAP2 and upstream's MMAP2+build_id")
        self.w()
        if self.icount:
            self.w("**Times are guest times under QEMU TCG with `-icount shift=0`: the guest's "
                   "clock (CLOCK_MONOTONIC, clock source tsc) advances 1 ns per guest "
                   "instruction, so a time is an instruction count. It does not depend on "
                   "the host's load, but every instruction weighs the same (no cache, TLB or "
                   "device latency): only the ratios mean anything.**")
        else:
            self.w("**Times are guest times under QEMU TCG (CLOCK_MONOTONIC in the guest, "
                   "jiffies clock source: 4 ms steps, so whole loops are timed), on a host "
                   "shared with other work: only the ratios mean anything.**")
        self.w()
        self.w("Configurations are interleaved: each block runs each once, in an order "
               "rotating from block to block, and a cycle has as many blocks as there are "
               "configurations, so that each runs once in each place. A configuration's "
               "time in a cycle is its mean over the cycle; every ratio is taken within a "
               "cycle, then given as median [interquartile range] over the cycles. How it "
               "measures, and what the results mean: tests/bench/NOTES.md.")
        self.w()
        for note in self.p_notes + [n for n in self.u_notes if not n.startswith("bench.conf:")]:
            self.w(f"- {note}")
        c = self.conf
        if c:
            self.w(f"- {c.get('CYCLES')} cycles of {c.get('MAP_ITERS')} warm and "
                   f"{c.get('COLD_ITERS')} cold mmap+munmap calls per configuration and block; "
                   f"{c.get('EXEC_CYCLES')} cycles of {c.get('EXEC_ITERS')} fork+exec per "
                   "configuration and block")
        for r in select(self.p, test="resident"):
            self.w(f"- cold check: `{r['file']}` has {r['warm']} of {r['pages']} pages in the "
                   f"page cache after a read, {r['cold']} after POSIX_FADV_DONTNEED")
        self.w()
        self.item1()
        self.item2()
        self.item3()
        self.item4()
        self.item5()
        self.w("## Targets")
        self.w()
        self.w("Within one boot these ratios repeat to within their interquartile ranges, "
               "but the kernel's state differs from boot to boot (memory layout, allocator "
               "state of the tinyconfig test kernel: SLUB_TINY, one CPU), and with it every "
               "listening configuration's cost by a few percent: differences under ~5% "
               "between two listening configurations are ties (tests/bench/NOTES.md).")
        self.w()
        self.table(["target", "value", "", "note"], self.targets)
        return "\n".join(self.out)


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit("usage: bench_report.py PATCHED_TESTS_LOG UPSTREAM_TESTS_LOG")
    print(Report(sys.argv[1], sys.argv[2]).run())
