#!/usr/bin/env python3
"""The tables of tools/slurm/measure-class.sh, from what its runs left in RESULTS:
RESULTS/class/expected.csv (synthetic-class.py) and RESULTS/run-N/ (one `labkit bulk` output
folder per GPU count: measure.env, class.csv, <student>/task.json).

  1. scaling: GPUs, wall time, submissions per hour, speedup over the run of 1 GPU and its
     efficiency (speedup / N), verdicts as expected, the mean build and grading time of a task and
     how many tasks used the class's prebuilt kit (with the kit build job's time);
  2. verdicts not as expected (expected "zero": 0 points and not passed, what the kit's skeletons
     suite asks of an untouched skeleton);
  3. fairness: per lab, the median speedup of the instructor's solution on each GPU (students who
     hand in the same solution land on different GPUs), the largest spread in % (goal: within 3%),
     and each GPU's model, clocks and flags (other-gpu, other-clock, low-clock of class.csv);
  4. a hang or crash never stalls the other GPUs: the slowest task and the class's wall time;
  5. the time of 200 students x the class's labs on 8 GPUs, scaled from the measured tasks (a run
     cut by its budget too: from the students it graded in full).
Exit 0 when every verdict of every run is as expected, 1 otherwise, 2 when there is nothing to read.
  usage: measure-report.py RESULTS
"""
import csv
import json
import pathlib
import statistics
import sys
from datetime import datetime


def read_env(path):
    env = {}
    if path.is_file():
        for line in path.read_text().splitlines():
            if "=" in line:
                k, v = line.split("=", 1)
                env[k] = v
    return env


def seconds(a, b):
    try:
        return (datetime.fromisoformat(b) - datetime.fromisoformat(a)).total_seconds()
    except (TypeError, ValueError):
        return None


def matches(expected, row):
    if row is None:
        return False
    if expected == "zero":
        return row["verdict"] not in ("passed", "not-graded") and row["score"] not in ("",) and float(row["score"]) == 0
    return row["verdict"] == expected


def main():
    if len(sys.argv) != 2:
        print(__doc__.splitlines()[-1].strip())
        return 2
    res = pathlib.Path(sys.argv[1])
    exp_path = res / "class" / "expected.csv"
    if not exp_path.is_file():
        print(f"measure-report: {exp_path} missing")
        return 2
    expected = list(csv.DictReader(open(exp_path)))
    n_students = len({e["student"] for e in expected})
    labs = sorted({e["lab"] for e in expected})
    runs = []
    for d in sorted(res.glob("run-*"), key=lambda p: int(p.name[4:]) if p.name[4:].isdigit() else 0):
        env = read_env(d / "measure.env")
        if not env or not (d / "class.csv").is_file():
            continue
        rows = {(r["student"], r["lab"]): r for r in csv.DictReader(open(d / "class.csv"))}
        tasks = {}
        for t in d.glob("*/task.json"):
            try:
                tasks[t.parent.name] = json.loads(t.read_text())
            except ValueError:
                pass
        stamp = read_env(d / "kit-build" / "stamp") or {}  # the kit build job's (labkit bulk submit)
        runs.append({"dir": d, "gpus": int(env["gpus"]), "wall": float(env["wall_seconds"]), "finished": env.get("finished"),
                     "binding": env.get("binding", ""), "rows": rows, "tasks": tasks,
                     "kit_seconds": stamp.get("seconds")})
    if not runs:
        print(f"measure-report: no finished run in {res} (run-N/measure.env and class.csv)")
        return 2

    base = next((r for r in runs if r["gpus"] == 1 and r["finished"] == "yes"), None)
    bad_total = 0
    print(f"\nClass: {n_students} students x {len(labs)} lab(s) = {len(expected)} submissions ({', '.join(labs)})")
    print("\n| GPUs | wall (s) | submissions per hour | speedup over 1 GPU | efficiency | verdicts as expected | "
          "build s / task | prebuilt kit | grading s / task | finished |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for r in runs:
        ok = sum(matches(e["verdict"], r["rows"].get((e["student"], e["lab"]))) for e in expected)
        r["bad"] = [(e, r["rows"].get((e["student"], e["lab"]))) for e in expected
                    if not matches(e["verdict"], r["rows"].get((e["student"], e["lab"])))]
        bad_total += len(r["bad"])
        builds = [t["build"]["seconds"] for t in r["tasks"].values() if t.get("build", {}).get("seconds") is not None]
        grading = [t["grading_seconds"] for t in r["tasks"].values() if t.get("grading_seconds") is not None]
        speedup = base["wall"] / r["wall"] if base and r["finished"] == "yes" else None
        r["speedup"] = speedup
        sp = f"{speedup:.2f}x" if speedup else "-"
        eff = f"{speedup / r['gpus']:.2f}" if speedup else "-"
        b = f"{statistics.mean(builds):.0f}" if builds else "-"
        # Tasks on the class's prebuilt kit (task.json build.kit), and the kit build job's own time.
        kits = [t.get("build", {}).get("kit") or "" for t in r["tasks"].values()]
        pre = f"{sum(k.startswith('prebuilt') for k in kits)} / {len(kits)}"
        if r.get("kit_seconds") is not None:
            pre += f" (kit job {r['kit_seconds']} s)"
        g = f"{statistics.mean(grading):.0f}" if grading else "-"
        print(f"| {r['gpus']} | {r['wall']:.0f} | {3600 * len(expected) / r['wall']:.0f} | {sp} | {eff} | "
              f"{ok} / {len(expected)} | {b} | {pre} | {g} | {r['finished']} |")
    for r in runs:
        why = sorted({t["build"]["kit"] for t in r["tasks"].values()
                      if (t.get("build", {}).get("kit") or "prebuilt").startswith("built here")})
        for w in why[:5]:
            print(f"  run of {r['gpus']} GPU(s): a task's kit was {w}")
    for r in runs:
        print(f"\nRun of {r['gpus']} GPU(s): {r['binding']}")
        for e, row in r["bad"][:40]:
            got = f"{row['verdict']} ({row['score']} points)" if row else "no row"
            print(f"  NOT AS EXPECTED: {e['student']} {e['lab']} ({e['source']}): expected {e['verdict']}, got {got}")
        if len(r["bad"]) > 40:
            print(f"  ... and {len(r['bad']) - 40} more")

    # Fairness: the solution's speedup on each GPU.
    for r in runs:
        if r["gpus"] < 2:
            continue
        gpu_of = {}
        for s, t in r["tasks"].items():
            g = t.get("gpu") or {}
            gpu_of[s] = (t.get("slurm_gpus") or t.get("cuda_visible_devices") or "?", g.get("uuid", ""), g.get("name", ""))
        gpus = sorted({v for v in gpu_of.values()})
        print(f"\nFairness, run of {r['gpus']} GPUs: median speedup of the instructor's solution per GPU "
              f"(n = students who handed it in there)")
        print("| lab | " + " | ".join(f"GPU {g[0]}" for g in gpus) + " | spread | |")
        print("|---|" + "---|" * len(gpus) + "---|---|")
        worst = 0.0
        for lab in labs:
            per = {}
            for e in expected:
                if e["lab"] != lab or e["source"] != "solution":
                    continue
                row = r["rows"].get((e["student"], lab))
                if row and row["verdict"] == "passed" and row["speedup"]:
                    per.setdefault(gpu_of.get(e["student"]), []).append(float(row["speedup"]))
            meds = {g: statistics.median(v) for g, v in per.items()}
            cells = [f"{meds[g]:.3f}x (n={len(per[g])})" if g in meds else "-" for g in gpus]
            spread = 100 * (max(meds.values()) - min(meds.values())) / min(meds.values()) if len(meds) > 1 else None
            if spread is not None:
                worst = max(worst, spread)
            flag = "over 3%" if spread is not None and spread > 3 else ""
            print(f"| {lab} | " + " | ".join(cells) + f" | {f'{spread:.2f}%' if spread is not None else '-'} | {flag} |")
        print(f"Largest spread: {worst:.2f}% (goal: within 3%)")
        print("GPUs as the tasks saw them (nvidia-smi before and after grading; flags of class.csv):")
        for g in gpus:
            ts = [t for s, t in r["tasks"].items() if gpu_of[s] == g]
            before = [t["gpu"] for t in ts if t.get("gpu")]
            after = [t["gpu_after"] for t in ts if t.get("gpu_after")]
            flags = sorted({f for (s, _), row in r["rows"].items() if gpu_of.get(s) == g
                            for f in row["flags"].split(";") if f in ("other-gpu", "other-clock", "low-clock")})
            def clocks(v, k):
                xs = [x.get(k) for x in v if x.get(k) is not None]
                return f"{min(xs)}-{max(xs)}" if xs else "?"
            print(f"  GPU {g[0]} {g[2]} {g[1]} (bus {before[0].get('pci_bus_id', '?') if before else '?'}): "
                  f"{len(ts)} task(s); max SM {clocks(before, 'max_sm_clock_mhz')} MHz; SM clock before "
                  f"{clocks(before, 'sm_clock_mhz')}, after {clocks(after, 'sm_clock_mhz')} MHz; "
                  f"temperature after {clocks(after, 'temperature_c')} C; flags: {', '.join(flags) or 'none'}")
        constrained = sorted({t.get("devices_constrained", "?") for t in r["tasks"].values()})
        cpus = sorted({t.get("cpus_allowed", "?") for t in r["tasks"].values()})
        print(f"Tasks saw only their GPU at the driver level (device cgroup): {', '.join(constrained)}; "
              f"CPU sets of the tasks: {'; '.join(cpus)}")

    # A hang or crash never stalls the others.
    for r in runs:
        spans = []
        for s, t in r["tasks"].items():
            d = seconds(t.get("start"), t.get("end"))
            if d is not None:
                hang = any(e["student"] == s and e["verdict"] == "timeout" for e in expected)
                spans.append((d, s, hang))
        if spans:
            spans.sort(reverse=True)
            d, s, hang = spans[0]
            honest = [x for x in spans if not x[2]]
            print(f"\nRun of {r['gpus']} GPU(s): slowest task {s} {d:.0f} s{' (holds the hang)' if hang else ''}; "
                  f"slowest task without a hang {honest[0][0]:.0f} s; class wall {r['wall']:.0f} s; "
                  f"sum of all tasks {sum(x[0] for x in spans):.0f} s")

    # 200 students on 8 GPUs (each handing in this class's labs), from the largest finished run, two
    # ways: at the run's own efficiency (its wall time: a small class leaves GPUs idle behind the kit
    # job and the hang), and from the tasks' own time (a class of 200 keeps every GPU busy; the kit
    # job and one hang come once). A run cut by its budget still gives the third: the students its
    # tasks graded in full, each a whole task (build and every lab), the kit job once.
    nl = len(labs)
    best = max((r for r in runs if r["finished"] == "yes"), key=lambda r: r["gpus"], default=None)
    if best and best["tasks"]:
        per_sub = best["wall"] * best["gpus"] / len(expected)  # GPU-seconds per submission, as measured
        t = 200 * nl * per_sub / 8  # 8 GPUs as efficient as these
        print(f"\nProjection: {per_sub:.1f} GPU-seconds per submission in the run of {best['gpus']} GPU(s) "
              f"(build shared by the student's labs included); "
              f"200 students x {nl} labs on 8 GPUs at this efficiency: about {t / 60:.0f} min (goal: under 60)")
        spans = [seconds(t.get("start"), t.get("end")) for t in best["tasks"].values()]
        spans = [d for d in spans if d is not None]
        if spans:
            busy = sum(spans) / len(expected)
            once = float(best.get("kit_seconds") or 0) + max(spans)
            t2 = 200 * nl * busy / 8 + once
            print(f"Projection from the tasks' own time: {busy:.1f} s per submission, the kit job and the "
                  f"slowest task once ({once:.0f} s): 200 students x {nl} labs on 8 GPUs about {t2 / 60:.0f} min")
    for r in runs:
        whole = {}
        for student, t in r["tasks"].items():
            d = seconds(t.get("start"), t.get("end"))
            if d is not None and t.get("labs") and all(v not in ("", "not-graded") for v in t["labs"].values()):
                whole[student] = d
        if not whole:
            continue
        kit = float(r.get("kit_seconds") or 0)
        worst = max(whole.values())
        mean = sum(whole.values()) / len(whole)
        print(f"Run of {r['gpus']} GPU(s){'' if r['finished'] == 'yes' else ' (cut by its budget)'}: "
              f"{len(whole)} of {n_students} students graded in full, {mean:.0f} s a student on average, "
              f"{worst:.0f} s the longest; 200 students x {nl} labs on 8 GPUs: about "
              f"{(200 * mean / 8 + kit) / 60:.0f} min at the average, {(200 * worst / 8 + kit) / 60:.0f} min "
              f"if every student took the longest (the kit job, {kit:.0f} s, once)")
    print(f"\nVerdicts not as expected, all runs: {bad_total}")
    return 0 if bad_total == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
