# SPDX-License-Identifier: GPL-2.0
# gdb -batch -x tests/bench/trace.py: the instruction profile of one
# mapping per configuration (scripts/profile.sh). Attached to QEMU's
# gdbstub, it stops at perf_event_mmap() (or PROF_FN) for the mappings
# mmap3_bench makes at MAP_AT, single-steps the HIT-th call of each run of
# the guest script (tests/bench/guest-profile.sh) to its return, and writes where the
# instructions went: per function, self and inclusive (calls followed
# through a shadow stack of return addresses), and who called memcpy and
# memset. Symbols come from the guest's /proc/kallsyms, the module's again
# after each run (each run loads the module anew).
#
# Environment: PROF_LOG (the guest's output, being written), PROF_PORT,
# PROF_RUNS (the guest script's runs, in order), PROF_HITS (mappings at
# MAP_AT per run), PROF_HIT (which one is stepped), PROF_OUT (the report).
import bisect
import collections
import os
import re
import time

import gdb

LOG = os.environ["PROF_LOG"]
RUNS = os.environ["PROF_RUNS"].split()
HITS = int(os.environ["PROF_HITS"])
HIT = int(os.environ["PROF_HIT"])
MAP_AT = 0x200000000000  # tests/bench/mmap3_bench.c
MAX_STEPS = 200000
SYM = re.compile(r"ksym ([0-9a-f]+) ([tTwW]) (\S+)(?:\s+\[(\S+)\])?$")
# The allocators' slow paths come and go with the allocator's state (a
# kmalloc() that takes a new slab): counted apart, so that runs compare.
ALLOCATOR = re.compile(r"slab|frozen|rmqueue|freelist|pcp|_page|page_|buddy|zone|"
                       r"kfree|kmalloc|alloc_from|free_to|memcg")
MEM = ("memcpy", "memcpy_orig", "memset", "memset_orig")
# PROF_AT=SUBSTRING: also count the steps at each address of the functions
# whose names hold SUBSTRING (what to read with objdump beside them).
AT = os.environ.get("PROF_AT", "")
# PROF_FN: the function stepped: perf_event_mmap() (the default) for the VMA
# at MAP_AT, do_syscall_64() for the mmap() system call at MAP_AT (all of it
# to the return to user space, task work included), or one whose first
# argument is MAP_AT (ksys_mmap_pgoff(): the mmap() call without the entry
# and exit work; __vm_munmap(): the munmap()).
FN = os.environ.get("PROF_FN", "perf_event_mmap")
# PROF_CALLS: how many calls in a row are stepped, from the HIT-th; the
# first is reported in full, each with its totals, and their mean (what a
# loop pays, the allocators' slow paths included).
CALLS = int(os.environ.get("PROF_CALLS", "1"))


def guest_output(marker):
    """The guest's output once it holds `marker`."""
    while True:
        if os.path.exists(LOG):
            with open(LOG, errors="replace") as f:
                text = f.read()
            if marker in text:
                return text
        time.sleep(0.5)


def symbols(lines, module_only=False):
    """(address, name) of the text symbols of kallsyms lines, sorted."""
    out = []
    for line in lines:
        m = SYM.match(line)
        if not m or (module_only and m.group(4) != "mmap3"):
            continue
        out.append((int(m.group(1), 16), m.group(3) + ("[%s]" % m.group(4) if m.group(4) else "")))
    return sorted(out)


def step_call(inferior, ret_sp):
    """Single-steps the current call to its return: [(pc, sp, pushed return address or 0)]."""
    def reg(name):
        return int(gdb.parse_and_eval("$" + name)) & (2**64 - 1)

    ret = int.from_bytes(bytes(inferior.read_memory(ret_sp, 8)), "little")
    trace, prev_sp = [], ret_sp
    while len(trace) < MAX_STEPS:
        pc, sp = reg("pc"), reg("rsp")
        if pc == ret and sp > ret_sp:
            break
        pushed = 0
        if sp == prev_sp - 8:
            pushed = int.from_bytes(bytes(inferior.read_memory(sp, 8)), "little")
        trace.append((pc, sp, pushed))
        prev_sp = sp
        gdb.execute("stepi", to_string=True)
    return trace


def symbolizer(syms):
    """The (address, name) of the symbol that holds a pc."""
    addrs = [a for a, _ in syms]

    def sym(pc):
        i = bisect.bisect_right(addrs, pc) - 1
        return syms[i] if i >= 0 else (pc, hex(pc))
    return sym


def allocator_steps(trace, sym):
    return sum(1 for pc, _, _ in trace if ALLOCATOR.search(sym(pc)[1]))


def report(out, run, trace, syms):
    sym = symbolizer(syms)

    own, incl, mem = collections.Counter(), collections.Counter(), collections.Counter()
    at = collections.Counter()
    stack = [(FN, 0, 0)]
    for pc, sp, pushed in trace:
        while len(stack) > 1 and pc == stack[-1][1] and sp == stack[-1][2] + 8:
            stack.pop()
        start, name = sym(pc)
        if AT and AT in name:
            at[(name, pc - start)] += 1
        if pushed and pc == start:
            stack.append((name, pushed, sp))
        own[name] += 1
        for frame in {f[0] for f in stack}:
            incl[frame] += 1
        if len(stack) > 1 and stack[-1][0] in MEM:
            mem["%s <- %s" % (stack[-1][0], stack[-2][0])] += 1
    alloc = allocator_steps(trace, sym)
    out.write("run %s: %d instructions, %d without the allocators\n" % (run, len(trace), len(trace) - alloc))
    for name, c in own.most_common():
        out.write("  %6d self %s\n" % (c, name))
    for name, c in incl.most_common(30):
        out.write("  %6d incl %s\n" % (c, name))
    for name, c in mem.most_common():
        out.write("  %6d mem  %s\n" % (c, name))
    for (name, off), c in sorted(at.items()):
        out.write("  %6d at   %s+0x%x\n" % (c, name, off))


text = guest_output("PROF-READY")
kernel_syms = [s for s in symbols(text.splitlines()) if not s[1].endswith("[mmap3]")]
target = next(a for a, n in kernel_syms if n == FN)
gdb.execute("set pagination off")
gdb.execute("set confirm off")
gdb.execute("target remote 127.0.0.1:%s" % os.environ["PROF_PORT"])
if FN == "perf_event_mmap":  # its argument is the VMA, whose first field is its start
    gdb.execute("break *0x%x if *(unsigned long *)$rdi == 0x%x" % (target, MAP_AT))
elif FN == "do_syscall_64":  # the mmap() system call (9), whose regs->di is MAP_AT
    gdb.execute("break *0x%x if $rsi == 9 && *(unsigned long *)($rdi + 112) == 0x%x"
                % (target, MAP_AT))
else:
    gdb.execute("break *0x%x if $rdi == 0x%x" % (target, MAP_AT))
inferior = gdb.selected_inferior()
traces = {}
for run in RUNS:
    for hit in range(1, HITS + 1):
        gdb.execute("continue", to_string=True)
        if HIT <= hit < HIT + CALLS:
            sp = int(gdb.parse_and_eval("$rsp")) & (2**64 - 1)
            traces.setdefault(run, []).append(step_call(inferior, sp))
gdb.execute("delete")
gdb.execute("detach")

text = guest_output("PROF-DONE")
with open(os.environ["PROF_OUT"], "w") as out:
    for run in RUNS:
        part = text.split("PROF-SYMS %s\n" % run, 1)[1].split("PROF-", 1)[0]
        syms = sorted(kernel_syms + symbols(part.splitlines(), module_only=True))
        report(out, run, traces[run][0], syms)
        if CALLS > 1:
            sym = symbolizer(syms)
            totals = [(len(t), len(t) - allocator_steps(t, sym)) for t in traces[run]]
            for k, (n, w) in enumerate(totals):
                out.write("  call %d: %d instructions, %d without the allocators\n" % (HIT + k, n, w))
            out.write("run %s: %d calls, mean %.0f instructions, %.0f without the allocators\n"
                      % (run, CALLS, sum(n for n, _ in totals) / CALLS,
                         sum(w for _, w in totals) / CALLS))
