#!/usr/bin/env bash
# A class graded on a GPU through a real Slurm: a one-node cluster on this machine whose node
# offers its GPUs as a gres (start-cluster.sh with LABKIT_SLURM_GPUS=real), a synthetic class
# (tools/slurm/synthetic-class.py: an honest kernel, a forged report, an output cache, a crash,
# a hang, ... with the verdict each must get), `labkit bulk submit --task grade` (a job array,
# one task per student, one GPU each, every lab in the sandbox), then `labkit bulk collect`; every
# verdict in class.csv must be the expected one. Prints the class table last.
# Exit 77 with the reason when there is no GPU or Slurm cannot start here.
#   usage: test_slurm_gpu.sh PATH_TO_LABKIT PYTHON3 [CLASS_SIZE] [KEEP_DIR]
set -u
labkit=$1
python=$2
size=${3:-5}
here=$(cd "$(dirname "$0")" && pwd)
src=$(cd "$here/../.." && pwd)
[[ -e /dev/nvidia0 ]] || { echo "SKIP: no GPU (/dev/nvidia0)"; exit 77; }
source "$here/start-cluster.sh"
cluster_test_begin labkit-slurm-gpu "${4:-}"
t0=$(date +%s)
if ! LABKIT_SLURM_GPUS=real start_cluster "$tmp/cluster"; then
  echo "SKIP: Slurm cannot start on this machine: $cluster_error"
  exit 77
fi
echo "ok   single-node Slurm up in $(($(date +%s) - t0)) s: $(sinfo -h -N -o '%N %T %c CPUs %G'); $cluster_binding"
"$python" "$src/tools/slurm/synthetic-class.py" "$tmp/class" --size "$size" --kit "$src" || { fail "synthetic-class"; exit 1; }

out=$tmp/out
ts=$(date +%s)
# One task per GPU at a time, each with its share of the CPUs (all of them would let one task run).
cpus=$(($(nproc) / $(ls /dev/nvidia[0-9]* | wc -l)))
"$labkit" bulk submit "$tmp/class/submissions" --out "$out" --task grade --cpus-per-task "$((cpus > 0 ? cpus : 1))" --time 01:00:00 \
  --partition test --lab-timeout 60 --kit "$src" >"$tmp/submit.out" 2>&1
status=$?
cat "$tmp/submit.out"
[[ $status -eq 0 ]] || { fail "bulk submit: exit $status"; exit 1; }
job=$(cat "$out/job.txt")
limit=${LABKIT_SLURM_TEST_WAIT:-3000}
last=
while [[ -n $(squeue -h -j "$job" 2>/dev/null) ]]; do
  if (($(date +%s) - t0 > limit)); then fail "job $job still running after $limit s"; scancel "$job"; break; fi
  now=$(squeue -h -j "$job" -o '%i %T' 2>/dev/null | sort | tr '\n' ';')
  [[ $now != "$last" ]] && echo "  squeue at $(($(date +%s) - t0)) s: $now" && last=$now
  sleep 3
done
wall=$(($(date +%s) - ts))
echo "---- Slurm's record of the array (jobcomp/filetxt) ----"
grep "JobId=${job}_\|JobId=$job " "$tmp/cluster/log/jobcomp.txt" | grep -oE "JobId=[^ ]+|JobState=[^ ]+|NodeList=[^ ]+|Elapsed=[^ ]+" | paste - - - - 
"$labkit" bulk collect "$out" >"$tmp/collect.out" 2>&1 || fail "collect: $(tail -3 "$tmp/collect.out")"
"$python" - "$out" "$tmp/class/expected.csv" "$wall" <<'PY' || fail "verdicts (above)"
import csv, json, sys
out, expected_csv, wall = sys.argv[1], sys.argv[2], int(sys.argv[3])
rows = {(r["student"], r["lab"]): r for r in csv.DictReader(open(f"{out}/class.csv"))}
bad = n = 0
print(f"{'student':<28} {'expected':<15} {'got':<15} {'score':>6} {'speedup':>8}  GPU (Slurm's index, UUID)  sandbox")
for e in csv.DictReader(open(expected_csv)):
    r = rows.get((e["student"], e["lab"]), {})
    task = json.load(open(f"{out}/{e['student']}/task.json"))
    grade = json.load(open(f"{out}/{e['student']}/grade.json"))
    g = [x for x in grade.get("results", []) if x.get("lab", {}).get("id") == e["lab"]]
    sandbox = g[0].get("sandbox", "")[:24] if g else ""
    ok = r.get("verdict") == e["verdict"]
    bad += not ok
    print(f"{e['student']:<28} {e['verdict']:<15} {r.get('verdict', '-'):<15} {r.get('score', ''):>6} "
          f"{r.get('speedup', ''):>8}  {r.get('gpu', '')[:28]} ({task.get('slurm_gpus', '')}, {r.get('gpu_uuid', '')[:12]})  "
          f"{sandbox}{'' if ok else '   <-- WRONG'}")
    n += 1
print(f"{n} submissions, {bad} verdicts not as expected; the array ran {wall} s ({3600 * n / max(wall, 1):.0f} submissions per hour)")
sys.exit(1 if bad else 0)
PY
echo "slurm gpu test: $(($(date +%s) - t0)) s in all"
exit $((failures > 0))
