#!/usr/bin/env bash
# Grades one synthetic class through Slurm on this machine's GPUs, once per GPU count, and prints
# how the class scales and whether every GPU grades alike (tools/slurm/measure-report.py).
#   1. the class: tools/slurm/synthetic-class.py (solutions, skeletons, half-done students and
#      cheaters whose crash, hang, forged report or cache must get a known verdict), made once;
#   2. per run of N GPUs: a one-node Slurm (tests/slurm/start-cluster.sh, LABKIT_SLURM_GPUS=real)
#      whose node declares its first N GPUs as a gres, `labkit bulk submit` (one array task per
#      student, --gres=gpu:1, --cpus-per-task = this machine's CPUs / all its GPUs in every run, so
#      that a task has the same CPUs whatever N), the wait for the array, `labkit bulk collect`;
#   3. the tables: GPUs, wall time, submissions per hour, speedup over N = 1, verdict agreement
#      with expected.csv; the same solution's speedup on every GPU, with the largest spread.
# Run as root (slurmd starts the jobs) on a GPU machine with Slurm and munge (Debian's packages, or
# tools/slurm/unpack-debs.sh), from the kit's source tree, after a build (tools/gpu-test.sh).
#   usage: tools/slurm/measure-class.sh BUILD_DIR [--students N] [--labs A,B | --all-labs]
#            [--gpus "1 all"] [--lab-timeout S] [--budget S] [--results DIR]
#   --students N     class size (default 6)
#   --labs LIST      labs every student hands in (default 01-restrict-unroll,03-tiling,06-fusion)
#   --all-labs       every lab of the kit (13); pair with --students 64 for the issue's full class
#   --gpus LIST      the runs, GPU counts ("all": every /dev/nvidiaN); default "1 all"
#   --lab-timeout S  seconds per lab (the hang's cost; default 45)
#   --budget S       seconds for all runs (default 570): a run still going then is cancelled and
#                    reported unfinished, the runs after it are skipped
#   --results DIR    where each run's output folder stays (default BUILD_DIR/measure-class); the
#                    tables cover every run in it, so runs may be made by separate calls
# The default (6 students x 3 labs, runs of 1 and 2 GPUs) is sized for 10 minutes on 2 H100s with
# 32 CPUs: per student a build of the kit and 3 labs, about 40 s, plus one hang of 45 s per run.
set -uo pipefail
build=${1:?usage: measure-class.sh BUILD_DIR [options]}
shift
students=6 labs=01-restrict-unroll,03-tiling,06-fusion gpus_runs="1 all" lab_timeout=45 budget=570 results=
while (($#)); do
  case $1 in
    --students) students=$2; shift 2 ;;
    --labs) labs=$2; shift 2 ;;
    --all-labs) labs=all; shift ;;
    --gpus) gpus_runs=$2; shift 2 ;;
    --lab-timeout) lab_timeout=$2; shift 2 ;;
    --budget) budget=$2; shift 2 ;;
    --results) results=$2; shift 2 ;;
    *) echo "measure-class: unknown option $1" >&2; exit 2 ;;
  esac
done
src=$(cd "$(dirname "$0")/../.." && pwd)
build=$(cd "$build" && pwd) || exit 2
labkit=$build/grader/labkit
results=${results:-$build/measure-class}
t_start=$(date +%s)
[[ -x $labkit ]] || { echo "measure-class: $labkit not found: build the kit first (tools/gpu-test.sh)"; exit 2; }
[[ -e /dev/nvidia0 ]] || { echo "measure-class: no GPU (/dev/nvidia0)"; exit 77; }
total_gpus=$(ls /dev/nvidia[0-9]* 2>/dev/null | wc -l)
cpus_per_task=$(($(nproc) / total_gpus))
((cpus_per_task >= 1)) || cpus_per_task=1

mkdir -p "$results"
class=$results/class
if [[ ! -f $class/expected.csv ]]; then
  gen=(--size "$students")
  [[ $labs == all ]] && gen+=(--all-labs) || gen+=(--labs "$labs")
  python3 "$src/tools/slurm/synthetic-class.py" "$class" "${gen[@]}" --kit "$src" || exit 1
else
  echo "measure-class: the class of $class/expected.csv (an earlier call); remove $results for a new one"
fi
n_subs=$(($(wc -l <"$class/expected.csv") - 1))
echo "measure-class: $n_subs submissions, runs of ${gpus_runs} GPU(s) (this machine: $total_gpus GPUs, $(nproc) CPUs," \
  "$cpus_per_task CPUs per task), lab timeout ${lab_timeout} s, budget ${budget} s"
nvidia-smi --query-gpu=index,name,uuid,pci.bus_id,clocks.max.sm,clocks.sm,temperature.gpu,pstate --format=csv 2>/dev/null

source "$src/tests/slurm/start-cluster.sh"
ms() { echo $(($(date +%s%N) / 1000000)); }
for n in $gpus_runs; do
  [[ $n == all ]] && n=$total_gpus
  out=$results/run-$n
  left=$((budget - ($(date +%s) - t_start)))
  if ((left < 60)); then
    echo "measure-class: run of $n GPU(s) skipped: ${left} s left of the ${budget} s budget"
    continue
  fi
  rm -rf "$out" "$results/cluster-$n"
  if ! LABKIT_SLURM_GPUS=real LABKIT_SLURM_GPU_COUNT=$n start_cluster "$results/cluster-$n"; then
    echo "measure-class: Slurm cannot start here: $cluster_error"
    stop_cluster
    exit 77
  fi
  echo "== run of $n GPU(s): $(sinfo -h -N -o '%N %T %c CPUs %G'); $cluster_binding"
  ts=$(ms)
  "$labkit" bulk submit "$class/submissions" --out "$out" --task grade --cpus-per-task "$cpus_per_task" \
    --time 01:00:00 --partition test --lab-timeout "$lab_timeout" --kit "$src" >"$results/submit-$n.out" 2>&1 \
    || { cat "$results/submit-$n.out"; stop_cluster; exit 1; }
  job=$(cat "$out/job.txt")
  finished=yes last=
  while [[ -n $(squeue -h -j "$job" 2>/dev/null) ]]; do
    if (($(date +%s) - t_start > budget)); then
      echo "measure-class: budget reached: cancelling job $job"
      scancel "$job"
      finished=no
      sleep 3
      break
    fi
    now=$(squeue -h -j "$job" -o '%T' 2>/dev/null | sort | uniq -c | tr -s ' \n' ' ')
    [[ $now != "$last" ]] && echo "  at $((($(ms) - ts) / 1000)) s: $now" && last=$now
    sleep 1
  done
  wall_ms=$(($(ms) - ts))
  wall=$((wall_ms / 1000)).$(printf '%03d' $((wall_ms % 1000)))
  "$labkit" bulk collect "$out" >"$results/collect-$n.out" 2>&1
  sed -n '/^GPUs/,/^$/p' "$results/collect-$n.out"
  printf 'gpus=%s\nwall_seconds=%s\nfinished=%s\nbinding=%s\ncpus_per_task=%s\nlab_timeout=%s\n' "$n" "$wall" "$finished" \
    "$cluster_binding" "$cpus_per_task" "$lab_timeout" >"$out/measure.env"
  cp "$results/cluster-$n/log/probe.out" "$out/probe.out" 2>/dev/null
  stop_cluster
  echo "== run of $n GPU(s): ${wall%.*} s wall ($finished)"
done
python3 "$src/tools/slurm/measure-report.py" "$results"
status=$?
echo "measure-class: $(($(date +%s) - t_start)) s in all; every run's output stays in $results"
exit $status
