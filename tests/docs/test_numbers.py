#!/usr/bin/env python3
"""docs-numbers: the targets and solution speedups the handouts and the root README quote must be
lab.json's, the one source of every number a student plans by (issue 41.1).

Usage: test_numbers.py [SOURCE_ROOT]   (default: the repository holding this file). Exit 0 when
every quoted number is lab.json's, 1 with one line per drift (file:line, the number quoted, the
number lab.json gives), 77 when there is no labs/ folder to check.

What is checked, and what is not:

* Handout target lines (labs/NN-*/README.md). A target number is a number right after "target"
  ("target 1.60x", "the target speedup is **1.05x**", "target of 5.29x") or right before it
  ("the 1.05x target"), and the divisor of the score's formula ("ln(speedup) / ln(1.6)",
  "ln 1.02 / ln 1.05", whose GPU may be named later in its sentence). Lines wrapped in a paragraph
  are read joined. Its GPU is the one named right after it ("5.54x on an H100"; "H100: 5.54x"
  counts the GPU before it; "1.23x on an H100, 1.25x on an H200" gives both) or, failing that, the
  only one of H100 / H200 the paragraph names; "on other GPUs" or "default" right after it makes it
  the default. Then it must equal (to 0.005):
    - for a GPU: lab.json's targets_by_gpu[that GPU].target_speedup
      (H100 = "NVIDIA H100 80GB HBM3", H200 = "NVIDIA H200");
    - for the default: lab.json's target_speedup;
    - naming no GPU: the target the grader uses on both the H100 and the H200, which must be one
      number; where they differ, or the lab has no targets_by_gpu for them, the line has to say
      which GPU (or "other GPUs") it means. The default alone, unqualified, is a drift whenever the
      H100's or H200's target differs from it (a student on those GPUs plans by the wrong number).
* Not checked, as history: in a section whose heading starts with "Measured", the table rows (each
  such table is a run on a named GPU on a named date, with the target of that day) and the prose
  lines that record a target's change or a calibration ("->", "target from A", "calibrat"). Fenced
  code blocks are not checked anywhere.
* The root README's lab table (header "| lab | technique | points | target | solution ..."): each
  row's points equal lab.json's points; its target cell starts with lab.json's target_speedup and
  gives "H100 N" / "H200 N" equal to each GPU's target; its solution cell gives "H100 N" /
  "H200 N" equal to each GPU's solution_speedup (to 0.005). A lab with no targets_by_gpu (13, graded
  in tiers) has no per-GPU numbers in lab.json, so only its target cell and points are checked.
  The student distribution's README (.labkit-dist.json present) has no lab table: not checked.
"""
import json
import re
import sys
from pathlib import Path

GPUS = {"H100": "NVIDIA H100 80GB HBM3", "H200": "NVIDIA H200"}
NUM = r"(\d+(?:\.\d+)?)"
# A number followed by optional x / markdown emphasis.
AFTER_TARGET = re.compile(r"\btarget(?:\s+speedup)?(?:\s+is|\s+of)?\s*[(`*]*" + NUM + r"x?[`*]*", re.I)
BEFORE_TARGET = re.compile(NUM + r"x?[`*]*\s+target\b", re.I)
# The score's formula quotes the target as the divisor: "ln(speedup) / ln(1.6)", "ln 1.02 / ln 1.05".
LN_TARGET = re.compile(r"\bln\s*\(?\s*(?:speedup|\d+(?:\.\d+)?)\s*\)?\s*/\s*ln\s*\(?\s*" + NUM)
LN_GPU_AFTER = re.compile(r"(?:[^.;]|\.\d){0,60}?\b(H100|H200)\b")
GPU_AFTER = re.compile(r"\s*(?:on\s+(?:an?|the)\s+)?(H100|H200)\b")
GPU_BEFORE = re.compile(r"\b(H100|H200)(?:'s)?:?\s*$")
DEFAULT_AFTER = re.compile(r"\s*(?:on\s+)?(?:other\s+GPUs|\(?default)", re.I)
# "target 1.23x on an H100, 1.25x on an H200": the numbers chained after a GPU-named target.
CHAIN = re.compile(r"\s*(?:,|;|\s+and|\s+or)\s+[`*]*" + NUM + r"x?[`*]*\s+on\s+(?:an?|the)\s+(H100|H200)\b")
HISTORY = re.compile(r"->|\btarget\s+from\s+\d|calibrat", re.I)
TOL = 0.005


def close(a, b):
    return abs(a - b) < TOL


def lab_targets(spec):
    """(default target, {"H100": target}, {"H100": solution}) from one lab.json."""
    by_gpu = spec.get("targets_by_gpu", {})
    targets, solutions = {}, {}
    for short, name in GPUS.items():
        if name in by_gpu:
            targets[short] = by_gpu[name]["target_speedup"]
            if "solution_speedup" in by_gpu[name]:
                solutions[short] = by_gpu[name]["solution_speedup"]
    return spec["target_speedup"], targets, solutions


def target_numbers(text):
    """[(offset, value, text, gpu or 'default' or None)] of the target numbers in a paragraph."""
    found = {}
    for rx in (AFTER_TARGET, BEFORE_TARGET, LN_TARGET):
        for m in rx.finditer(text):
            found[m.start(1)] = m
    named = set(re.findall(r"\b(H100|H200)\b", text))
    out = []
    for start in sorted(found):
        m = found[start]
        tail = text[m.end():m.end() + 80]
        head = text[max(0, m.start(1) - 12):m.start(1)]
        after = (LN_GPU_AFTER if m.re is LN_TARGET else GPU_AFTER).match(tail)
        if DEFAULT_AFTER.match(tail):
            gpu = "default"
        elif after:
            gpu = after.group(1)
        elif g := GPU_BEFORE.search(head):
            gpu = g.group(1)
        elif len(named) == 1:
            gpu = next(iter(named))
        else:
            gpu = None
        out.append((m.start(1), float(m.group(1)), m.group(1), gpu))
        if after and m.re is not LN_TARGET:
            at = m.end() + after.end()
            while c := CHAIN.match(text, at):
                out.append((c.start(1), float(c.group(1)), c.group(1), c.group(2)))
                at = c.end()
    return out


def paragraphs(path):
    """(text, [line number of each character], in a Measured section, is a table row) per paragraph:
    prose lines joined with a space until a blank line, a heading, a table row or a fence."""
    in_measured = in_code = False
    text, where = "", []
    for no, line in enumerate(path.read_text().splitlines() + [""], 1):
        stripped = line.strip()
        is_row = stripped.startswith("|")
        if text and (not stripped or is_row or line.startswith("#") or stripped.startswith("```")):
            yield text, where, in_measured, False
            text, where = "", []
        if stripped.startswith("```"):
            in_code = not in_code
        elif in_code or not stripped:
            continue
        elif line.startswith("## "):
            in_measured = line[3:].strip().lower().startswith("measured")
        elif is_row:
            yield stripped, [no] * len(stripped), in_measured, True
        elif not line.startswith("#"):
            if text:
                text, where = text + " ", where + [no]
            text, where = text + stripped, where + [no] * len(stripped)


def check_handout(path, rel, spec, errors):
    default, targets, _ = lab_targets(spec)
    lines = path.read_text().splitlines()
    for text, where, in_measured, is_row in paragraphs(path):
        if in_measured and is_row:
            continue
        for at, value, quoted, gpu in target_numbers(text):
            no = where[at]
            if in_measured and HISTORY.search(lines[no - 1]):
                continue
            loc = f"{rel}:{no}"
            if gpu == "default":
                if not close(value, default):
                    errors.append(f"{loc}: quotes {quoted}x as the default target; lab.json's target_speedup is {default}")
            elif gpu is not None:
                if gpu not in targets:
                    errors.append(f"{loc}: quotes {quoted}x as the {gpu}'s target; lab.json has no targets_by_gpu "
                                  f"for {GPUS[gpu]} (the default {default} applies)")
                elif not close(value, targets[gpu]):
                    errors.append(f"{loc}: quotes {quoted}x as the {gpu}'s target; lab.json's targets_by_gpu"
                                  f"[\"{GPUS[gpu]}\"].target_speedup is {targets[gpu]}")
            else:
                graded = set(targets.values()) if len(targets) == len(GPUS) else {default, *targets.values()}
                if len(graded) == 1 and close(value, next(iter(graded))):
                    continue
                per_gpu = ", ".join(f"{targets.get(g, default)} on the {g}" for g in GPUS)
                errors.append(f"{loc}: quotes {quoted}x as the target naming no GPU; the grader's target is "
                              f"{per_gpu} (lab.json), {default} elsewhere: quote it per GPU")


def cell_number(cell, gpu):
    m = re.search(r"\b" + gpu + r"\b:?\s*" + NUM + "x", cell)
    return (float(m.group(1)), m.group(1)) if m else None


def check_readme(root, specs, errors):
    if (root / ".labkit-dist.json").exists():
        return
    lines = (root / "README.md").read_text().splitlines()
    header = next((i for i, l in enumerate(lines) if re.match(r"\|\s*lab\s*\|\s*technique\s*\|", l)), None)
    if header is None:
        errors.append("README.md: no lab table (a header '| lab | technique | points | target | solution ...|')")
        return
    cols = [c.strip().lower() for c in lines[header].strip().strip("|").split("|")]
    if cols[:3] != ["lab", "technique", "points"] or not cols[3].startswith("target") or not cols[4].startswith("solution"):
        errors.append(f"README.md:{header + 1}: lab table columns {cols}, expected lab | technique | points | target | solution ...")
        return
    seen = set()
    for i in range(header + 2, len(lines)):
        line = lines[i]
        if not line.startswith("|"):
            break
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        m = re.match(r"\[(\d\d-[\w-]+)\]", cells[0])
        where = f"README.md:{i + 1}"
        if not m or m.group(1) not in specs:
            errors.append(f"{where}: row names no lab of labs/: {cells[0]}")
            continue
        lab = m.group(1)
        seen.add(lab)
        spec = specs[lab]
        default, targets, solutions = lab_targets(spec)
        if not re.fullmatch(NUM, cells[2]) or not close(float(cells[2]), spec["points"]):
            errors.append(f"{where}: {lab} points {cells[2]}; lab.json's points is {spec['points']}")
        first = re.match(NUM + "x", cells[3])
        if not first or not close(float(first.group(1)), default):
            errors.append(f"{where}: {lab} target cell starts {first.group(0) if first else cells[3]!r}; "
                          f"lab.json's target_speedup is {default}")
        for gpu, name in GPUS.items():
            for cell, want, what in ((cells[3], targets, "target_speedup"), (cells[4], solutions, "solution_speedup")):
                got = cell_number(cell, gpu)
                if gpu not in want:
                    if got and what == "target_speedup":
                        errors.append(f"{where}: {lab} gives {gpu} {got[1]}x as its target; lab.json has no "
                                      f"targets_by_gpu for {name}")
                    continue
                if got is None:
                    errors.append(f"{where}: {lab} {'target' if what == 'target_speedup' else 'solution'} cell "
                                  f"gives no '{gpu} N.NNx'; lab.json's targets_by_gpu[\"{name}\"].{what} is {want[gpu]}")
                elif not close(got[0], want[gpu]):
                    errors.append(f"{where}: {lab} quotes {gpu} {got[1]}x; lab.json's targets_by_gpu"
                                  f"[\"{name}\"].{what} is {want[gpu]}")
    for lab in sorted(set(specs) - seen):
        errors.append(f"README.md:{header + 1}: lab table has no row for {lab}")


def main():
    root = Path(sys.argv[1]) if len(sys.argv) > 1 else Path(__file__).resolve().parents[2]
    labs = sorted(p for p in (root / "labs").glob("[0-9][0-9]-*") if (p / "lab.json").is_file())
    if not labs:
        print(f"no labs/NN-*/lab.json under {root}: nothing to check")
        return 77
    errors, specs = [], {}
    for lab in labs:
        spec = json.loads((lab / "lab.json").read_text())
        specs[lab.name] = spec
        handout = lab / "README.md"
        if handout.is_file():
            check_handout(handout, handout.relative_to(root), spec, errors)
    check_readme(root, specs, errors)
    for e in errors:
        print(e)
    if errors:
        print(f"{len(errors)} number(s) differ from lab.json")
        return 1
    print(f"{len(labs)} handouts and the README's lab table quote lab.json's targets and solution speedups")
    return 0


if __name__ == "__main__":
    sys.exit(main())
