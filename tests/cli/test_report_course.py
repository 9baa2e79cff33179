"""`labkit report --from FIXTURE --course` on a real H100 `report --compare` run: the course's table.

Checks, against the saved runs read here independently: every implementation has a row; conv1 +
conv2 is the sum of that run's two Op Times; the ratio is that sum over 06-fusion (solution)'s sum,
said as "x slower"/"x faster" the right way round; the reference row says "reference"; a failed run
(the fixture's 02-constant-memory at batch 100) is shown as failed, never as a number; md, csv, tex
and json agree; the json reads back through --from; the page has the table; and the errors name
the file and what is missing (an absent reference, an absent batch).
  usage: test_report_course.py LABKIT FIXTURE
"""
import csv
import io
import json
import os
import subprocess
import sys
import tempfile

labkit, fixture = (os.path.abspath(a) for a in sys.argv[1:3])
failures = 0
REF = "06-fusion (solution)"


def check(ok, what):
    global failures
    print(("ok   " if ok else "FAIL ") + what)
    failures += 0 if ok else 1


def report(*args, status=0, cwd=None):
    p = subprocess.run([labkit, "report", "--from", fixture, "--course", *args], capture_output=True, text=True,
                       timeout=60, cwd=cwd)
    check(p.returncode == status, f"report --course {' '.join(args)}: exit {p.returncode} (want {status}) {p.stderr.strip()}")
    return p.stdout, p.stderr


# The saved runs: (name, batch) -> run, in the file's order.
runs, names = {}, []
with open(fixture) as f:
    text, at, decoder = f.read(), 0, json.JSONDecoder()
    while text[at:].strip():
        doc, at = decoder.raw_decode(text, at + len(text[at:]) - len(text[at:].lstrip()))
        for r in doc["runs"]:
            runs[(r["name"], r["batch"])] = r
            if r["name"] not in names:
                names.append(r["name"])


def conv_sum(r):
    return r["conv"][0]["op_ms"] + r["conv"][1]["op_ms"]


def words(ratio):
    if f"{ratio:.2f}" == "1.00" or f"{1 / ratio:.2f}" == "1.00":
        return "same (1.00x)"
    return f"{ratio:.2f}x slower" if ratio > 1 else f"{1 / ratio:.2f}x faster"


# csv at batch 10000 (the default): every number against the saved runs.
out, _ = report("--format", "csv")
rows = list(csv.DictReader(io.StringIO(out)))
check([r["implementation"] for r in rows] == names, f"csv: one row per implementation, in order ({len(rows)})")
ref_sum = conv_sum(runs[(REF, 10000)])
for row in rows:
    run = runs[(row["implementation"], 10000)]
    want_sum = conv_sum(run)
    ratio = want_sum / ref_sum
    ok = (abs(float(row["op_time_1_ms"]) - run["conv"][0]["op_ms"]) < 1e-6
          and abs(float(row["op_time_2_ms"]) - run["conv"][1]["op_ms"]) < 1e-6
          and abs(float(row["conv1_plus_conv2_ms"]) - want_sum) < 2e-6
          and abs(float(row["time_ratio_to_reference"]) - ratio) < 1e-4
          and row["vs_reference"] == ("reference" if row["implementation"] == REF else words(ratio))
          and abs(float(row["accuracy"]) - run["accuracy"]) < 1e-4 and row["error"] == "")
    check(ok, f"csv row {row['implementation']}: {row['conv1_plus_conv2_ms']} ms, {row['vs_reference']}")
by_name = {r["implementation"]: r for r in rows}
check(by_name["baseline"]["vs_reference"] == "4.78x slower", "baseline: 24.118 / 5.050 ms = 4.78x slower")
check(by_name["09-fp16 (solution)"]["vs_reference"] == "1.46x faster", "09-fp16: 5.050 / 3.471 ms = 1.46x faster")

# md: the header, the reference row, a sum of two rounded-for-print times.
md, _ = report()
check("| Implementation | Op Time 1 (conv1) | Op Time 2 (conv2) | conv1 + conv2 | vs 06-fusion (solution) | Accuracy |"
      in md, "md header")
check("| 06-fusion (solution) | 2.072 ms | 2.979 ms | 5.050 ms | reference | 0.9254 |" in md, "md reference row")
check("| baseline | 5.012 ms | 19.107 ms | 24.118 ms | 4.78x slower | 0.9254 |" in md, "md baseline row")
check("**Course comparison, batch 10000** on NVIDIA H100" in md and "Batch Size" not in md and "Speedup" not in md,
      "md: the course's table alone, captioned with batch and GPU")
check("Note: 10-streams (solution) is graded on Layer Time" in md, "md: the Layer Time note for 10-streams")

# The failed run: at batch 100, 02-constant-memory failed; its row says so, with no number.
md100, _ = report("--batches", "100")
line = next((l for l in md100.splitlines() if l.startswith("| 02-constant-memory (solution) |")), "")
check(line.startswith("| 02-constant-memory (solution) | failed: The lab reported") and " ms |" not in line
      and "slower" not in line and "faster" not in line, f"md: failed row shown as failed: {line[:90]}...")
csv100 = {r["implementation"]: r for r in csv.DictReader(io.StringIO(report("--batches", "100", "--format", "csv")[0]))}
failed = csv100["02-constant-memory (solution)"]
check(failed["conv1_plus_conv2_ms"] == "" and failed["time_ratio_to_reference"] == "" and failed["error"].startswith(
    "The lab reported"), "csv: failed row has no numbers and its error")
ratio100 = conv_sum(runs[("03-tiling (solution)", 100)]) / conv_sum(runs[(REF, 100)])
check(csv100["03-tiling (solution)"]["vs_reference"] == words(ratio100), f"batch 100 ratio of 03-tiling: {words(ratio100)}")

# Two batches: one table each.
both, _ = report("--batches", "1000,10000")
check(both.count("| Implementation |") == 2 and "batch 1000**" in both and "batch 10000**" in both, "--batches 1000,10000: two tables")

# tex and json; json reads back through --from.
tex, _ = report("--format", "tex")
check("\\begin{tabular}{lrrrrr}" in tex and "06-fusion (solution) & 2.072 ms & 2.979 ms & 5.050 ms & reference" in tex, "tex")
js, _ = report("--format", "json")
doc = json.loads(js)
check(doc["batch"] == 10000 and doc["course_reference"] == REF and len(doc["runs"]) == len(names)
      and all(abs(r["conv1_plus_conv2_ms"] - conv_sum(r)) < 1e-9 for r in doc["runs"]), "json: sums of each run")
with tempfile.TemporaryDirectory() as tmp:
    saved = os.path.join(tmp, "course.json")
    with open(saved, "w") as f:
        f.write(js)
    p = subprocess.run([labkit, "report", "--from", saved, "--course", "--format", "csv"], capture_output=True, text=True)
    check(p.returncode == 0 and p.stdout == out, "json reads back through --from: the same csv")

    # The page: the course's table with its rows, the text escaped by the page layer.
    page = os.path.join(tmp, "course.html")
    report("--compare", "--html", page, "--svg", os.path.join(tmp, "c.svg"))
    html = open(page).read() if os.path.exists(page) else ""
    check('id="course-10000"' in html and "4.78x slower" in html and 'id="compare-10000"' in html,
          "--html: the course's table on the page (and the comparison with --compare)")
    report("--compare", cwd=tmp)  # no --svg: no chart written into the working directory
    check(not os.path.exists(os.path.join(tmp, "report-compare.svg")), "--course --compare without --svg writes no chart")

# Errors: each names the file and what is missing, exit 2.
_, err = report("--course-reference", "11-register-tiling", status=2)
check("no run of 11-register-tiling (solution), the course's reference" in err and fixture in err
      and "06-fusion (solution)" in err, f"absent reference: {err.strip()[:120]}...")
_, err = report("--batches", "500", status=2)
check("no runs at batch 500 (it holds batch 100, 1000, 10000)" in err, f"absent batch: {err.strip()}")

print(f"{failures} failed")
sys.exit(1 if failures else 0)
