#!/usr/bin/env python3
"""A synthetic class for `labkit bulk`: submissions whose verdicts are known in advance, so that a
bulk run (on Slurm, on one GPU or several) can be checked against what each submission gets alone.

  tools/slurm/synthetic-class.py OUT [--size N] [--lab 03-tiling] [--kit DIR]

Writes OUT/submissions/<student>/labs/<lab>/kernel.cu for N students (default 5) and
OUT/expected.csv (student, lab, source, verdict). Student k hands in entry k of the pool below, round robin: the
instructor solution (passed), then the grader's own test labs of tests/labs (each a kernel.cu
that cheats or fails in one known way, with the verdict tests/meson.build expects of it). Their
`#include "../x"` lines are inlined, so each kernel.cu stands alone as a student's would.
The first five are the trusted-grading class: an honest kernel, a forged report, an output
cache, a crash and a hang. `labkit bulk submit OUT/submissions --lab-timeout 60 ...` grades it.
"""
import argparse
import csv
import pathlib
import re
import sys

# (source, verdict): "solution" is solutions/LAB; anything else is tests/labs/NAME.
POOL = [
    ("solution", "passed"),
    ("forged-static-init", "protocol-error"),
    ("cache-by-pointer", "incorrect"),
    ("host-segfault", "crashed"),
    ("hang", "timeout"),
    ("forged-atexit", "incorrect"),
    ("early-exit", "protocol-error"),
    ("cache-by-shape", "incorrect"),
    ("cache-by-count", "incorrect"),
    ("stale-output", "incorrect"),
    ("epilog-compute", "hidden-work"),
    ("host-thread-work", "hidden-work"),
    ("input-memset", "input-modified"),
    ("zero-output", "incorrect"),
    ("nan-output", "incorrect"),
    ("wrong-index", "incorrect"),
]


def inline(path: pathlib.Path, seen=None) -> str:
    """The file with its quoted relative includes replaced by their text (each file once)."""
    seen = set() if seen is None else seen
    out = []
    for line in path.read_text(encoding="utf-8").splitlines():
        m = re.match(r'\s*#include\s+"(\.\./[^"]+|[^"/]+\.(?:h|cuh))"', line)
        target = (path.parent / m.group(1)).resolve() if m else None
        if target is not None and target.is_file():
            if target not in seen:
                seen.add(target)
                out.append(f"// ---- inlined from {target.name} ----")
                out.append(inline(target, seen))
                out.append(f"// ---- end of {target.name} ----")
            continue
        out.append(line)
    return "\n".join(out)


def main() -> int:
    here = pathlib.Path(__file__).resolve().parent
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("out", type=pathlib.Path)
    p.add_argument("--size", type=int, default=5, help="number of students")
    p.add_argument("--lab", default="03-tiling", help="the conv lab every student hands in")
    p.add_argument("--kit", type=pathlib.Path, default=here.parent.parent, help="the kit's source tree")
    a = p.parse_args()
    solution = a.kit / "solutions" / a.lab / "kernel.cu"
    if not solution.is_file():
        print(f"synthetic-class: {solution} not found (--kit is the kit's source tree, with solutions/)", file=sys.stderr)
        return 2
    if a.size < 1:
        print("synthetic-class: --size must be at least 1", file=sys.stderr)
        return 2
    a.out.mkdir(parents=True, exist_ok=True)
    rows = []
    for k in range(a.size):
        source, verdict = POOL[k % len(POOL)]
        src = solution if source == "solution" else a.kit / "tests" / "labs" / source / "kernel.cu"
        if not src.is_file():
            print(f"synthetic-class: {src} not found", file=sys.stderr)
            return 2
        student = f"s{k:03d}-{source}"
        dst = a.out / "submissions" / student / "labs" / a.lab / "kernel.cu"
        dst.parent.mkdir(parents=True, exist_ok=True)
        dst.write_text(inline(src) + "\n", encoding="utf-8")
        rows.append({"student": student, "lab": a.lab, "source": source, "verdict": verdict})
    with open(a.out / "expected.csv", "w", newline="", encoding="utf-8") as f:
        w = csv.DictWriter(f, fieldnames=["student", "lab", "source", "verdict"])
        w.writeheader()
        w.writerows(rows)
    print(f"synthetic-class: {a.size} students in {a.out / 'submissions'} ({a.lab}); "
          f"expected verdicts in {a.out / 'expected.csv'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
