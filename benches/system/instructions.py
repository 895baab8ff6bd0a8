#!/usr/bin/env python3
"""Instructions per delivered watch event, per listed item and per write,
counted by callgrind, so the numbers repeat on a noisy machine.

Builds `benches/instructions.rs` (release), runs each of its modes under
`valgrind --tool=callgrind` at two counts with the same set-up, reads each
run's total instructions (the `totals:` line of the callgrind out file) and
prints a table. Per operation = (total at the larger count - total at the
smaller) / (operations at the larger - at the smaller): start-up and set-up
cancel out.

Watch and list modes also run at two sizes (watchers, items per page), which
splits the cost into a part per delivered event (per item) and a part per
committed entry (per page) that the watchers (items) share:

    per entry at W watchers = fixed + W x per event
    per page of L items     = fixed + L x per item

A measurement, not a test: run it by hand and record the table in
docs/benchmarks.md. About 3-5 minutes on the project's 2-core machines.

Usage: python3 benches/system/instructions.py [--binary PATH] [--out DIR]
           [--only watch|list|write]
       python3 benches/system/instructions.py --self-test
"""
import argparse, json, os, subprocess, sys, time

# (watchers, entries): two watcher counts, each at two entry counts.
WATCH_SIZES = (100, 1000)
WATCH_COUNTS = (10, 30)
# (items per page, pages).
LIST_SIZES = (50, 500)
LIST_COUNTS = (4, 12)
WRITE_COUNTS = (50, 150)
ENCODINGS = ("json", "protobuf", "cbor")
VERBS = ("create", "update", "patch")


def totals(text):
    """The total instructions of a callgrind out file: its `totals:` line, or
    `summary:` in files that have no totals line."""
    summary = None
    for line in text.splitlines():
        if line.startswith("totals:"):
            return int(line.split()[1])
        if line.startswith("summary:"):
            summary = int(line.split()[1])
    if summary is None:
        raise ValueError("no totals: or summary: line in the callgrind output")
    return summary


def operations(stdout):
    """The `operations: N` line the bench prints."""
    for line in stdout.splitlines():
        if line.startswith("operations:"):
            return int(line.split()[1])
    raise ValueError("the bench printed no operations: line")


def build():
    """Builds the bench and returns its executable."""
    command = ["cargo", "bench", "--bench", "instructions", "--no-run", "--message-format=json"]
    result = subprocess.run(command, check=True, stdout=subprocess.PIPE, text=True)
    for line in result.stdout.splitlines():
        message = json.loads(line)
        if message.get("reason") == "compiler-artifact" and message.get("target", {}).get("name") == "instructions":
            if message.get("executable"):
                return message["executable"]
    raise SystemExit("cargo built no instructions bench")


def count(binary, out, mode, kind, size, n):
    """Runs one mode under callgrind: (instructions, operations)."""
    name = f"{mode}-{kind}-{size}-{n}"
    out_file = os.path.join(out, f"callgrind.{name}.out")
    command = ["valgrind", "--tool=callgrind", f"--callgrind-out-file={out_file}", binary, mode, kind, str(size), str(n)]
    started = time.monotonic()
    result = subprocess.run(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    if result.returncode != 0:
        sys.stderr.write(result.stderr[-4000:])
        raise SystemExit(f"{' '.join(command)} failed ({result.returncode})")
    with open(out_file) as f:
        instructions = totals(f.read())
    ops = operations(result.stdout)
    print(f"  {name}: {instructions:,} instructions, {ops:,} operations ({time.monotonic() - started:.0f} s)",
          file=sys.stderr)
    return instructions, ops


def per_op(low, high):
    """Instructions per operation between two runs (instructions, operations)."""
    return (high[0] - low[0]) / (high[1] - low[1])


def split(size_a, per_a, size_b, per_b):
    """Solves per = fixed + size x marginal from two sizes: (fixed, marginal)."""
    marginal = (per_b - per_a) / (size_b - size_a)
    return per_a - size_a * marginal, marginal


def fanout(binary, out, mode, kind, sizes, counts):
    """A watch or list mode at two sizes: per unit at each size (per entry,
    per page) and the split into fixed and marginal."""
    per_unit = []
    for size in sizes:
        low = count(binary, out, mode, kind, size, counts[0])
        high = count(binary, out, mode, kind, size, counts[1])
        # Operations are size x count; per unit of count (entry, page):
        per_unit.append((high[0] - low[0]) / (counts[1] - counts[0]))
    fixed, marginal = split(sizes[0], per_unit[0], sizes[1], per_unit[1])
    return per_unit, fixed, marginal


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--binary", help="the built bench (default: build it with cargo)")
    parser.add_argument("--out", default="target/instructions", help="where the callgrind files go")
    parser.add_argument("--only", choices=("watch", "list", "write"), action="append")
    parser.add_argument("--self-test", action="store_true", help="check the parsers and the arithmetic, then exit")
    args = parser.parse_args()
    if args.self_test:
        self_test()
        return
    os.makedirs(args.out, exist_ok=True)
    binary = args.binary or build()
    only = set(args.only or ("watch", "list", "write"))
    rows = []
    started = time.monotonic()
    if "watch" in only:
        w1, w2 = WATCH_SIZES
        for encoding in ENCODINGS:
            print(f"watch {encoding}", file=sys.stderr)
            (entry_1, entry_2), fixed, marginal = fanout(binary, args.out, "watch", encoding, WATCH_SIZES, WATCH_COUNTS)
            rows.append((f"watch {encoding}", f"per delivered event, {w2} watchers (entry's share included)", entry_2 / w2))
            rows.append((f"watch {encoding}", "per delivered event, marginal (one more watcher)", marginal))
            rows.append((f"watch {encoding}", "per committed entry, shared by its watchers", fixed))
    if "list" in only:
        l1, l2 = LIST_SIZES
        for encoding in ENCODINGS:
            print(f"list {encoding}", file=sys.stderr)
            (page_1, page_2), fixed, marginal = fanout(binary, args.out, "list", encoding, LIST_SIZES, LIST_COUNTS)
            rows.append((f"list {encoding}", f"per item, pages of {l2} (page's share included)", page_2 / l2))
            rows.append((f"list {encoding}", "per item, marginal (one more item in a page)", marginal))
            rows.append((f"list {encoding}", "per page request, shared by its items", fixed))
    if "write" in only:
        for verb in VERBS:
            print(f"write {verb}", file=sys.stderr)
            low = count(binary, args.out, "write", verb, 0, WRITE_COUNTS[0])
            high = count(binary, args.out, "write", verb, 0, WRITE_COUNTS[1])
            rows.append((f"write {verb}", "per write (pod, JSON)", per_op(low, high)))
    print(f"| mode | instructions | per |")
    print(f"| --- | ---: | --- |")
    for mode, what, value in rows:
        print(f"| {mode} | {value:,.0f} | {what} |")
    print(f"\n{len(rows)} rows, {time.monotonic() - started:.0f} s", file=sys.stderr)


def self_test():
    sample = "version: 1\ncreator: callgrind-3.19.0\nevents: Ir\nfn=(1) main\n16 3\nsummary: 1234\n\n\ntotals: 1234567\n"
    assert totals(sample) == 1234567, totals(sample)
    assert totals("events: Ir\nsummary: 42\n") == 42
    try:
        totals("events: Ir\n")
        raise AssertionError("a file without totals was accepted")
    except ValueError:
        pass
    assert operations("operations: 3000\n") == 3000
    assert per_op((1_000, 10), (3_000, 30)) == 100
    # per = 500 + 7 x size, seen at sizes 100 and 1000:
    assert split(100, 500 + 700, 1000, 500 + 7000) == (500, 7)
    print("self-test passed")


if __name__ == "__main__":
    main()
