#!/usr/bin/env python3
"""Per lab, over repeated `labkit grade --json` runs (each with its own fresh seed): how many
passed and with full marks, the spread of the speedup, and the grading time.

  for r in $(seq 20); do labkit grade --all --solutions --json > run-$r.json; done
  tools/repeat-summary.py run-*.json

Spread = max/min - 1 of the speedups: "the same kernel graded twice within 3%" holds when it is
under 3%. Exits 1 when any run of any lab did not pass.
"""
import statistics
import sys
from collections import defaultdict

from grade_results import grade_results


def main():
    runs = defaultdict(list)
    for _, r in grade_results(sys.argv[1:]):
        runs[r.get("lab", {}).get("id", "?")].append(r)
    ok = True
    print(f"{'lab':<20} {'runs':>4} {'passed':>6} {'full':>4}  {'speedup min / median / max':<28} {'spread':>7}  seconds min / median / max")
    for lab in sorted(runs):
        rs = runs[lab]
        passed = sum(r.get("verdict") == "passed" for r in rs)
        full = sum(abs(r.get("score", {}).get("total", 0) - r.get("score", {}).get("max", -1)) < 1e-9 for r in rs)
        sp = [r.get("timing", {}).get("speedup", 0) for r in rs if r.get("timing", {}).get("measured")]
        secs = [r.get("seconds", 0) for r in rs]
        spread = f"{100 * (max(sp) / min(sp) - 1):6.1f}%" if sp and min(sp) > 0 else "      -"
        sps = f"{min(sp):6.2f} / {statistics.median(sp):6.2f} / {max(sp):6.2f}" if sp else "-"
        print(f"{lab:<20} {len(rs):>4} {passed:>6} {full:>4}  {sps:<28} {spread:>7}  "
              f"{min(secs):5.1f} / {statistics.median(secs):5.1f} / {max(secs):5.1f}")
        for r in rs:
            if r.get("verdict") != "passed":
                ok = False
                msg = (r.get("message", "") or "").replace("\n", " ")[:200]
                print(f"    {r.get('verdict')} (seed {r.get('seed')}): {msg}")
    return 0 if ok else 1


sys.exit(main())
