#!/usr/bin/env python3
"""tools/slurm/measure-report.py on a real class run kept as a fixture (fixtures/measure-class-2xh200:
4 students x 14 labs on 2 H200s, cut by its budget after 3 students; the 13-capstone kit-error that
run found is in it). Checks the tables and the projection from the students graded in full.

  test_measure_report.py MEASURE_REPORT FIXTURE
"""
import pathlib
import subprocess
import sys


def main():
    report, fixture = sys.argv[1], pathlib.Path(sys.argv[2])
    p = subprocess.run([sys.executable, report, str(fixture)], capture_output=True, text=True, timeout=60)
    out = p.stdout
    want = [
        # the run's row: cut, 40 of 56 verdicts as expected, the kit job's time from its stamp
        "| 2 | 432 | 467 | - | - | 40 / 56 | 41 | 3 / 3 (kit job 61 s) | 131 | no |",
        "NOT AS EXPECTED: s000-solutions 13-capstone (solution): expected passed, got kit-error (0 points)",
        "NOT AS EXPECTED: s002-cheats 03-tiling (hang): expected timeout, got not-graded ( points)",
        "| 10-streams | 1.358x (n=1) | 1.321x (n=1) | 2.81% |",
        "Largest spread: 2.81% (goal: within 3%)",
        "Run of 2 GPU(s) (cut by its budget): 3 of 4 students graded in full, 172 s a student on average, "
        "223 s the longest; 200 students x 14 labs on 8 GPUs: about 73 min at the average, 94 min if every "
        "student took the longest (the kit job, 61 s, once)",
        "Verdicts not as expected, all runs: 16",
    ]
    failed = [w for w in want if w not in out]
    for w in failed:
        print(f"missing from the report: {w}")
    if p.returncode != 1:  # verdicts not as expected: the report's status says so
        print(f"exit status {p.returncode}, expected 1 (16 verdicts not as expected)")
        failed.append("status")
    if "Projection:" in out:  # no finished run: no projection at a run's own efficiency
        print("a projection from a run that did not finish")
        failed.append("projection")
    if failed:
        print(out)
        print(p.stderr)
        return 1
    print(f"measure-report: {len(want)} lines as expected on {fixture.name}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
