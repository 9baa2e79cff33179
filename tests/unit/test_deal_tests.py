#!/usr/bin/env python3
"""tools/deal-tests.py (tools/gpu-test.sh --gpus N): every test dealt once, longest first to the
least loaded GPU, the same way every time; a test without a recorded time counts as the median;
the committed durations file parses. Usage: test_deal_tests.py DEAL_TESTS DURATIONS_FILE"""
import os
import subprocess
import sys
import tempfile


def deal(script, n, durations, names):
    p = subprocess.run([sys.executable, script, str(n), durations], input="\n".join(names) + "\n",
                       capture_output=True, text=True)
    return p.returncode, p.stdout, p.stderr


def main():
    script, committed = sys.argv[1], sys.argv[2]
    failures = []
    with tempfile.TemporaryDirectory() as tmp:
        durations = os.path.join(tmp, "d.txt")
        with open(durations, "w") as f:
            f.write("# comment line\nlong 100\nmid-a 40\nmid-b 40\nshort-a 10\nshort-b 10\nshort-c 10\n")
        names = ["short-c", "long", "mid-a", "unknown", "short-a", "mid-b", "short-b"]
        code, out, err = deal(script, 2, durations, names)
        if code != 0:
            failures.append(f"exit {code}: {err}")
        shard = {}
        for line in out.splitlines():
            k, name = line.split(" ", 1)
            if name in shard:
                failures.append(f"{name} dealt twice")
            shard[name] = int(k)
        if sorted(shard) != sorted(names):
            failures.append(f"dealt {sorted(shard)}, expected {sorted(names)}")
        # long (100) to GPU 0; 40 + 40 to GPU 1; 'unknown' counts as the median (25) ...
        times = {"long": 100, "mid-a": 40, "mid-b": 40, "unknown": 25, "short-a": 10, "short-b": 10, "short-c": 10}
        load = [0, 0]
        for name, k in shard.items():
            load[k] += times[name]
        if abs(load[0] - load[1]) > 100:
            failures.append(f"unbalanced: {load}")
        if shard.get("long") != 0 or shard.get("mid-a") != 1 or shard.get("mid-b") != 1:
            failures.append(f"not longest first to the least loaded GPU: {shard}")
        if "GPU 0" not in err or "GPU 1" not in err:
            failures.append(f"no estimate per GPU on stderr: {err!r}")
        if deal(script, 2, durations, list(reversed(names)))[1] != out:
            failures.append("the same tests in another order were dealt differently")
        code, _, err = deal(script, 0, durations, names)
        if code != 2:
            failures.append(f"N = 0: exit {code}, expected 2 with the usage")
    with open(committed, encoding="utf-8") as f:
        for i, line in enumerate(f, 1):
            if line.startswith("#") or not line.strip():
                continue
            parts = line.split()
            try:
                ok = len(parts) == 2 and float(parts[1]) >= 0
            except ValueError:
                ok = False
            if not ok:
                failures.append(f"{committed}:{i}: expected 'name seconds', got {line.strip()!r}")
    for f in failures:
        print("FAIL:", f)
    print("deal-tests:", "ok" if not failures else f"{len(failures)} failure(s)")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
