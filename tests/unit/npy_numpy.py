"""numpy's half of the .npy interop test; test_npy_numpy.cpp drives it.

Usage: npy_numpy.py COMMAND DIR
  numpy-writes  write every case listed in DIR/cases.txt with numpy, at the listed format version
  numpy-reads   load every case listed in DIR/ours.txt (written by labkit) and check it
  rejects       write files labkit must refuse (Fortran order, big-endian, other dtypes, .npz)
  half-tables   write float16 conversion tables: every half as float32, float32 values as halves

A case line is "FILE DESCR VERSION SHAPE", SHAPE being "scalar" or extents joined by "x".
The values are a formula of the flat index that test_npy_numpy.cpp computes the same way.
"""
import math
import sys

import numpy as np


def values(descr, n):
    i = list(range(n))
    if descr in ("<f8", "<f4", "<f2"):
        v = np.array([math.ldexp((k - 30) * 0.1, k % 7 * 3 - 9) for k in i], dtype=np.float64)
        # float16 via float32, as labkit converts: both roundings are to nearest even.
        return v.astype(np.float32).astype(np.float16) if descr == "<f2" else v.astype(descr)
    if descr == "<i4":
        return np.array([(k * 2654435761) % 2**32 - 2**31 for k in i], dtype="<i4")
    if descr == "<i8":
        return np.array([(k * 6364136223846793005) % 2**63 - 2**62 for k in i], dtype="<i8")
    if descr == "|u1":
        return np.array([(k * 13 + 7) % 256 for k in i], dtype="|u1")
    raise ValueError("unknown descr " + descr)


def cases(path):
    with open(path) as f:
        for line in f:
            name, descr, version, shape = line.split()
            dims = () if shape == "scalar" else tuple(int(d) for d in shape.split("x"))
            yield name, descr, int(version), dims


def expected_array(descr, dims):
    return values(descr, math.prod(dims)).reshape(dims)


def numpy_writes(d):
    for name, descr, version, dims in cases(f"{d}/cases.txt"):
        with open(f"{d}/{name}", "wb") as f:
            np.lib.format.write_array(f, expected_array(descr, dims), version=(version, 0))
    return 0


def read_header(f, version):
    read = np.lib.format.read_array_header_1_0 if version == (1, 0) else np.lib.format.read_array_header_2_0
    try:  # numpy >= 1.24.2 refuses headers over 10000 bytes unless told
        return read(f, max_header_size=10**7)
    except TypeError:
        return read(f)


def numpy_reads(d):
    failures = 0
    count = 0
    for name, descr, version, dims in cases(f"{d}/ours.txt"):
        count += 1
        path = f"{d}/{name}"
        problems = []
        with open(path, "rb") as f:
            got_version = np.lib.format.read_magic(f)
            shape, fortran, dtype = read_header(f, got_version)
            if got_version != (version, 0):
                problems.append(f"format version {got_version}, expected ({version}, 0)")
            if f.tell() % 64:
                problems.append(f"data starts at byte {f.tell()}, not a multiple of 64")
            if fortran or dtype.str != descr or shape != dims:
                problems.append(f"header says {dtype.str} {shape} fortran={fortran}, expected {descr} {dims}")
            data_offset = f.tell()
        if len(dims) <= 32 and not problems:  # numpy arrays have at most 32 (1.x) or 64 (2.x) dims
            a = np.load(path)
            want = expected_array(descr, dims)
            if a.dtype.str != descr or a.shape != dims:
                problems.append(f"np.load gives {a.dtype.str} {a.shape}, expected {descr} {dims}")
            elif a.tobytes() != want.tobytes():
                bad = next(k for k in range(a.size) if a.reshape(-1)[k].tobytes() != want.reshape(-1)[k].tobytes())
                problems.append(f"element {bad} is {a.reshape(-1)[bad]!r}, expected {want.reshape(-1)[bad]!r}")
        elif not problems:
            with open(path, "rb") as f:
                f.seek(data_offset)
                if f.read() != values(descr, math.prod(dims)).tobytes():
                    problems.append("data differs")
        for p in problems:
            print(f"FAIL numpy reading {path}: {p}")
        failures += bool(problems)
    print(f"numpy read {count} files written by labkit, {failures} failed")
    return 1 if failures or count == 0 else 0


def rejects(d):
    a = np.arange(6, dtype="<f4").reshape(2, 3)
    np.save(f"{d}/fortran.npy", np.asfortranarray(a))
    np.save(f"{d}/bigendian_f4.npy", a.astype(">f4"))
    np.save(f"{d}/bigendian_i8.npy", a.astype(">i8"))
    np.save(f"{d}/bigendian_f2.npy", a.astype(">f2"))
    np.save(f"{d}/object.npy", np.array([1, "a", None], dtype=object), allow_pickle=True)
    np.save(f"{d}/bool.npy", a > 2)
    np.save(f"{d}/complex.npy", a.astype(np.complex64))
    np.save(f"{d}/int16.npy", a.astype("<i2"))
    np.save(f"{d}/uint16.npy", a.astype("<u2"))
    np.save(f"{d}/structured.npy", np.zeros(3, dtype=[("x", "<f4"), ("y", "<i4")]))
    np.savez(f"{d}/archive.npz", a=a)
    return 0


def half_tables(d):
    every_half = np.arange(65536, dtype=np.uint16).view(np.float16)
    np.save(f"{d}/every_half.npy", every_half)
    np.save(f"{d}/every_half_as_f4.npy", every_half.astype(np.float32))
    # Floats that probe float32 -> float16 rounding: every half, every midpoint between
    # neighbouring halves (the ties) and one float32 ulp either side, plus random bit patterns.
    halves = every_half.astype(np.float32)
    halves = halves[np.isfinite(halves)]
    halves.sort()
    mid = ((halves[:-1].astype(np.float64) + halves[1:]) / 2).astype(np.float32)
    near = np.concatenate([np.nextafter(mid, np.float32(np.inf)), np.nextafter(mid, np.float32(-np.inf))])
    rng = np.random.default_rng(20240601)
    noise = rng.integers(0, 2**32, 200000, dtype=np.uint64).astype(np.uint32).view(np.float32)
    big = np.array([65504, 65519.99, 65520, 65536, 1e38, np.inf, -np.inf, np.nan, 2**-25, 2**-26, 1e-45], np.float32)
    probe = np.concatenate([halves, mid, near, noise, big, -big]).astype(np.float32)
    with np.errstate(over="ignore"):
        as_half = probe.astype(np.float16)
    np.save(f"{d}/probe_f4.npy", probe)
    np.save(f"{d}/probe_as_f2.npy", as_half)
    return 0


def main():
    commands = {"numpy-writes": numpy_writes, "numpy-reads": numpy_reads, "rejects": rejects,
                "half-tables": half_tables}
    if len(sys.argv) != 3 or sys.argv[1] not in commands:
        print(__doc__, file=sys.stderr)
        return 2
    return commands[sys.argv[1]](sys.argv[2])


if __name__ == "__main__":
    sys.exit(main())
