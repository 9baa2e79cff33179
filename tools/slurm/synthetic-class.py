#!/usr/bin/env python3
"""A synthetic class for `labkit bulk`: submissions whose verdicts are known in advance, so that a
bulk run (on Slurm, on one GPU or several) can be checked against what each submission gets alone.

  tools/slurm/synthetic-class.py OUT [--size N] [--lab 03-tiling] [--kit DIR]
  tools/slurm/synthetic-class.py OUT --all-labs [--size 64]
  tools/slurm/synthetic-class.py OUT --labs 01-restrict-unroll,03-tiling,06-fusion --size 16

Writes OUT/submissions/<student>/labs/<lab>/kernel.cu and OUT/expected.csv (student, lab, source,
verdict): one row per submission. The test labs' `#include "../x"` lines are inlined, so each
kernel.cu stands alone as a student's would.

One lab (--lab, the default: 03-tiling, 5 students): student k hands in entry k of POOL, round
robin: the instructor solution (passed), then the grader's own test labs of tests/labs (each a
kernel.cu that cheats or fails in one known way, with the verdict tests/meson.build expects of it).
The first five are the trusted-grading class: an honest kernel, a forged report, an output cache,
a crash and a hang.

Several labs (--all-labs: every lab of the kit with a solution, 64 students by default; --labs: a
list): every student hands in every lab, as one of the ARCHETYPES, round robin: mostly the
instructor's solutions; untouched skeletons (expected verdict "zero": 0 points with a message,
what the kit's skeletons suite asks of them, whatever the verdict word); half done (solutions for
the first half of the labs, skeletons after); and cheaters, whose plain conv labs (kind conv, timed
op, fp32, not arch-specific: where a conv test lab is graded as it is in tests/meson.build) hold
the conv test labs of CONV_POOL in turn across the class, their other labs the solution. The map
lab (04-float4) gets no test lab: tests/labs has no map kernel with a verdict known in a lab with
float4 evidence. CONV_POOL starts with a forged report, a crash and a hang, so that a small class
(e.g. 6 students x 3 plain conv labs) has all three. A class of S students x L labs is S x L
submissions; `labkit bulk submit OUT/submissions --lab-timeout 60 ...` grades it.
"""
import argparse
import csv
import json
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

# The conv test labs whose verdict does not depend on the lab's evidence (a failed check, a crash,
# a hang: decided before the PTX is read), for the cheaters of a several-lab class.
CONV_POOL = [
    ("forged-static-init", "protocol-error"),
    ("host-segfault", "crashed"),
    ("hang", "timeout"),
    ("cache-by-pointer", "incorrect"),
    ("forged-atexit", "incorrect"),
    ("early-exit", "protocol-error"),
    ("cache-by-shape", "incorrect"),
    ("cache-by-count", "incorrect"),
    ("stale-output", "incorrect"),
    ("zero-output", "incorrect"),
    ("nan-output", "incorrect"),
    ("wrong-index", "incorrect"),
    ("forged-in-forward", "protocol-error"),
]

# Students of a several-lab class, round robin: half of them hand in the solutions, so that the
# same kernel is graded on every GPU of a node (the fairness table of tools/slurm/measure-class.sh);
# the first two are solutions, so that the first round of a two-GPU node grades it on both.
ARCHETYPES = ["solutions", "solutions", "cheats", "skeletons", "solutions", "half"]


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


def plain_conv(kit: pathlib.Path, lab: str) -> bool:
    """A lab where a conv test lab means what it means in tests/labs: kind conv, timed op, fp32."""
    spec = json.loads((kit / "labs" / lab / "lab.json").read_text(encoding="utf-8"))
    return (spec.get("kind") == "conv" and spec.get("timed") == "op" and spec.get("precision") == "fp32"
            and not spec.get("arch_specific", False) and "network_accuracy" not in spec)


def one_lab_class(a, out_rows) -> int:
    solution = a.kit / "solutions" / a.lab / "kernel.cu"
    if not solution.is_file():
        print(f"synthetic-class: {solution} not found (--kit is the kit's source tree, with solutions/)", file=sys.stderr)
        return 2
    for k in range(a.size):
        source, verdict = POOL[k % len(POOL)]
        src = solution if source == "solution" else a.kit / "tests" / "labs" / source / "kernel.cu"
        out_rows.append((f"s{k:03d}-{source}", a.lab, source, verdict, src))
    return 0


def several_lab_class(a, labs, out_rows) -> int:
    for lab in labs:
        for what in ("solutions", "labs"):
            if not (a.kit / what / lab / "kernel.cu").is_file():
                print(f"synthetic-class: {a.kit / what / lab / 'kernel.cu'} not found", file=sys.stderr)
                return 2
    plain = [lab for lab in labs if plain_conv(a.kit, lab)]
    next_test = 0  # the cheaters' test labs go round CONV_POOL across the whole class
    for k in range(a.size):
        kind = ARCHETYPES[k % len(ARCHETYPES)]
        student = f"s{k:03d}-{kind}"
        for i, lab in enumerate(labs):
            source, verdict = "solution", "passed"
            if kind == "skeletons" or (kind == "half" and i >= (len(labs) + 1) // 2):
                source, verdict = "skeleton", "zero"
            elif kind == "cheats" and lab in plain:
                source, verdict = CONV_POOL[next_test % len(CONV_POOL)]
                next_test += 1
            src = {"solution": a.kit / "solutions" / lab / "kernel.cu",
                   "skeleton": a.kit / "labs" / lab / "kernel.cu"}.get(source, a.kit / "tests" / "labs" / source / "kernel.cu")
            out_rows.append((student, lab, source, verdict, src))
    return 0


def main() -> int:
    here = pathlib.Path(__file__).resolve().parent
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("out", type=pathlib.Path)
    p.add_argument("--size", type=int, help="number of students (default 5 for one lab, 64 for several)")
    p.add_argument("--lab", default="03-tiling", help="one lab: the conv lab every student hands in")
    p.add_argument("--all-labs", action="store_true", help="every student hands in every lab of the kit")
    p.add_argument("--labs", help="every student hands in these labs (comma-separated folder names)")
    p.add_argument("--kit", type=pathlib.Path, default=here.parent.parent, help="the kit's source tree")
    a = p.parse_args()
    several = a.all_labs or a.labs
    if a.size is None:
        a.size = 64 if several else 5
    if a.size < 1:
        print("synthetic-class: --size must be at least 1", file=sys.stderr)
        return 2
    rows = []
    if several:
        labs = sorted(d.name for d in (a.kit / "labs").iterdir() if (a.kit / "solutions" / d.name / "kernel.cu").is_file()) \
            if a.all_labs else [x for x in a.labs.split(",") if x]
        status = several_lab_class(a, labs, rows)
    else:
        labs = [a.lab]
        status = one_lab_class(a, rows)
    if status:
        return status
    a.out.mkdir(parents=True, exist_ok=True)
    for student, lab, source, _, src in rows:
        if not src.is_file():
            print(f"synthetic-class: {src} not found", file=sys.stderr)
            return 2
        dst = a.out / "submissions" / student / "labs" / lab / "kernel.cu"
        dst.parent.mkdir(parents=True, exist_ok=True)
        dst.write_text(inline(src) + "\n", encoding="utf-8")
    with open(a.out / "expected.csv", "w", newline="", encoding="utf-8") as f:
        w = csv.writer(f)
        w.writerow(["student", "lab", "source", "verdict"])
        w.writerows(r[:4] for r in rows)
    counts = {}
    for r in rows:
        counts[r[3]] = counts.get(r[3], 0) + 1
    print(f"synthetic-class: {a.size} students x {len(labs)} lab(s) = {len(rows)} submissions in "
          f"{a.out / 'submissions'}; expected verdicts in {a.out / 'expected.csv'} "
          f"({', '.join(f'{v} {n}' for v, n in sorted(counts.items(), key=lambda x: -x[1]))})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
