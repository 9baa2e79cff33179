#!/usr/bin/env bash
# `labkit bulk collect` on the fixtures in tests/bulk/fixtures (a class of 8 as the Slurm tasks
# leave it): alice good; bob noisy (3% noise, a shape not converged); carol on another GPU model;
# heidi a build failure, a lab not handed in and a throttled clock; dave without grade.json (the
# task was killed), erin with a truncated grade.json, grace with a results.json that is not
# Gradescope's, frank listed but never ran. Checks the class CSV row by row, the missing list,
# the summary (text and SVG), the leaderboard, and the exit codes 1 (something missing), 0 (all
# merged) and 2 (not a bulk folder). Runs anywhere (no GPU, no Slurm).
#   usage: test_collect.sh PATH_TO_LABKIT PYTHON3
set -u
labkit=$1
python=$2
here=$(cd "$(dirname "$0")" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
failures=0
fail() { echo "FAIL $*"; failures=$((failures + 1)); }

cp -r "$here/fixtures" "$tmp/out"
"$labkit" bulk collect "$tmp/out" >"$tmp/stdout" 2>"$tmp/stderr"
status=$?
[[ $status -eq 1 ]] && echo "ok   collect with missing and corrupt results: exit 1" \
  || { fail "collect: exit $status, want 1"; cat "$tmp/stdout" "$tmp/stderr"; }
for f in class.csv summary.txt summary.svg leaderboard.txt missing.txt; do
  [[ -s $tmp/out/$f ]] || fail "$f not written"
done

"$python" - "$tmp/out" <<'PY' && echo "ok   class.csv, missing.txt, summary and leaderboard hold what the fixtures say" || fail "outputs (above)"
import csv, sys, xml.etree.ElementTree as ET
out = sys.argv[1]
rows = list(csv.DictReader(open(f"{out}/class.csv")))
assert list(rows[0].keys()) == ["student", "lab", "verdict", "correct", "speedup", "score", "max_score", "gpu", "flags",
                                "node", "gpu_index", "gpu_uuid", "max_sm_clock_mhz", "min_sm_clock_mhz"], rows[0].keys()
got = {(r["student"], r["lab"]): r for r in rows}
graded = [r for r in rows if r["verdict"] != "not-graded"]
assert sorted({r["student"] for r in graded}) == ["alice", "bob", "carol", "heidi"], {r["student"] for r in graded}
assert len(graded) == 12, len(graded)
# The students without a complete result: one not-graded row per lab of the class, nothing else.
pending = [r for r in rows if r["verdict"] == "not-graded"]
assert sorted({r["student"] for r in pending}) == ["dave", "erin", "frank", "grace"], pending
assert len(pending) == 12 and all(r["score"] == "" and r["flags"] == "not-graded" for r in pending), pending
assert got[("alice", "03-tiling")]["node"] == "gpu01", got[("alice", "03-tiling")]
def row(s, l): return got[(s, l)]
assert row("alice", "03-tiling")["flags"] == "" and row("alice", "03-tiling")["correct"] == "true"
assert row("alice", "03-tiling")["speedup"] == "1.9600" and row("alice", "03-tiling")["score"] == "2"
assert row("bob", "03-tiling")["flags"] == "noisy", row("bob", "03-tiling")
assert row("bob", "06-fusion")["flags"] == "noisy", row("bob", "06-fusion")
assert row("bob", "04-float4")["correct"] == "false" and row("bob", "04-float4")["verdict"] == "incorrect"
for lab in ("03-tiling", "04-float4", "06-fusion"):
    assert row("carol", lab)["flags"] == "other-gpu", row("carol", lab)
    assert row("carol", lab)["gpu"] == "NVIDIA A100-SXM4-80GB"
assert row("heidi", "03-tiling")["verdict"] == "build-failed" and row("heidi", "03-tiling")["correct"] == "false"
assert row("heidi", "04-float4")["verdict"] == "not-submitted" and row("heidi", "04-float4")["score"] == "0"
assert row("heidi", "06-fusion")["flags"] == "low-clock", row("heidi", "06-fusion")
assert row("heidi", "03-tiling")["gpu"] == "NVIDIA H100 80GB HBM3"  # from task.json

missing = {l.split("\t")[0]: l.rstrip("\n").split("\t")[1] for l in open(f"{out}/missing.txt").readlines()[1:]}
assert sorted(missing) == ["dave", "erin", "frank", "grace"], missing
assert "grade.json is missing" in missing["dave"] and "grade.log" in missing["dave"], missing["dave"]
assert "grade.json is not valid JSON" in missing["erin"], missing["erin"]
assert "no output folder" in missing["frank"], missing["frank"]
assert "results.json is not Gradescope output" in missing["grace"], missing["grace"]

summary = open(f"{out}/summary.txt").read()
assert "4 student(s) merged, 4 missing or corrupt" in summary, summary
assert "Majority GPU: NVIDIA H100 80GB HBM3; results on another GPU: 3; noisy timings (noise > 1% or not converged): 2" in summary, summary
assert "03-tiling: 4 result(s), mean 1.45 / 2; passed 3, build-failed 1" in summary and "frank: no output folder" in summary, summary
svg = ET.parse(f"{out}/summary.svg").getroot()
assert svg.tag.endswith("svg") and len(svg) > 10
board = open(f"{out}/leaderboard.txt").read()
tiling = board.split("\n03-tiling\n")[1].split("\n\n")[0].splitlines()
assert "carol" in tiling[0] and "(other-gpu)" in tiling[0], tiling
assert "alice" in tiling[1] and "bob" in tiling[2], tiling
assert "04-float4" not in board, "the leaderboard ranks conv labs only"
PY

# All merged: only the good students.
mkdir "$tmp/good"
cp -r "$here/fixtures/alice" "$here/fixtures/carol" "$tmp/good/"
printf '0\talice\t/x/labs\t03-tiling\n1\tcarol\t/x/labs\t03-tiling\n' >"$tmp/good/students.txt"
"$labkit" bulk collect "$tmp/good" >"$tmp/stdout" 2>&1
status=$?
[[ $status -eq 0 ]] && grep -q "2 student(s) merged, 0 missing" "$tmp/stdout" && echo "ok   every result merged: exit 0" \
  || { fail "collect of good results: exit $status"; cat "$tmp/stdout"; }

# Not a bulk output folder.
"$labkit" bulk collect "$tmp/good/alice" >"$tmp/stdout" 2>"$tmp/stderr"
status=$?
[[ $status -eq 2 ]] && grep -q "^labkit bulk: .*students.txt: missing" "$tmp/stderr" && echo "ok   not a bulk folder: exit 2, $(cat "$tmp/stderr")" \
  || fail "collect of a non-bulk folder: exit $status: $(cat "$tmp/stderr")"

exit $((failures > 0))
