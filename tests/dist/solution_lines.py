#!/usr/bin/env python3
"""Greps a student distribution for solution code.

  solution_lines.py KIT_ROOT EXPORT_DIR
A solution-only line is a line of solutions/<lab>/kernel.cu (or a header beside it),
whitespace-trimmed, of at least 24 characters, not a comment or #include, that appears in no
skeleton (labs/*/kernel.cu: students get them all) and nowhere in api/, reference/ or grader/ (the
lab API, the public baseline, reference and kit code). Every text file of the export is searched for every such line;
each hit is printed as file:line and fails the check. The labs are staged, so a later lab's
skeleton carries earlier labs' techniques (08's skeleton gives lab 01's unrolled loop): those lines
are counted and printed as a note.
Exit 0: no hit (prints how many lines were looked for); 1: hits or nothing to look for.
"""
import os
import sys

MIN_LEN = 24


def norm_lines(path):
    try:
        with open(path, encoding="utf-8") as f:
            return [" ".join(line.split()) for line in f]
    except (UnicodeDecodeError, OSError):
        return []


def solution_only(root):
    public = set()
    # The kit's own code ships with every export: a line it holds (a CUDA call any kernel makes)
    # gives nothing away.
    for top in ("api", "reference", "grader"):
        for d, _, files in os.walk(os.path.join(root, top)):
            for name in files:
                public.update(norm_lines(os.path.join(d, name)))
    labs_root = os.path.join(root, "labs")
    skeletons = {lab: set(norm_lines(os.path.join(labs_root, lab, "kernel.cu"))) for lab in os.listdir(labs_root)}
    out = {}
    staged = {}
    sol_root = os.path.join(root, "solutions")
    for lab in sorted(os.listdir(sol_root)):
        folder = os.path.join(sol_root, lab)
        if not os.path.isdir(folder):
            continue
        # kernel.cu and what it keeps beside it (11's and 12's kernels are in headers)
        files = sorted(f for f in os.listdir(folder) if f.endswith((".cu", ".cuh", ".h")))
        for line in [l for f in files for l in norm_lines(os.path.join(folder, f))]:
            if len(line) < MIN_LEN or line.startswith(("//", "/*", "*", "#include")) or line in public:
                continue
            if line in skeletons.get(lab, set()):
                continue
            carriers = [other for other, lines in skeletons.items() if line in lines]
            for other in carriers:
                staged[(lab, other)] = staged.get((lab, other), 0) + 1
            if not carriers:
                out.setdefault(line, f"solutions/{lab}/kernel.cu")
    for (lab, other), n in sorted(staged.items()):
        print(f"note: {n} line(s) of solutions/{lab}/kernel.cu are in the skeleton labs/{other}/kernel.cu (staged labs)")
    return out


def main():
    if len(sys.argv) != 3:
        sys.exit("usage: solution_lines.py KIT_ROOT EXPORT_DIR")
    root, export = sys.argv[1], sys.argv[2]
    lines = solution_only(root)
    if not lines:
        print("no solution-only lines found in solutions/: nothing to look for (is KIT_ROOT the kit?)")
        sys.exit(1)
    hits = 0
    files = 0
    for d, dirs, names in os.walk(export):
        dirs[:] = [x for x in dirs if x not in (".git", "build")]
        for name in names:
            path = os.path.join(d, name)
            files += 1
            for n, line in enumerate(norm_lines(path), 1):
                if line in lines:
                    hits += 1
                    print(f"{os.path.relpath(path, export)}:{n}: a line of {lines[line]}: {line}")
    print(f"looked for {len(lines)} solution-only lines in {files} exported files: {hits} found")
    sys.exit(1 if hits else 0)


main()
