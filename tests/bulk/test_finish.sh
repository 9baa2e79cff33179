#!/usr/bin/env bash
# `labkit bulk finish`, the last step of every Slurm task, on the folder a task leaves
# (tests/bulk/task: task.env, labs/<lab>.state/.out/.err, a failed lab's build log): a result
# for every lab, whatever happened to it. 01 graded (a real evidence run), 02 crashed (SIGSEGV,
# named by the runner's crash handler), 03 did not compile, 04 not handed in, 05 printed
# truncated JSON, 06 was killed at its time limit (exit 124), 07's harness was older than the
# student's kernel.cu (kit-error, with the task's reason). Checks results.json (Gradescope),
# grade.json and task.json (node, job ids, nvidia-smi's GPU and clocks). Runs anywhere.
#   usage: test_finish.sh PATH_TO_LABKIT PYTHON3 SOURCE_ROOT
set -u
labkit=$1
python=$2
root=$3
here=$(cd "$(dirname "$0")" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
failures=0
fail() { echo "FAIL $*"; failures=$((failures + 1)); }

cp -r "$here/task" "$tmp/zoe"
sed -i "s|@KIT@|$root|" "$tmp/zoe/task.env"
"$labkit" bulk finish "$tmp/zoe" >"$tmp/out" 2>&1
status=$?
[[ $status -eq 0 ]] && echo "ok   finish: $(cat "$tmp/out")" || { fail "finish: exit $status"; cat "$tmp/out"; }

"$python" - "$tmp/zoe" <<'PY' && echo "ok   results.json, grade.json, task.json: one verdict per lab, with the reason" || fail "outputs (above)"
import json, sys
d = sys.argv[1]
gs = json.load(open(f"{d}/results.json"))
assert set(gs) >= {"score", "max_score", "tests", "output"} and len(gs["tests"]) == 7, gs.keys()
assert gs["max_score"] == 3 + 1 + 2 + 2 + 3 + 2 + 2, gs["max_score"]
assert gs["output"].startswith("Evidence check only"), gs["output"]
g = json.load(open(f"{d}/grade.json"))
v = {r["lab"]["id"]: r for r in g["results"]}
assert g["student"] == "zoe" and g["mode"] == "evidence"
assert v["01-restrict-unroll"]["verdict"] == "passed"
assert v["02-constant-memory"]["verdict"] == "crashed" and "SIGSEGV" in v["02-constant-memory"]["message"], v["02-constant-memory"]
assert "segmentation fault in host code" in v["02-constant-memory"]["hint"]
m = v["03-tiling"]["message"]
assert v["03-tiling"]["verdict"] == "build-failed" and 'labs/03-tiling/kernel.cu(42): error: identifier "TILE" is undefined' in m, m
assert "FAILED:" not in m and "nvcc" not in m and "../kit" not in m and "ninja" not in m, m
assert v["04-float4"]["verdict"] == "not-submitted" and v["04-float4"]["score"]["max"] == 2
assert v["05-unroll-matmul"]["verdict"] == "crashed" and "without a result" in v["05-unroll-matmul"]["message"]
assert v["06-fusion"]["verdict"] == "timeout", v["06-fusion"]
m = v["07-atomics"]["message"]
assert v["07-atomics"]["verdict"] == "kit-error" and "not the submission's fault" in m and "is older than the student's" in m, m
assert all(r["score"]["total"] == 0 for r in g["results"])
assert v["03-tiling"]["lab"]["title"] != "03-tiling"   # titles from the kit's lab.json
t = json.load(open(f"{d}/task.json"))
assert t["node"] == "gpu03" and t["index"] == 7 and t["array_job_id"] == "100" and t["exit_status"] == 99, t  # 07: kit-error
assert t["gpu"]["name"] == "NVIDIA H100 80GB HBM3" and t["gpu"]["sm_clock_mhz"] == 345 and t["gpu"]["max_sm_clock_mhz"] == 1980, t["gpu"]
assert t["gpu_after"]["temperature_c"] == 44 and t["build"]["seconds"] == 61, t
assert t["build"]["kit"] == "prebuilt (OUT/kit-build, job 99)", t["build"]
assert t["labs"]["03-tiling"] == "build-failed"
PY

# The student's grade pages (grader/judge/pages.h), one per lab, each linking back to the class page.
pages=$(ls "$tmp/zoe/pages" 2>/dev/null | tr '\n' ' ')
[[ $pages == "01-restrict-unroll.html 02-constant-memory.html 03-tiling.html 04-float4.html 05-unroll-matmul.html 06-fusion.html 07-atomics.html " ]] \
  && grep -q 'href="../../class.html"' "$tmp/zoe/pages/03-tiling.html" && grep -q "TILE" "$tmp/zoe/pages/03-tiling.html" \
  && echo "ok   a grade page per lab: $pages" || fail "grade pages: got '$pages'"

mkdir "$tmp/empty"
"$labkit" bulk finish "$tmp/empty" >"$tmp/out" 2>&1
status=$?
[[ $status -eq 2 ]] && grep -q "task.env: missing" "$tmp/out" && echo "ok   no task.env: exit 2, $(cat "$tmp/out")" \
  || fail "finish without task.env: exit $status: $(cat "$tmp/out")"
exit $((failures > 0))
