#!/usr/bin/env python3
"""gpu-arch-configure: what `meson setup` builds for when gpu_arch is "auto" (tools/gpu_arch.py),
and which labs get no harness for a gpu_arch older than their lab.json "requires_gpu"
(grader/harness/discover_labs.py). CPU only, standard library; no GPU, no nvidia-smi needed: the
GPUs are nvidia-smi answers written to a file, nvcc a script that lists what CUDA 13.0 supports.

Usage: test_gpu_arch.py SOURCE_ROOT. Exit 0 when every case holds, 1 naming each that does not.
"""
import json
import os
import subprocess
import sys
import tempfile

ROOT = sys.argv[1] if len(sys.argv) > 1 else os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
GPU_ARCH = os.path.join(ROOT, "tools", "gpu_arch.py")
DISCOVER = os.path.join(ROOT, "grader", "harness", "discover_labs.py")
failures = []


def check(ok, what):
    if not ok:
        failures.append(what)


def run(args):
    p = subprocess.run([sys.executable] + args, capture_output=True, text=True)
    return p.returncode, p.stdout.strip(), p.stderr.strip()


def fake_nvcc(tmp, codes):
    path = os.path.join(tmp, f"nvcc-{len(codes)}")
    with open(path, "w") as f:
        f.write("#!/bin/sh\n[ \"$1\" = --list-gpu-code ] || exit 1\n")
        f.write("".join(f"echo sm_{c}\n" for c in codes))
    os.chmod(path, 0o755)
    return path


def auto(tmp, nvcc, smi_text):
    smi = os.path.join(tmp, "smi.csv")
    with open(smi, "w") as f:
        f.write(smi_text)
    return run([GPU_ARCH, "--nvcc", nvcc, "--smi-output", smi])


with tempfile.TemporaryDirectory() as tmp:
    cuda13 = fake_nvcc(tmp, ["75", "80", "86", "87", "88", "89", "90", "100", "110", "103", "120", "121"])
    cuda118 = fake_nvcc(tmp, ["35", "37", "50", "52", "53", "60", "61", "62", "70", "72", "75", "80", "86", "87", "89", "90"])
    # (nvidia-smi's answer, nvcc, expected archs, text the "from" must hold); None: must fail.
    cases = [
        ("NVIDIA H100 80GB HBM3, 9.0\n", cuda13, "9.0+PTX", "detected: NVIDIA H100 80GB HBM3 (9.0)"),
        ("NVIDIA A100-SXM4-80GB, 8.0\nNVIDIA A100-SXM4-80GB, 8.0\n", cuda13, "8.0+PTX", "2 x NVIDIA A100-SXM4-80GB (8.0)"),
        ("NVIDIA GeForce RTX 3090, 8.6\n", cuda13, "8.6+PTX", "RTX 3090 (8.6)"),
        ("Tesla T4, 7.5\nNVIDIA H100 80GB HBM3, 9.0\n", cuda13, "7.5 9.0+PTX", "Tesla T4 (7.5)"),
        # Newer than this nvcc knows: its newest code, as PTX the driver compiles.
        ("NVIDIA GeForce RTX 5090, 12.0\n", cuda118, "9.0+PTX", "newer than this nvcc knows"),
        # Older than nvcc supports, beside one it does: left out, and said.
        ("Tesla P100-PCIE-16GB, 6.0\nNVIDIA L4, 8.9\n", cuda13, "8.9+PTX", "left out: this nvcc supports 7.5 and newer"),
        ("Tesla P100-PCIE-16GB, 6.0\n", cuda13, None, "use a CUDA toolkit that supports this GPU"),
        # No GPU (CI): the fallback, which holds the A100's and the RTX 30xx's machine code.
        ("", cuda13, "8.0 8.6 9.0+PTX", "fallback (no GPU found"),
        ("Quadro K600, [N/A]\n", cuda13, "8.0 8.6 9.0+PTX", "fallback"),
    ]
    for smi, nvcc, want, text in cases:
        rc, out, err = auto(tmp, nvcc, smi)
        name = f"gpu_arch.py with nvidia-smi {smi.strip()!r}"
        if want is None:
            check(rc != 0 and text in err, f"{name}: must fail saying '{text}', got rc {rc}, {out!r} {err!r}")
            continue
        archs, _, where = out.partition("|")
        check(rc == 0 and archs == want, f"{name}: archs {archs!r} (rc {rc}, {err!r}), expected {want!r}")
        check(text in where, f"{name}: 'from' is {where!r}, expected it to hold {text!r}")
    rc, out, _ = run([GPU_ARCH, "--nvcc", cuda13, "--no-smi"])
    check(out.split("|")[0].split()[:2] == ["8.0", "8.6"],
          f"the fallback must build sm_80 and sm_86 (CI compiles every lab for them): {out!r}")


def discover(root, archs):
    rc, out, err = run([DISCOVER, root, "--tests", "--archs", archs])
    return rc, [l.split("|") for l in out.splitlines() if l], err


# The kit's own labs: 11, 12 and 13 (and their solutions, and the MMA test labs) need 8.0.
rc, rows, err = discover(ROOT, "sm_75 compute_75")
check(rc == 0, f"discover_labs.py --archs 'sm_75 compute_75': exit {rc}: {err}")
unbuilt = {(r[0], r[1]) for r in rows if r[10]}
for lab in ["11-register-tiling", "12-tensor-cores", "13-capstone"]:
    if os.path.isdir(os.path.join(ROOT, "labs", lab)):
        check(("lab", lab) in unbuilt, f"lab {lab} must have no harness for sm_75")
    if os.path.isdir(os.path.join(ROOT, "solutions", lab)):
        check(("solution", lab) in unbuilt, f"solution {lab} must have no harness for sm_75")
for r in rows:
    if r[10]:
        check("needs compute capability 8.0 or newer (" in r[10] and "sm_75" in r[10],
              f"{r[0]} {r[1]}: the reason must name the capability, the features and the target: {r[10]!r}")
check(("lab", "03-tiling") not in unbuilt, "lab 03-tiling needs nothing: it must be built for sm_75")
rc, rows, err = discover(ROOT, "sm_80 sm_86 sm_90 compute_90")
check(rc == 0 and not [r for r in rows if r[10]], f"the fallback list builds every lab: {[r[:2] for r in rows if r[10]]}")
check(all(r[9] in ("", "8.0") for r in rows), "requires_gpu of the kit's labs is 8.0 or none")

# A malformed requires_gpu stops the configuration, naming the file.
with tempfile.TemporaryDirectory() as tmp:
    lab = os.path.join(tmp, "labs", "99-broken")
    os.makedirs(lab)
    open(os.path.join(lab, "kernel.cu"), "w").close()
    for bad, text in [({"compute_capability": 8.0, "features": "x"}, '"compute_capability" must be a string like "8.0"'),
                      ({"compute_capability": "8.0"}, '"requires_gpu" must be {'),
                      ({"compute_capability": "8.0", "features": "a|b"}, '"features" must name')]:
        with open(os.path.join(lab, "lab.json"), "w") as f:
            json.dump({"id": "99-broken", "kind": "conv", "requires_gpu": bad}, f)
        rc, _, err = discover(tmp, "sm_90")
        check(rc != 0 and "labs/99-broken/lab.json" in err and text in err,
              f"requires_gpu {bad}: must fail naming the file and '{text}', got rc {rc}: {err!r}")

for f in failures:
    print(f"FAIL: {f}")
print(f"gpu-arch-configure: {len(failures)} failure(s)")
sys.exit(1 if failures else 0)
