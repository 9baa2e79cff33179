#!/usr/bin/env python3
"""Runs a grading executable (or `labkit grade`) on a test lab and checks the verdict it reports.

  expect_verdict.py [checks] -- COMMAND...
checks:
  --verdict V            the result's verdict (required)
  --outcome TEXT         some failing case's outcome contains TEXT
  --text TEXT            the message, hint, a case's detail or a sanitizer finding contains TEXT
                         (repeatable: each must be found)
  --speedup-contains X   the geometric-mean speedup interval, widened by the printed precision
                         of speedups (0.005), contains X
  --twice                run COMMAND twice; the two speedups must agree within 3%
Exit: 0 checks passed, 1 a check failed, 77 the command reported no CUDA device (or exited 77
without a result: `labkit grade --sanitize` with no GPU or no compute-sanitizer).
COMMAND gets --json; for `labkit grade` the first result of {"results": [...]} is checked.
"""
import argparse
import json
import subprocess
import sys


def run(command):
    p = subprocess.run(command + ["--json"], capture_output=True, text=True, timeout=900)
    try:
        doc = json.loads(p.stdout)
    except json.JSONDecodeError:
        if p.returncode == 77:
            print(f"skipped: {p.stderr.strip()}")
            sys.exit(77)
        print(f"no JSON from {' '.join(command)} (exit {p.returncode})\nstdout:\n{p.stdout}\nstderr:\n{p.stderr}")
        sys.exit(1)
    result = doc["results"][0] if "results" in doc else doc
    return p.returncode, result, p.stderr


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--verdict", required=True)
    ap.add_argument("--outcome")
    ap.add_argument("--text", action="append", default=[])
    ap.add_argument("--speedup-contains", type=float)
    ap.add_argument("--twice", action="store_true")
    ap.add_argument("command", nargs=argparse.REMAINDER)
    a = ap.parse_args()
    command = a.command[1:] if a.command and a.command[0] == "--" else a.command

    code, r, err = run(command)
    if r.get("verdict") == "no-device":
        print("no CUDA device: skipped")
        sys.exit(77)
    print(json.dumps(r, indent=2)[:6000])
    failures = []
    if r.get("verdict") != a.verdict:
        failures.append(f"verdict {r.get('verdict')!r}, expected {a.verdict!r}")
    expected_code = 0 if a.verdict == "passed" else 1
    if code != expected_code:
        failures.append(f"exit code {code}, expected {expected_code}")
    cases = r.get("cases", [])
    if a.outcome and not any(a.outcome in c.get("outcome", "") for c in cases if not c.get("passed")):
        failures.append(f"no failing case with outcome containing {a.outcome!r}")
    texts = [r.get("message", ""), r.get("hint", "")] + [c.get("detail", "") for c in cases]
    texts.append(json.dumps(r.get("sanitizer", {})))
    for text in a.text:
        if not any(text in t for t in texts):
            failures.append(f"no message, hint, case detail or sanitizer finding contains {text!r}")
    if r.get("verdict") != "passed" and r.get("score", {}).get("total", 0) >= r.get("score", {}).get("max", 1) > 0:
        failures.append("a failed lab got full marks")
    if not r.get("score", {}).get("max", 0) > 0:
        failures.append("the result has no maximum score: a crashed or hung lab must still count its points")
    timing = r.get("timing", {})
    if a.speedup_contains is not None:
        lo, hi = timing.get("speedup_low", 0), timing.get("speedup_high", 0)
        # Two buffers of the same kernel can differ by a real 0.03% (measured): the interval is
        # widened by the precision speedups are printed with.
        if not lo - 0.005 <= a.speedup_contains <= hi + 0.005:
            failures.append(f"speedup interval [{lo}, {hi}] does not contain {a.speedup_contains}")
    if a.twice:
        _, r2, _ = run(command)
        s1, s2 = timing.get("speedup", 0), r2.get("timing", {}).get("speedup", 0)
        print(f"speedups of two runs: {s1:.4f} and {s2:.4f}")
        if not (s1 > 0 and abs(s2 / s1 - 1) <= 0.03):
            failures.append(f"two runs disagree: {s1:.4f} vs {s2:.4f} (more than 3%)")
    for f in failures:
        print("FAILED:", f)
    sys.exit(1 if failures else 0)


main()
