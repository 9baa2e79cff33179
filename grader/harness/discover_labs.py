#!/usr/bin/env python3
"""Lists the lab folders meson builds a grading executable for (run at configure time).

Usage: discover_labs.py SOURCE_ROOT [--tests] [--archs "sm_80 sm_86 compute_90"]
Prints one line per lab: role|id|kind|folder|lab.json|timed|ptx|arch|sources|needs|unbuilt (paths relative to
SOURCE_ROOT; timed is "op" or "layer"; ptx is "ptx" when lab.json lists PTX evidence patterns,
"host" when the technique is only checked at run time, like the streams lab's; arch is "arch" when
lab.json has "arch_specific": true, else "portable"; sources: the other .cu files beside kernel.cu,
comma-separated file names, sorted, empty for a lab of one file: a course submission may split its
kernels over several files, and all of them are the lab); needs: the compute capability of
lab.json's "requires_gpu" ("8.0"), empty without one; unbuilt: why the lab's harness cannot be
built for --archs (the build's targets, meson's nvcc_arch_readable), empty when it can: nvcc
rejects cp.async or mma.sync for a target older than the lab needs, and meson gives every CUDA
target the same architectures, so such a lab has its PTX (for the evidence) but no harness.
  labs/NN-name/        role "lab"       (kernel.cu + lab.json + README.md)
  solutions/NN-name/   role "solution"  (kernel.cu; graded with labs/NN-name/lab.json)
  tests/labs/name/     role "test"      (the grader's own test labs, with --tests)
A folder without kernel.cu is skipped; a broken lab.json stops the configuration with a message
naming the file, since every later step depends on it.
"""
import json
import os
import re
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
    return kind, timed, ptx, "arch" if arch else "portable", read_requirement(spec, lab_json)


def read_requirement(spec, lab_json):
    """(compute capability, features) of "requires_gpu", or None."""
    req = spec.get("requires_gpu")
    if req is None:
        return None
    what = ('"requires_gpu" must be {"compute_capability": "8.0", "features": "what needs it"}'
            f", found {req!r}")
    if not isinstance(req, dict) or set(req) != {"compute_capability", "features"}:
        fail(f"{lab_json}: {what}")
    cc, features = req["compute_capability"], req["features"]
    if not isinstance(cc, str) or not re.fullmatch(r"[0-9]+\.[0-9]", cc):
        fail(f'{lab_json}: "requires_gpu": "compute_capability" must be a string like "8.0", found {cc!r}')
    if not isinstance(features, str) or not features.strip() or any(c in features for c in '|\n"\\'):
        fail(f'{lab_json}: "requires_gpu": "features" must name what needs that GPU on one line, without | " or \\')
    return cc, features


def target_cc(target):
    """(8, 6) of "sm_86" or "compute_86"; (10, 0) of "sm_100"."""
    digits = target.split("_", 1)[1].rstrip("af")
    return int(digits[:-1]), int(digits[-1])


def unbuilt(requirement, archs):
    """Why a lab that needs `requirement` cannot be built for the targets `archs`, or ""."""
    if requirement is None:
        return ""
    cc, features = requirement
    need = tuple(int(x) for x in cc.split("."))
    older = [a for a in archs if target_cc(a) < need]
    if not older:
        return ""
    return (f"needs compute capability {cc} or newer ({features}); this build also targets "
            f"{' '.join(older)} (gpu_arch)")


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
        fail("usage: discover_labs.py SOURCE_ROOT [--tests] [--archs TARGETS]")
    root = sys.argv[1]
    archs = []
    if "--archs" in sys.argv[2:]:
        i = sys.argv.index("--archs")
        if i + 1 >= len(sys.argv):
            fail("--archs takes the build's targets, e.g. \"sm_80 compute_90\"")
        archs = sys.argv[i + 1].split()
    roots = [("lab", "labs", None), ("solution", "solutions", "labs")]
    if "--tests" in sys.argv[2:]:
        roots.append(("test", os.path.join("tests", "labs"), None))
    for role, rel, spec_root in roots:
        for lab_id in folders(root, rel):
            folder = os.path.join(rel, lab_id)
            lab_json = os.path.join(spec_root or rel, lab_id, "lab.json")
            if role == "solution" and not os.path.isfile(os.path.join(root, lab_json)):
                fail(f"{folder}/kernel.cu has no lab: {lab_json} is missing")
            kind, timed, ptx, arch, requirement = read_spec(root, lab_json)
            sources = other_sources(root, folder)
            needs = requirement[0] if requirement else ""
            print(f"{role}|{lab_id}|{kind}|{folder}|{lab_json}|{timed}|{ptx}|{arch}|{sources}|{needs}|"
                  f"{unbuilt(requirement, archs)}")


main()
