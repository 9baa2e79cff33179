#!/usr/bin/env bash
# Bulk grading through a real Slurm: starts a one-node cluster on this machine (munged, slurmctld,
# slurmd as root, start-cluster.sh), makes fake submissions, runs `labkit bulk submit` (a job
# array, one task per student, the default --gres=gpu:1 on the node's 4 fake GPUs, after the kit
# build job that builds the kit once for the class: --dependency=afterany), waits for the array,
# runs `labkit bulk collect` and checks the class CSV. The tasks run in evidence mode
# (--task evidence: each student's kernels are built in a clean kit copy and their PTX checked;
# no GPU needed), since this machine has none.
#   ada    01 solution (evidence found), 02 untouched skeleton (evidence missing), 04 a kernel that
#          does not compile (build-failed; ada's other labs still graded)
#   empty  no labs/ folder: skipped by submit, listed in skipped.txt
#   kim    the solution of every lab, with the headers beside it (13 PTX compiles: a task long
#          enough to be cancelled while it runs, even on the prebuilt kit); its task is cancelled
#          (scancel) while it runs: collect lists kim as
#          not graded (class.csv rows not-graded, missing.txt), `labkit bulk submit --resubmit`
#          grades kim alone, and the second collect merges everyone. Before the resubmit the kit
#          build's stamp is made stale (another kit digest): kim's second task refuses the
#          prebuilt kit and builds the kit itself, and says so (task.json build.kit)
#   s000-solution  the first student of the synthetic class (tools/slurm/synthetic-class.py, as
#          test_slurm_gpu.sh grades all of it on a GPU): the 03 solution, handed in one folder
#          deeper (s000-solution/labkit-main/labs: an unzipped archive; evidence found)
# The kit build job builds the judge once (1 CPU, no GPU); then two tasks at a time, side by side on
# a 2-CPU machine, each bound to its CPU (task/affinity), each copying the prebuilt kit and compiling
# only the judge's paths and the student's labs (task.json build.kit "prebuilt"); kim's second task
# one full build (the kit build and that one are most of this test's minutes; the forged students
# need a GPU to mean anything, and test_slurm_gpu.sh has them).
# Exit 77 with the reason when Slurm cannot start here (not root, a binary missing, munged or
# slurmd failing); the reason is printed on the last line.
#   usage: test_slurm.sh PATH_TO_LABKIT PYTHON3 [KEEP_DIR]
set -u
labkit=$1
python=$2
here=$(cd "$(dirname "$0")" && pwd)
src=$(cd "$here/../.." && pwd)
source "$here/start-cluster.sh"
cluster_test_begin labkit-slurm-test "${3:-}"
t0=$(date +%s)

if ! start_cluster "$tmp/cluster"; then
  echo "SKIP: Slurm cannot start on this machine: $cluster_error"
  exit 77
fi
echo "ok   single-node Slurm up in $(($(date +%s) - t0)) s: $(sinfo -h -N -o '%N %T %c CPUs %G'); $cluster_binding"

# Fake submissions.
subs=$tmp/subs
mkdir -p "$subs"/ada/labs/{01-restrict-unroll,02-constant-memory,04-float4} "$subs/empty/notes"
cp "$src/solutions/01-restrict-unroll/kernel.cu" "$subs/ada/labs/01-restrict-unroll/"
for sol in "$src"/solutions/*/kernel.cu; do
  # With the headers beside it (11 and 12 keep their kernels in .cuh files): bulk takes them too.
  lab=$(basename "$(dirname "$sol")")
  mkdir -p "$subs/kim/labs/$lab" && cp "$(dirname "$sol")"/*.cu* "$subs/kim/labs/$lab/"
done
# A lab.json beside a kernel is never taken: the kit's stays (its targets, requires_gpu).
echo '{"id": "01-restrict-unroll", "forged": true}' >"$subs/kim/labs/01-restrict-unroll/lab.json"
cp "$src/labs/02-constant-memory/kernel.cu" "$subs/ada/labs/02-constant-memory/"
printf '#include "labkit/map.h"\nvoid labkit::map_forward_gpu(float* d, int x, int y, int n) { this does not compile; }\n' \
  >"$subs/ada/labs/04-float4/kernel.cu"
# The synthetic class's first student, beside the hand-made ones.
"$python" "$src/tools/slurm/synthetic-class.py" "$tmp/class" --size 1 --kit "$src" || { fail "synthetic-class"; exit 1; }
cp -r "$tmp/class/submissions/." "$subs/"
mkdir "$subs/s000-solution/labkit-main" && mv "$subs/s000-solution/labs" "$subs/s000-solution/labkit-main/"

out=$tmp/out
# --gpu-arch 9.0+PTX: one architecture for the kit build job and kim's own build, not the 4 targets
# of gpu_arch "auto" without a GPU (CI's own build compiles for those). It saves little here (the
# judge's few CUDA sources; its C++ is most of each build) but tests the option's way to the
# tasks. The evidence reads the same PTX as with the fallback list: compute_90 (its first virtual
# architecture), and lab 12's compute_90a, since sm_90 is in the list (grader/harness/meson.build).
# --resubmit keeps it: it submits grade.sbatch again, whose environment holds it (LABKIT_BULK_GPU_ARCH).
"$labkit" bulk submit "$subs" --out "$out" --task evidence --cpus-per-task 1 --time 00:30:00 \
  --partition test --lab-timeout 120 --gpu-arch 9.0+PTX --kit "$src" >"$tmp/submit.out" 2>&1
status=$?
cat "$tmp/submit.out"
[[ $status -eq 0 ]] || { fail "bulk submit: exit $status"; exit 1; }
job=$(cat "$out/job.txt")
echo "---- grade.sbatch ----"; cat "$out/grade.sbatch"; echo "----"
grep -q "^#SBATCH --array=0-2" "$out/grade.sbatch" && grep -q "^#SBATCH --gres=gpu:1" "$out/grade.sbatch" \
  && echo "ok   grade.sbatch: --array=0-2, --gres=gpu:1" || fail "grade.sbatch"
kit_job=$(cat "$out/kit-job.txt" 2>/dev/null)
dep=$(squeue -h -j "$job" -o %E 2>/dev/null | head -1)
[[ -n $kit_job && $dep == *"afterany:$kit_job"* ]] && echo "ok   the array waits for the kit build job $kit_job ($dep)" \
  || fail "the array's dependency: '$dep', kit build job '$kit_job'"
kim=$(awk -F'\t' '$2 == "kim" {print $1}' "$out/students.txt")

# Resubmitting while the class's job runs is refused: its students have no result yet.
"$labkit" bulk submit --resubmit "$out" >"$tmp/early.out" 2>&1
status=$?
[[ $status -eq 1 ]] && grep -q "still queued or running" "$tmp/early.out" && echo "ok   --resubmit refused while job $job runs" \
  || fail "--resubmit while running: exit $status: $(cat "$tmp/early.out")"

# kim's task is cancelled once it runs (mid-build or mid-grade: it never reaches bulk finish). It
# runs only after the kit build job, minutes on a small machine that other tests share: the wait
# has the array's limit. A kim never cancelled would be graded on the prebuilt kit and every later
# check would fail for that one reason, so the test stops here.
limit=${LABKIT_SLURM_TEST_WAIT:-1500}
killed=
while (($(date +%s) - t0 < limit)); do
  if [[ $(squeue -h -j "${job}_$kim" -o %T 2>/dev/null) == RUNNING && -s $out/kim/grade.log ]]; then
    sleep 2  # a task on the prebuilt kit takes seconds
    scancel "${job}_$kim" && killed=yes
    echo "ok   cancelled kim's task ${job}_$kim while it ran ($(($(date +%s) - t0)) s): $(tail -n 1 "$out/kim/grade.log")"
    break
  fi
  sleep 1
done
if [[ -z $killed ]]; then
  fail "kim's task ${job}_$kim did not run within $limit s (LABKIT_SLURM_TEST_WAIT); the kit build job: $(grep -E "^(status|seconds)=" "$out/kit-build/stamp" 2>/dev/null | tr '\n' ' ')"
  squeue; tail -n 5 "$out/kit-build.log" 2>/dev/null; scancel "$job" "$kit_job" 2>/dev/null
  exit 1
fi
grep -q "^empty	no labs/ folder" "$out/skipped.txt" && echo "ok   skipped.txt lists empty/" || fail "skipped.txt: $(cat "$out/skipped.txt")"

# Wait for the array.
last=
while [[ -n $(squeue -h -j "$job" 2>/dev/null) ]]; do
  if (($(date +%s) - t0 > limit)); then fail "job $job still running after $limit s"; squeue; scancel "$job"; break; fi
  now=$(squeue -h -j "$job" -o '%i %T %N' 2>/dev/null | sort | tr '\n' ';')
  [[ $now != "$last" ]] && echo "  squeue at $(($(date +%s) - t0)) s: $now" && last=$now
  sleep 5
done
echo "---- Slurm's record of the array (jobcomp/filetxt) ----"
grep "JobId=${job}_\|JobId=$job " "$tmp/cluster/log/jobcomp.txt" | sed -E 's/ (UserId|GroupId|WorkDir|ReservationName|Account|QOS|WcKey|Cluster|SubmitTime|EligibleTime|Tres)=[^ ]*//g'
n_done=$(grep -c "JobState=COMPLETED" "$tmp/cluster/log/jobcomp.txt")
[[ $n_done -ge 2 ]] && echo "ok   $n_done array tasks COMPLETED" || fail "$n_done array tasks completed, want 2"
grep -q "JobState=CANCELLED" "$tmp/cluster/log/jobcomp.txt" && echo "ok   kim's task CANCELLED in Slurm's record" \
  || fail "no CANCELLED task in jobcomp.txt"
for s in ada s000-solution; do
  echo "---- $s: tail of grade.log ----"; tail -n 4 "$out/$s/grade.log" 2>/dev/null
done

"$labkit" bulk collect "$out" >"$tmp/collect.out" 2>&1
status=$?
[[ $status -eq 1 ]] && grep -q "^  kim: grade.json is missing" "$tmp/collect.out" \
  && grep -q "^kim,01-restrict-unroll,not-graded," "$out/class.csv" && grep -q "^kim	" "$out/missing.txt" \
  && echo "ok   collect after the cancel: exit 1; kim not graded (class.csv, missing.txt), nothing of its task merged" \
  || { cat "$tmp/collect.out"; fail "collect after the cancel: exit $status"; }
ls "$out"/kim/*.tmp-* >/dev/null 2>&1 && fail "temporary files left in $out/kim: $(ls "$out/kim")"

grep -q "^status=ok$" "$out/kit-build/stamp" && echo "ok   kit build job: $(grep -E "^(status|seconds|node)=" "$out/kit-build/stamp" | tr '\n' ' ')" \
  || { fail "kit build stamp: $(cat "$out/kit-build/stamp" 2>/dev/null)"; tail -n 20 "$out/kit-build.log"; }
grep -q "^options=.* -Dgpu_arch=9.0+PTX$" "$out/kit-build/stamp" && echo "ok   the kit build job used --gpu-arch: $(grep "^options=" "$out/kit-build/stamp")" \
  || fail "--gpu-arch not in the kit build's options: $(grep "^options=" "$out/kit-build/stamp")"

# Resubmit: kim's task alone, then everyone merges. The stamp made stale first: kim's task must
# refuse the prebuilt kit and build it itself.
sed -i 's/^kit_digest=.*/kit_digest=0000stale/' "$out/kit-build/stamp"
"$labkit" bulk submit --resubmit "$out" >"$tmp/resubmit.out" 2>&1
status=$?
cat "$tmp/resubmit.out"
job2=$(tail -n 1 "$out/job.txt")
[[ $status -eq 0 && $job2 != "$job" ]] && grep -q "^#SBATCH --array=$kim " "$out/resubmit-1.sbatch" \
  && echo "ok   --resubmit: job $job2, --array=$kim (kim only)" || fail "--resubmit: exit $status"
grep -q "^export LABKIT_BULK_GPU_ARCH=.*9\.0+PTX" "$out/resubmit-1.sbatch" && echo "ok   --resubmit keeps --gpu-arch 9.0+PTX" \
  || fail "--resubmit lost --gpu-arch: $(grep LABKIT_BULK_GPU_ARCH "$out/resubmit-1.sbatch")"
t2=$(date +%s)  # one task's build: its own wait
while [[ -n $(squeue -h -j "$job2" 2>/dev/null) ]]; do
  if (($(date +%s) - t2 > limit)); then fail "job $job2 still running after $limit s"; scancel "$job2"; break; fi
  sleep 5
done
"$labkit" bulk collect "$out" >"$tmp/collect.out" 2>&1
status=$?
cat "$tmp/collect.out"
[[ $status -eq 0 ]] && echo "ok   collect after the resubmit: every student merged" || fail "collect: exit $status"
"$labkit" bulk submit --resubmit "$out" 2>&1 | grep -q "nothing to resubmit" && echo "ok   --resubmit: nothing left to grade" \
  || fail "--resubmit after all graded"
echo "---- class.csv ----"; cat "$out/class.csv"; echo "----"

"$python" - "$out" "$src" "$cluster_binding" <<'PY' && echo "ok   class.csv, results.json and task.json of each student" || fail "results (above)"
import csv, glob, json, sys
out, src = sys.argv[1], sys.argv[2]
# Every lab of the kit, and the points of all of them: each student gets a row per lab.
specs = [json.load(open(f)) for f in glob.glob(f"{src}/labs/*/lab.json")]
n_labs, max_points = len(specs), sum(sp["points"] for sp in specs)
rows = {(r["student"], r["lab"]): r for r in csv.DictReader(open(f"{out}/class.csv"))}
def v(s, l): return rows[(s, l)]["verdict"]
assert v("ada", "01-restrict-unroll") == "passed", rows[("ada", "01-restrict-unroll")]
assert v("ada", "02-constant-memory") == "missing-evidence"
assert v("ada", "03-tiling") == "not-submitted"
assert v("ada", "04-float4") == "build-failed"
assert rows[("ada", "01-restrict-unroll")]["correct"] == ""   # evidence only: correctness not checked
assert rows[("ada", "04-float4")]["correct"] == "false"
# The synthetic class, in evidence mode: its expected.csv holds the verdicts of a full grade.
assert v("s000-solution", "03-tiling") == "passed", rows[("s000-solution", "03-tiling")]
# kim, graded on a kit built here after the stale stamp: every lab handed in finds its evidence.
kim = {l: r["verdict"] for (s, l), r in rows.items() if s == "kim" and r["verdict"] != "not-submitted"}
assert len(kim) >= 13 and set(kim.values()) == {"passed"}, kim  # 11 and 12 need their .cuh files
students = ("ada", "kim", "s000-solution")
assert len(rows) == n_labs * len(students), (len(rows), n_labs)  # 2 students x every lab
for s in students:
    gs = json.load(open(f"{out}/{s}/results.json"))
    assert len(gs["tests"]) == n_labs and gs["max_score"] == max_points, (s, len(gs["tests"]), gs["max_score"], max_points)
    t = json.load(open(f"{out}/{s}/task.json"))
    assert t["node"] and t["array_task_id"] != "" and t["build"]["setup"] == "ok", t
    # The path each task took: the class's prebuilt kit, or (kim, after the stale stamp) its own.
    kit = t["build"]["kit"]
    if s == "kim":
        assert kit.startswith("built here (stale stamp:") and "changed since the kit build job" in kit, kit
    else:
        assert kit.startswith("prebuilt (OUT/kit-build, job "), kit
    assert t["cuda_visible_devices"] != "" and t["slurm_gpus"] != "", t  # Slurm gave the task a (fake) GPU
    # Bound to its one CPU (task/affinity; start-cluster.sh falls back to no binding where it cannot).
    assert t["cpus_allowed"] and ("," not in t["cpus_allowed"] and "-" not in t["cpus_allowed"]
                                  or "task/none" in sys.argv[3]), t["cpus_allowed"]
ada = json.load(open(f"{out}/ada/grade.json"))
failed = [r for r in ada["results"] if r["lab"]["id"] == "04-float4"][0]
assert "did not compile" in failed["message"] and "error" in failed["message"], failed["message"]
print("build seconds:", {s: (json.load(open(f"{out}/{s}/task.json"))["build"]["seconds"],
                              json.load(open(f"{out}/{s}/task.json"))["build"]["kit"]) for s in students})
PY
echo "slurm test: $(($(date +%s) - t0)) s in all"
exit $((failures > 0))
