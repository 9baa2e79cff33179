#!/usr/bin/env python3
"""Two `labkit grade --json` runs side by side (for example two versions of the kit on one GPU):
per lab, the verdicts, the speedups and their ratio, and the seconds each grading took.

  tools/compare-grades.py BEFORE.json AFTER.json
"""
import json
import sys


def load(path):
    with open(path, encoding="utf-8") as f:
        doc = json.load(f)
    return {r["lab"]["id"]: r for r in doc.get("results", [doc])}


def main():
    before, after = load(sys.argv[1]), load(sys.argv[2])
    print(f"{'lab':<20} {'before':>18} {'after':>18} {'ratio':>7} {'s before':>9} {'s after':>8}")
    for lab in sorted(set(before) | set(after)):
        b, a = before.get(lab, {}), after.get(lab, {})
        sb, sa = b.get("timing", {}).get("speedup", 0), a.get("timing", {}).get("speedup", 0)
        ratio = f"{sa / sb:7.3f}" if sb and sa else "      -"
        print(f"{lab:<20} {b.get('verdict', '-'):>10} {sb:6.2f}x {a.get('verdict', '-'):>10} {sa:6.2f}x {ratio} "
              f"{b.get('seconds', 0):9.1f} {a.get('seconds', 0):8.1f}")


main()
