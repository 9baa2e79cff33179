#!/usr/bin/env python3
"""Deals tests to N GPUs so that each shard takes about as long: longest first, each to the shard
with the least time so far (tools/gpu-test.sh --gpus N).

  deal-tests.py N DURATIONS < names      prints "SHARD NAME" for every name, SHARD in 0..N-1

DURATIONS: "name seconds" lines ('#' comments), from an earlier run (tools/gpu-test-durations.txt);
a name it lacks counts as the median of those it has. Only the balance depends on them.
"""
import statistics
import sys


def main():
    if len(sys.argv) != 3 or not sys.argv[1].isdigit() or int(sys.argv[1]) < 1:
        sys.stderr.write(__doc__)
        return 2
    shards = int(sys.argv[1])
    known = {}
    with open(sys.argv[2], encoding="utf-8") as f:
        for line in f:
            parts = line.split()
            if len(parts) == 2 and not line.startswith("#"):
                known[parts[0]] = float(parts[1])
    default = statistics.median(known.values()) if known else 1.0
    names = [n.strip() for n in sys.stdin if n.strip()]
    load = [0.0] * shards
    # Longest first; ties by name, so the same inputs deal the same way.
    for name in sorted(names, key=lambda n: (-known.get(n, default), n)):
        k = min(range(shards), key=lambda i: (load[i], i))
        load[k] += known.get(name, default)
        print(k, name)
    sys.stderr.write("deal-tests: " + ", ".join(f"GPU {i} {s:.0f} s" for i, s in enumerate(load)) + " (estimated)\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
