#!/usr/bin/env python3
"""Summarize a meson testlog.json as one line: 'N passed, N failed, N skipped'.

Exit status: 0 if nothing failed and at least one test ran, 1 otherwise. meson's own
"No suitable tests defined" exits 0 with an empty log; here that is a failure, since a test
command that runs nothing proves nothing.

With --reports SUITE it prints first, for each test of SUITE, the timing, speedup and verdict
lines of the grader's report that the test printed (tools/gpu-test.sh shows the solutions' speedups
this way, without grading them a second time).

usage: testlog-summary.py BUILD_DIR/meson-logs/testlog.json [--verbose] [--reports SUITE]
"""
import json
import re
import sys

REPORT_LINE = re.compile(r"^(  conv[12] B|  workload  |  geometric mean|Verdict:)")

PASS = {"OK", "EXPECTEDFAIL"}
SKIP = {"SKIP"}


def main() -> int:
    if len(sys.argv) < 2:
        print(__doc__, file=sys.stderr)
        return 2
    path = sys.argv[1]
    verbose = "--verbose" in sys.argv[2:]
    reports = None
    if "--reports" in sys.argv[2:-1]:
        reports = sys.argv[sys.argv.index("--reports") + 1]
    passed = failed = skipped = 0
    failures = []
    try:
        with open(path, encoding="utf-8") as f:
            for line in f:
                if not line.strip():
                    continue
                t = json.loads(line)
                result = t.get("result", "ERROR")
                name = t.get("name", "?")
                if result in PASS:
                    passed += 1
                elif result in SKIP:
                    skipped += 1
                else:
                    failed += 1
                    failures.append(f"{name}: {result}")
                if verbose:
                    print(f"  {result:<8} {name}")
                if reports is not None and name.startswith(reports + " - "):  # "SUITE - project:test"
                    print(f"{name} ({result})")
                    for out in (t.get("stdout") or "").splitlines():
                        if REPORT_LINE.match(out):
                            print(" ".join(out.split()))
    except FileNotFoundError:
        print(f"{path}: no test log (did the tests run?)", file=sys.stderr)
    except json.JSONDecodeError as e:
        print(f"{path}: not a meson test log: {e}", file=sys.stderr)
        failed += 1
    for f in failures:
        print(f"failed: {f}")
    if passed + failed + skipped == 0:
        print("no tests ran: counted as a failure")
        failed = 1
    print(f"{passed} passed, {failed} failed, {skipped} skipped")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
