#!/usr/bin/env python3
"""Per-instruction costs from a callgrind profile, beside the disassembly.

Swift 6.3's DWARF 5 is unreadable to this valgrind, so loop-bench is profiled on a
`strip --strip-debug` copy, and callgrind_annotate cannot show which instruction of a
function costs what. This does, from a profile taken with `--dump-instr=yes`:

    valgrind --tool=callgrind --dump-instr=yes --cache-sim=yes --LL=4194304,16,64 \
        --collect-atstart=no --toggle-collect='*measuredInvalidate*' \
        --callgrind-out-file=/tmp/cg.out /tmp/lb --probe schedule 100000
    Benchmarks/callgrind-instr.py /tmp/cg.out /tmp/lb removeEverywhere \
        --event DLmr --per 100000

prints, for every function of the binary whose name holds the pattern, each instruction's
count of the event (Ir by default; DLmr: last-level read misses) divided by --per (the
probe's operations), next to objdump's disassembly. The call lines' inclusive costs are
left out: a call instruction shows its own cost only.
"""
import argparse
import collections
import re
import subprocess


def costs(path, binary, pattern, event):
    """{(function, address): cost} for the functions of `binary` whose names hold `pattern`."""
    counts = collections.Counter()
    names, objects = {}, {}
    obj = fn = None
    address = 0
    events = []
    after_calls = False
    for line in open(path):
        line = line.rstrip("\n")
        if line.startswith("events:"):
            events = line.split()[1:]
            continue
        m = re.match(r"^(c?ob)=\((\d+)\)(?: (.*))?$", line)
        if m:
            if m.group(3):
                objects[m.group(2)] = m.group(3)
            if m.group(1) == "ob":
                obj = objects[m.group(2)]
            continue
        m = re.match(r"^(c?fn)=\((\d+)\)(?: (.*))?$", line)
        if m:
            if m.group(3):
                names[m.group(2)] = m.group(3)
            if m.group(1) == "fn":
                fn = names[m.group(2)]
            continue
        if line.startswith("calls="):
            after_calls = True
            continue
        m = re.match(r"^(0x[0-9a-f]+|\+\d+|-\d+|\*)\s+\S+((?:\s+\d+)*)$", line)
        if not m:
            continue
        position = m.group(1)
        if position.startswith("0x"):
            address = int(position, 16)
        elif position[0] in "+-":
            address += int(position)
        if after_calls:  # the inclusive cost of the call just named
            after_calls = False
            continue
        if obj == binary and pattern in fn:
            values = m.group(2).split()
            index = events.index(event)
            counts[(fn, address)] += int(values[index]) if index < len(values) else 0
    return counts


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("profile")
    parser.add_argument("binary", help="the profiled binary (as callgrind names it)")
    parser.add_argument("pattern", help="part of the (mangled) function name")
    parser.add_argument("--event", default="Ir")
    parser.add_argument("--per", type=float, default=1.0, help="divide costs by this (operations)")
    parser.add_argument("--min", type=float, default=0.0, help="hide instructions below this cost")
    args = parser.parse_args()
    counts = costs(args.profile, args.binary, args.pattern, args.event)
    for function in sorted({f for f, _ in counts}):
        addresses = sorted(a for f, a in counts if f == function)
        total = sum(counts[(function, a)] for a in addresses)
        print(f"=== {function}: {total / args.per:.2f} {args.event} per operation")
        listing = subprocess.run(
            ["objdump", "-d", "--no-show-raw-insn", f"--start-address={addresses[0]}",
             f"--stop-address={addresses[-1] + 16}", args.binary],
            capture_output=True, text=True, check=True).stdout
        for line in listing.splitlines():
            m = re.match(r"^\s*([0-9a-f]+):\s*(.*)$", line)
            if not m:
                continue
            cost = counts.get((function, int(m.group(1), 16)), 0) / args.per
            if cost >= args.min:
                print(f"{cost:9.3f}  {m.group(1)}: {m.group(2)}")


if __name__ == "__main__":
    main()
