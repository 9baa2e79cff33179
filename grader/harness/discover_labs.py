#!/usr/bin/env python3
"""Lists the lab folders meson builds a grading executable for (run at configure time).

Usage: discover_labs.py SOURCE_ROOT [--tests]
Prints one line per lab: role|id|kind|folder|lab.json|timed|ptx|arch|sources (paths relative to
SOURCE_ROOT; timed is "op" or "layer"; ptx is "ptx" when lab.json lists PTX evidence patterns,
"host" when the technique is only checked at run time, like the streams lab's; arch is "arch" when
lab.json has "arch_specific": true, else "portable"; sources: the other .cu files beside kernel.cu,
comma-separated file names, sorted, empty for a lab of one file: a course submission may split its
kernels over several files, and all of them are the lab).
  labs/NN-name/        role "lab"       (kernel.cu + lab.json + README.md)
  solutions/NN-name/   role "solution"  (kernel.cu; graded with labs/NN-name/lab.json)
  tests/labs/name/     role "test"      (the grader's own test labs, with --tests)
A folder without kernel.cu is skipped; a broken lab.json stops the configuration with a message
naming the file, since every later step depends on it.
"""
import json
import os
import sys


def fail(msg):
    sys.stderr.write(f"labkit: {msg}\n")
    sys.exit(1)


def read_spec(root, lab_json):
    path = os.path.join(root, lab_json)
    try:
        with open(path, encoding="utf-8") as f:
            spec = json.load(f)
    except FileNotFoundError:
        fail(f"{lab_json}: missing (every lab folder needs a lab.json)")
    except json.JSONDecodeError as e:
        fail(f"{lab_json}: not valid JSON: {e}")
    if not isinstance(spec, dict):
        fail(f"{lab_json}: must hold a JSON object")
    kind = spec.get("kind")
    if kind not in ("conv", "map"):
        fail(f'{lab_json}: "kind" must be "conv" or "map", found {kind!r}')
    timed = spec.get("timed", "op")
    if timed not in ("op", "layer"):
        fail(f'{lab_json}: "timed" must be "op" or "layer", found {timed!r}')
    ptx = "ptx" if spec.get("evidence") else "host"
    arch = spec.get("arch_specific", False)
    if not isinstance(arch, bool):
        fail(f'{lab_json}: "arch_specific" must be true or false, found {arch!r}')
    return kind, timed, ptx, "arch" if arch else "portable"


def folders(root, rel):
    base = os.path.join(root, rel)
    if not os.path.isdir(base):
        return []
    return sorted(d for d in os.listdir(base)
                  if os.path.isfile(os.path.join(base, d, "kernel.cu")))


def other_sources(root, folder):
    base = os.path.join(root, folder)
    names = sorted(f for f in os.listdir(base)
                   if f.endswith(".cu") and f != "kernel.cu" and os.path.isfile(os.path.join(base, f)))
    for f in names:
        if "," in f or "|" in f:
            fail(f"{folder}/{f}: a source file name may not hold ',' or '|'")
    return ",".join(names)


def main():
    if len(sys.argv) < 2:
        fail("usage: discover_labs.py SOURCE_ROOT [--tests]")
    root = sys.argv[1]
    roots = [("lab", "labs", None), ("solution", "solutions", "labs")]
    if "--tests" in sys.argv[2:]:
        roots.append(("test", os.path.join("tests", "labs"), None))
    for role, rel, spec_root in roots:
        for lab_id in folders(root, rel):
            folder = os.path.join(rel, lab_id)
            lab_json = os.path.join(spec_root or rel, lab_id, "lab.json")
            if role == "solution" and not os.path.isfile(os.path.join(root, lab_json)):
                fail(f"{folder}/kernel.cu has no lab: {lab_json} is missing")
            kind, timed, ptx, arch = read_spec(root, lab_json)
            sources = other_sources(root, folder)
            print(f"{role}|{lab_id}|{kind}|{folder}|{lab_json}|{timed}|{ptx}|{arch}|{sources}")


main()
