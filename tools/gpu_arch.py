#!/usr/bin/env python3
"""The CUDA architectures a build targets when meson's gpu_arch option is "auto" (the default).

Usage: gpu_arch.py [--nvcc NVCC] [--smi-output FILE] [--no-smi]
Prints one line: ARCHS|WHERE
  ARCHS  a list for meson's cuda module (nvcc_arch_flags), e.g. "8.6+PTX" or "8.0 9.0+PTX"
  WHERE  where it came from, for the configure summary: "detected: NVIDIA A100-SXM4-80GB (8.0)"
         or "fallback (no GPU found: ...)"

Detection asks nvidia-smi (it ships with the driver) for every GPU's compute capability; the
build then has machine code for each GPU here and PTX of the newest, which a newer driver can
compile for a GPU this nvcc does not know. A GPU newer than nvcc knows gets the newest code nvcc
has, as PTX the driver compiles at start-up; one older than nvcc supports is left out (an error
when it is the only one). Without a GPU (CI, a login node) the build gets FALLBACK: Ampere
(A100, 8.0; RTX 30xx and A10, 8.6) and Hopper (H100 and H200, 9.0) machine code, and Hopper PTX
for anything newer: as much of the list as this nvcc supports. Ada (RTX 40xx and L4, 8.9) runs
the 8.6 code (machine code runs on its major version at its minor or above); sm_89 code of its
own would cost every build without a GPU, CI included, a fourth compile of each kernel.
A GPU outside it (a T4, 7.5) needs its architecture named: meson setup -Dgpu_arch=7.5.
--smi-output FILE reads nvidia-smi's answer from FILE (the tests), --no-smi skips detection.
"""
import argparse
import subprocess
import sys

FALLBACK = ["8.0", "8.6", "9.0"]
SMI_QUERY = ["nvidia-smi", "--query-gpu=name,compute_cap", "--format=csv,noheader"]


def fail(msg):
    sys.stderr.write(f"labkit: gpu_arch auto: {msg}\n")
    sys.exit(1)


def version_key(cc):
    major, minor = cc.split(".")
    return (int(major), int(minor))


def parse_smi(text):
    """[(name, "8.6")] from nvidia-smi's CSV lines "NVIDIA GeForce RTX 3090, 8.6"."""
    gpus = []
    for line in text.splitlines():
        line = line.strip()
        if not line:
            continue
        name, _, cc = line.rpartition(",")
        cc = cc.strip()
        try:
            version_key(cc)
        except ValueError:
            # "[N/A]" or a field this driver does not know: no usable answer from this GPU.
            continue
        gpus.append((name.strip(), cc))
    return gpus


def ask_smi():
    """(gpus, why none) from nvidia-smi on this machine."""
    try:
        p = subprocess.run(SMI_QUERY, capture_output=True, text=True, timeout=30)
    except FileNotFoundError:
        return [], "nvidia-smi not found"
    except (OSError, subprocess.TimeoutExpired) as e:
        return [], f"nvidia-smi failed: {e}"
    if p.returncode != 0:
        first = (p.stdout + p.stderr).strip().splitlines()
        return [], f"nvidia-smi: {first[0] if first else 'exit ' + str(p.returncode)}"
    gpus = parse_smi(p.stdout)
    return gpus, "" if gpus else "nvidia-smi lists no GPU with a compute capability"


def nvcc_codes(nvcc):
    """The real architectures this nvcc compiles for, as "8.6" strings; None when it cannot say."""
    if not nvcc:
        return None
    try:
        p = subprocess.run([nvcc, "--list-gpu-code"], capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.TimeoutExpired):
        return None
    if p.returncode != 0:
        return None
    codes = set()
    for word in p.stdout.split():
        digits = word[3:] if word.startswith("sm_") else ""
        if digits.isdigit() and len(digits) >= 2:
            codes.add(f"{digits[:-1]}.{digits[-1]}")
    return codes or None


def resolve(gpus, why_none, codes):
    """(archs, where) for meson: the GPUs found (as far as nvcc supports them) or FALLBACK."""
    if not gpus:
        wanted = [cc for cc in FALLBACK if codes is None or cc in codes]
        if not wanted:
            fail(f"no GPU found ({why_none}) and this nvcc supports none of the fallback list {' '.join(FALLBACK)}: "
                 "name the architectures with meson setup -Dgpu_arch=...")
        return " ".join(wanted[:-1] + [wanted[-1] + "+PTX"]), f"fallback (no GPU found: {why_none})"
    chosen, notes = [], []
    newest = max(codes, key=version_key) if codes else None
    oldest = min(codes, key=version_key) if codes else None
    for name, cc in gpus:
        use = cc
        if codes is not None and cc not in codes:
            if version_key(cc) > version_key(newest):
                use = newest
                notes.append(f"{name} is {cc}, newer than this nvcc knows: its code is PTX for {newest}, compiled "
                             "by the driver at start-up")
            elif version_key(cc) < version_key(oldest):
                notes.append(f"{name} ({cc}) left out: this nvcc supports {oldest} and newer")
                continue
            else:
                notes.append(f"{name} ({cc}) left out: this nvcc has no code for it")
                continue
        if use not in chosen:
            chosen.append(use)
    if not chosen:
        fail("; ".join(notes) + ": use a CUDA toolkit that supports this GPU, or name the architectures with "
             "meson setup -Dgpu_arch=...")
    chosen.sort(key=version_key)
    counts = {}
    for g in gpus:
        counts[g] = counts.get(g, 0) + 1
    found = ", ".join(f"{n} x {name} ({cc})" if n > 1 else f"{name} ({cc})" for (name, cc), n in counts.items())
    where = "detected: " + found + ("; " + "; ".join(notes) if notes else "")
    return " ".join(chosen[:-1] + [chosen[-1] + "+PTX"]), where


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--nvcc", default="", help="nvcc to ask which architectures it supports")
    ap.add_argument("--smi-output", default="", help="read nvidia-smi's CSV answer from this file")
    ap.add_argument("--no-smi", action="store_true", help="do not look for a GPU: the fallback list")
    a = ap.parse_args()
    if a.no_smi:
        gpus, why = [], "--no-smi"
    elif a.smi_output:
        with open(a.smi_output, encoding="utf-8") as f:
            gpus = parse_smi(f.read())
        why = "" if gpus else f"{a.smi_output} lists no GPU"
    else:
        gpus, why = ask_smi()
    archs, where = resolve(gpus, why, nvcc_codes(a.nvcc))
    # '|' separates the fields for meson; a GPU name never holds one, but keep the line parseable.
    print(f"{archs}|{where.replace('|', '/')}")


if __name__ == "__main__":
    main()
