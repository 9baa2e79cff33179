#!/usr/bin/env python3
"""One line per lab from `labkit grade --json` output: verdict, score, speedup and the judge's
timing bounds (median lab time, the judge's clock less round trip, the gap, floor, clean baseline).

  labkit grade ... --json > out.json; tools/grade-summary.py [--phases] out.json [more.json ...]

--phases adds where each grade's seconds went (the judge's "phases" record).
"""
import sys

from grade_results import grade_results


def main():
    args = sys.argv[1:]
    phases = "--phases" in args
    for _, r in grade_results(a for a in args if a != "--phases"):
        lab = r.get("lab", {})
        t = r.get("timing", {})
        score = r.get("score", {})
        line = (f"{lab.get('role', '?')[:4]} {lab.get('id', '?'):<20} {r.get('verdict', '?'):<19} "
                f"{score.get('total', 0):5.2f}/{score.get('max', 0):<4g} "
                f"speedup {t.get('speedup', 0):6.2f}x  {r.get('seconds', 0):5.1f} s  sandbox: {r.get('sandbox', '')[:22]}")
        print(line)
        for s in t.get("shapes", []):
            print(f"     {s.get('name', ''):<14} base {s.get('baseline_ms', 0):8.4f} (clean {s.get('baseline_clean_ms', 0):8.4f}) "
                  f"lab {s.get('lab_ms', 0):8.4f} wall {s.get('lab_wall_ms', 0):8.4f} rtt {s.get('round_trip_ms', 0):.4f} "
                  f"gap {s.get('lab_extra_host_ms', 0):+.4f} floor {s.get('floor_ms', 0):.4f} n={s.get('samples', 0)}")
        if phases:
            print("     " + "; ".join(f"{p.get('phase', '?').strip()} {p.get('seconds', 0):.2f} s"
                                     for p in r.get("phases", [])))
        if r.get("verdict") not in ("passed",):
            msg = (r.get("message", "") or "").replace("\n", " ")[:300]
            print(f"     message: {msg}")


main()
