#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""The report of `make bench`: markdown tables of ratios from the guests'
"bench KEY=VALUE ..." lines (tests/bench/mmap3_bench.c).

Usage: bench_report.py PATCHED_TESTS_LOG UPSTREAM_TESTS_LOG

Every ratio is taken within one round (configurations of a round ran one
after the other, in a rotating order), then summarised over the rounds:
median, and min-max in brackets. Times are medians over rounds.
"""
import statistics
import sys

NAMES = {
    "none": "none (no event)",
    "mmap2": "MMAP2",
    "mmap2bid": "MMAP2+build_id (upstream)",
    "mmap3": "MMAP3 (cache hit)",
    "mmap3-nocache": "MMAP3, cache off (`cache_entries=0`)",
}


def parse(path):
    rows, comments = [], []
    with open(path, errors="replace") as f:
        for line in f:
            line = line.rstrip("\r\n")
            if line.startswith("# "):
                comments.append(line[2:])
            if not line.startswith("bench "):
                continue
            row = dict(kv.split("=", 1) for kv in line.split()[1:] if "=" in kv)
            for k, v in row.items():
                try:
                    row[k] = int(v)
                except ValueError:
                    pass
            if row.get("cfg") == "mmap3" and row.get("module") == "nocache":
                row["cfg"] = "mmap3-nocache"
            rows.append(row)
    return rows, comments


def select(rows, **kw):
    return [r for r in rows if all(r.get(k) == v for k, v in kw.items())]


def per_round(rows, value):
    """{round: value(row)} (the last row of a round wins; there is one)."""
    return {r["round"]: value(r) for r in rows}


def summary(values, fmt="{:.2f}"):
    """'median [min-max]' of values."""
    if not values:
        return "n/a"
    med = statistics.median(values)
    if len(values) == 1:
        return fmt.format(med)
    return f"{fmt.format(med)} [{fmt.format(min(values))}-{fmt.format(max(values))}]"


def ratios(a, b):
    """a[r] / b[r] for each round r in both."""
    return [a[r] / b[r] for r in sorted(a) if r in b and b[r] > 0]


def median(d):
    return statistics.median(d.values()) if d else float("nan")


def us(ns):
    return f"{ns / 1000:.1f}"


class Report:
    def __init__(self, patched, upstream):
        self.p, self.p_notes = parse(patched)
        self.u, self.u_notes = parse(upstream)
        self.out = []
        self.targets = []

    def w(self, s=""):
        self.out.append(s)

    def table(self, head, rows):
        self.w("| " + " | ".join(head) + " |")
        self.w("|" + "|".join("---" if i == 0 else "--:" for i in range(len(head))) + "|")
        for r in rows:
            self.w("| " + " | ".join(r) + " |")
        self.w()

    def target(self, what, ok, value, why=""):
        self.targets.append((what, ok, value, why))

    # Times per call: {cfg: {round: ns per call}}
    def map_times(self, rows, mode):
        out = {}
        for cfg in NAMES:
            sel = select(rows, test="map", mode=mode, cfg=cfg)
            if not sel:
                continue
            out[cfg] = per_round(sel, lambda r: (r["ns"] - r["drop_ns"]) / r["iters"])
        return out

    def ratio_table(self, times, cols, extra=None):
        head = ["listening", "µs per call (TCG)"] + [f"÷ {NAMES[c].split(' (')[0]}" for c in cols]
        if extra:
            head += [e[0] for e in extra]
        body = []
        for cfg, t in times.items():
            row = [NAMES[cfg], summary([v / 1000 for v in t.values()], "{:.1f}")]
            for c in cols:
                row.append("1" if c == cfg else summary(ratios(t, times[c])) if c in times else "n/a")
            for e in extra or []:
                row.append(e[1](cfg))
            body.append(row)
        self.table(head, body)

    def item1(self):
        self.w("## 1. mmap+munmap, warm page cache, one listening event on the task")
        self.w()
        t = self.map_times(self.p, "warm")
        self.warm = t
        self.ratio_table(t, ["none", "mmap2", "mmap2bid"],
                         [("module: hits / deferred per call", lambda c: self.stats(self.p, "map", "warm", c))])
        if "mmap3" in t and "mmap2bid" in t and "mmap2" in t:
            r_bid = statistics.median(ratios(t["mmap3"], t["mmap2bid"]))
            r_m2 = statistics.median(ratios(t["mmap3"], t["mmap2"]))
            self.target("(1) MMAP3 cache hit ≤ MMAP2+build_id", r_bid <= 1.0,
                        f"{r_bid:.2f}")
            self.target("(1) MMAP3 cache hit within 10% of MMAP2", r_m2 <= 1.10,
                        f"{r_m2:.2f}")

    def stats(self, rows, test, mode, cfg):
        sel = select(rows, test=test, cfg=cfg, **({"mode": mode} if mode else {}))
        if not cfg.startswith("mmap3") or not sel:
            return ""
        iters = sum(r["iters"] for r in sel)
        return f"{sum(r['hits'] for r in sel) / iters:.2f} / {sum(r['deferred'] for r in sel) / iters:.2f}"

    def item2(self):
        self.w("## 2. mmap+munmap, the file's pages dropped before each call")
        self.w()
        t = self.map_times(self.p, "cold")
        drops = [r["drop_ns"] / r["iters"] for r in select(self.p, test="map", mode="cold")]
        self.ratio_table(t, ["none", "mmap2bid"],
                         [("module: hits / deferred per call", lambda c: self.stats(self.p, "map", "cold", c))])
        self.w(f"Dropping the pages (`posix_fadvise(POSIX_FADV_DONTNEED)` on the whole file) "
               f"took {summary([d / 1000 for d in drops], '{:.1f}')} µs per call on its own; "
               "it is timed separately after each loop and subtracted.")
        self.w()
        self.cold = t

    def item3(self):
        self.w("## 3. fork+exec of a tiny static binary, system-wide event (one per CPU)")
        self.w()
        t = {}
        for cfg in NAMES:
            sel = select(self.p, test="exec", cfg=cfg)
            if sel:
                t[cfg] = per_round(sel, lambda r: r["ns"] / r["iters"])

        def cover(cfg):
            sel = select(self.p, test="exec", cfg=cfg)
            maps = sum(r["mappings"] for r in sel)
            if cfg == "none" or not maps:
                return ""
            return f"{100 * sum(r['right'] for r in sel) / maps:.0f}% of {maps}"
        self.ratio_table(t, ["none", "mmap2bid"], [("right build-id", cover)])
        self.execs = t
        if "mmap3" in t and "mmap2bid" in t:
            r = statistics.median(ratios(t["mmap3"], t["mmap2bid"]))
            self.target("(3) exec: MMAP3 ≤ MMAP2+build_id", r <= 1.0, f"{r:.2f}")

    def item4(self):
        self.w("## 4. No MMAP3 listener: the patched kernel (module loaded) against the unpatched one")
        self.w()
        pw = self.map_times(self.p, "warm")
        uw = self.map_times(self.u, "warm")
        pref = per_round(select(self.p, test="ref"), lambda r: r["ns"] / r["iters"])
        uref = per_round(select(self.u, test="ref"), lambda r: r["ns"] / r["iters"])
        body = []
        for cfg in ("none", "mmap2", "mmap2bid"):
            if cfg not in pw or cfg not in uw:
                continue
            raw = ratios(pw[cfg], uw[cfg])
            norm = [pw[cfg][r] / pref[r] / (uw[cfg][r] / uref[r])
                    for r in sorted(pw[cfg]) if r in uw[cfg] and r in pref and r in uref]
            body.append([NAMES[cfg], us(median(pw[cfg])), us(median(uw[cfg])),
                         summary(raw), summary(norm)])
            if cfg == "none":
                n = statistics.median(norm)
                self.target("(4) no listener: patched ÷ unpatched = 1.00", abs(n - 1) <= 0.03,
                            f"{n:.2f}")
        self.table(["listening", "patched µs/call", "unpatched µs/call",
                    "patched ÷ unpatched", "same, each boot ÷ its user-space loop"], body)
        self.w(f"User-space reference loop: patched {us(median(pref) * 1e6)} ms, unpatched "
               f"{us(median(uref) * 1e6)} ms per million iterations (two boots: the host's speed "
               "may differ between them; the last column corrects for it).")
        self.w()

    def item5(self):
        self.w("## 5. Build-id coverage: mappings with the right build-id (MANIFEST)")
        self.w()
        body = []
        for rows, kernel in ((self.p, "patched"), (self.u, "unpatched")):
            for cfg in ("mmap2bid", "mmap3", "mmap3-nocache"):
                row = [f"{NAMES[cfg]}, {kernel} kernel"]
                any_ = False
                for mode in ("warm", "cold"):
                    sel = select(rows, test="cover", cfg=cfg, mode=mode)
                    files = sum(r["files"] for r in sel)
                    right = sum(r["right"] for r in sel)
                    any_ |= bool(sel)
                    row.append(f"{100 * right / files:.0f}% ({right}/{files})" if files else "n/a")
                    if cfg.startswith("mmap3") and files:
                        self.target(f"(5) {NAMES[cfg]} {mode}: 100%", right == files,
                                    f"{100 * right / files:.0f}%")
                if any_:
                    body.append(row)
        self.table(["listening", "warm", "cold"], body)

    def run(self):
        self.w("# mmap3 benchmark: MMAP3 against MMAP2 and upstream's MMAP2+build_id")
        self.w()
        self.w("Times are guest times under QEMU TCG (CLOCK_MONOTONIC in the guest), on a "
               "host shared with other work: **only the ratios mean anything**. Each ratio "
               "is taken within a round, then summarised over rounds as median [min-max].")
        self.w()
        for note in self.p_notes + self.u_notes:
            if note.startswith(("patched kernel", "upstream kernel", "bench.conf")):
                self.w(f"- {note}")
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
        self.table(["target", "value", "met"],
                   [[t[0], t[2], "yes" if t[1] else "**no**"] for t in self.targets])
        return "\n".join(self.out)


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit("usage: bench_report.py PATCHED_TESTS_LOG UPSTREAM_TESTS_LOG")
    print(Report(sys.argv[1], sys.argv[2]).run())
