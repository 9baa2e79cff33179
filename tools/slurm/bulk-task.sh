#!/usr/bin/env bash
# One task of a labkit bulk-grading job array (`labkit bulk submit` writes grade.sbatch, which
# runs a copy of this script as OUT/bulk-task.sh). It grades ONE student and never fails another:
#   1. reads its line of OUT/students.txt (task index -> student, labs folder);
#   2. copies into node-local scratch the class's prebuilt kit (OUT/kit-build, made once by the
#      kit build job, bulk-kit.sh) when its stamp matches this task, else the kit itself (without
#      solutions/, tests/, docs/, build folders), and puts in the student's
#      labs/NN-name/kernel.cu with the .cu/.cuh/.h/.hpp files beside it, and only those (lab.json
#      and the handouts stay the kit's); a lab
#      the student did not hand in is removed, and graded "not-submitted";
#   3. builds only what grading needs: the kit's targets (from the prebuilt copy: the judge's
#      paths only; else all of them), and per lab its grading executable and PTX (meson
#      -Dtests=false -Dbench=disabled); a lab that does not compile is "build-failed"; when the
#      kit does not build, every lab is "kit-error", and so is a lab whose harness or PTX is
#      older than the student's kernel.cu; grade.log and task.env say which kit was used
#      (kit_build: "prebuilt" or "built here (why)");
#   4. grades each built lab in its own process with a time limit (LABKIT_BULK_MODE=grade: its
#      grading executable with --json, as `labkit grade` runs it; evidence: its PTX checks only,
#      no GPU needed);
#   5. records the node, the GPU (its index as Slurm gave it; nvidia-smi: model, UUID, PCI bus,
#      driver, SM clocks before and after), the CPUs it was bound to and the times in task.env, and
#      runs `labkit bulk finish`, which writes results.json (Gradescope), task.json and, last,
#      grade.json into OUT/<student>/.
# Everything the task prints goes to OUT/<student>/grade.log; Slurm's own log gets one line.
# Exit 0 when results.json was written (whatever the student's score), 99 when it could not be.
#   usage: bulk-task.sh TASK_INDEX   with LABKIT_BULK_OUT, LABKIT_BULK_KIT, LABKIT_BULK_LABKIT,
#          LABKIT_BULK_MODE, LABKIT_BULK_LAB_TIMEOUT, LABKIT_BULK_GPU_ARCH,
#          LABKIT_BULK_DATA (the synthetic test set), LABKIT_BULK_SCRATCH, LABKIT_BULK_BUILD_TIMEOUT
#          (seconds), LABKIT_BULK_PREBUILT=0 (never the prebuilt kit: --no-prebuilt-kit) and
#          LABKIT_BULK_KEEP=1 (keep the scratch build, for debugging); bulk-kit.sh beside it.
set -uo pipefail
index=${1:?usage: bulk-task.sh TASK_INDEX}
out=${LABKIT_BULK_OUT:?} kit=${LABKIT_BULK_KIT:?} labkit=${LABKIT_BULK_LABKIT:?}
mode=${LABKIT_BULK_MODE:-grade} lab_timeout=${LABKIT_BULK_LAB_TIMEOUT:-600}
build_timeout=${LABKIT_BULK_BUILD_TIMEOUT:-3600}
t0=$(date +%s)

line=$(awk -F'\t' -v i="$index" '$1 == i { print; exit }' "$out/students.txt")
if [[ -z $line ]]; then
  echo "bulk-task: task $index: no line starting with $index in $out/students.txt" >&2
  exit 99
fi
IFS=$'\t' read -r _ student labs_dir _ <<<"$line"
dir=$out/$student
mkdir -p "$dir/labs" && rm -f "$dir"/labs/* "$dir"/build-*.log "$dir"/{results,grade,task}.json
exec 3>&1 >"$dir/grade.log" 2>&1
echo "bulk-task: task $index, student $student, $(hostname), $(date -Is), mode $mode"

work=${LABKIT_BULK_SCRATCH:-${TMPDIR:-/tmp}}/labkit-bulk-${SLURM_ARRAY_JOB_ID:-$$}-$index
rm -rf "$work" && mkdir -p "$work/kit" || { echo "bulk-task: cannot create $work" >&3; exit 99; }
[[ ${LABKIT_BULK_KEEP:-0} == 1 ]] || trap 'rm -rf "$work"' EXIT

# One GPU per task, as Slurm means it: --gres=gpu:1 gives the task one GPU, named in
# SLURM_JOB_GPUS (its index among the node's GPUs) and CUDA_VISIBLE_DEVICES (what CUDA opens). With
# device cgroups (ConstrainDevices=yes) the task cannot even open the others; without, nvidia-smi
# lists every GPU of the node and CUDA sees the one of CUDA_VISIBLE_DEVICES. CUDA numbers GPUs in
# PCI bus order here, as nvidia-smi does, so that nvidia-smi -i names the GPU CUDA grades on.
export CUDA_DEVICE_ORDER=PCI_BUS_ID
slurm_gpus=${SLURM_JOB_GPUS:-${SLURM_STEP_GPUS:-}}
gpu_sel=() smi_gpus=0
command -v nvidia-smi >/dev/null && smi_gpus=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU')
if ((smi_gpus > 1)) && [[ -n ${CUDA_VISIBLE_DEVICES:-} ]]; then
  gpu_sel=(-i "${CUDA_VISIBLE_DEVICES%%,*}")
fi
devices_constrained=$( ((smi_gpus == 1)) && echo yes || echo no)
gpu_query() {  # one CSV line for the task's GPU, or nothing
  command -v nvidia-smi >/dev/null || return 0
  nvidia-smi "${gpu_sel[@]}" --format=csv,noheader,nounits \
    --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,clocks.mem,temperature.gpu,pstate,uuid,index,pci.bus_id 2>/dev/null | head -1
}
gpu_procs() {  # processes already computing on the task's GPU
  command -v nvidia-smi >/dev/null || return 0
  nvidia-smi "${gpu_sel[@]}" --query-compute-apps=pid --format=csv,noheader 2>/dev/null | grep -c . || true
}
# The CPUs the task may run on (Slurm's task/affinity or task/cgroup bind it to its
# --cpus-per-task): the judge splits these, and only these, between the lab and itself
# (sched_getaffinity), so two tasks on one node never share a CPU.
cpus_allowed=$(awk '/^Cpus_allowed_list/ {print $2}' /proc/self/status)
if [[ -n ${SLURM_CPUS_PER_TASK:-} ]] && (($(nproc) > SLURM_CPUS_PER_TASK)); then
  echo "bulk-task: warning: $(nproc) CPUs allowed ($cpus_allowed) for --cpus-per-task=$SLURM_CPUS_PER_TASK: the cluster does not bind tasks to their CPUs (TaskPlugin=task/affinity or task/cgroup); tasks beside this one may share CPUs with it"
fi
echo "bulk-task: GPU $slurm_gpus (CUDA_VISIBLE_DEVICES=${CUDA_VISIBLE_DEVICES:-}, nvidia-smi sees $smi_gpus), CPUs $cpus_allowed"
gpu_before=$(gpu_query) other_procs=$(gpu_procs)

# 2. The kit: the class's prebuilt kit (OUT/kit-build, bulk-kit.sh) when its stamp says it is this
#    kit built as this task would build it, else a copy of the kit (not its solutions, tests,
#    docs, hidden folders or build folders); then the student's kernels only.
source "$(dirname "${BASH_SOURCE[0]}")/bulk-kit.sh" || { echo "bulk-task: $(dirname "${BASH_SOURCE[0]}")/bulk-kit.sh is missing" >&3; exit 99; }
tb=$(date +%s)
b=$work/build
bk_setup_env "$kit"
bk_kit_targets "$mode"
kit_targets=("${bk_targets[@]}")
# The network accuracy checks (09-fp16) read the synthetic test set: the instructor's, or made here.
[[ $mode == grade && ! -d ${LABKIT_BULK_DATA:-/nonexistent} ]] && kit_targets+=(datasets/synth-test-set.txt)
prebuilt=no
why=$(bk_prebuilt_refusal "$mode")
if [[ -z $why ]]; then
  if why=$(bk_copy_prebuilt "$work"); then
    prebuilt=yes
  else
    rm -rf "$work/kit" "$b" && mkdir -p "$work/kit"
  fi
fi
if [[ $prebuilt == no ]]; then
  bk_copy_kit "$kit" "$work/kit" || { echo "bulk-task: cannot copy $kit" >&3; exit 99; }
fi
submitted=()
for lab in "$work"/kit/labs/*/; do
  id=$(basename "$lab") src=$labs_dir/$id/kernel.cu
  # A plain file of at most 4 MiB, reached through no symbolic link (it could point at another
  # student's submission).
  if [[ -f $src && ! -L $src && ! -L $labs_dir/$id ]] && (($(stat -c %s "$src") <= 4194304)) \
     && cp "$src" "$lab/kernel.cu"; then
    # The student's own sources beside it (a lab of several .cu files, headers it includes: the
    # 11-13 solutions keep their kernels in .cuh files), under the same rules, at most 64 of them;
    # never lab.json or anything else of the folder (the kit's stay: targets, requires_gpu).
    extra=0
    for f in "$labs_dir/$id"/*.cu "$labs_dir/$id"/*.cuh "$labs_dir/$id"/*.h "$labs_dir/$id"/*.hpp; do
      [[ -f $f && ! -L $f && $(basename "$f") != kernel.cu ]] || continue
      (($(stat -c %s "$f") <= 4194304 && extra < 64)) || continue
      cp "$f" "$lab/" && touch "$lab/$(basename "$f")" && ((extra++))
    done
    # Newer than anything of the copied kit build, whatever its mtimes, and than the files beside
    # it: ninja compiles it here, and the freshness check below compares with it.
    touch "$lab/kernel.cu"
    submitted+=("$id")
  else
    rm -rf "$lab"
    echo not-submitted >"$dir/labs/$id.state"
  fi
done
echo "bulk-task: submitted: ${submitted[*]:-(none)}"

# 3. Build only what grading needs: the kit's targets (a failure there is the kit's, not the
#    student's), then each submitted lab's grading executable and PTX in one ninja run that
#    keeps going past a lab that does not compile. With the prebuilt kit, the copy is moved here
#    (bk_relocate: meson setup --reconfigure) and ninja compiles only the judge's paths and the
#    student's labs; a copy that fails a check is dropped, and the kit is built here after all.
setup=skipped build_seconds=0 kit_build="none (no lab handed in)"
jobs=${SLURM_CPUS_PER_TASK:-$(nproc)}
kit_here() {
  rm -rf "$b"
  timeout "$build_timeout" meson setup "$b" "$work/kit" "${bk_opts[@]}" >>"$dir/build.log" 2>&1 \
    && timeout "$build_timeout" ninja -C "$b" -j "$jobs" "${kit_targets[@]}" >>"$dir/build.log" 2>&1
}
kit_prebuilt() {  # why on stdout and 1 when the copy may not be used
  bk_relocate "$b" "$work/kit" "$dir/build.log" "${submitted[@]}" || return 1
  echo "bulk-task: kit steps to redo: $(ninja -C "$b" -n "${kit_targets[@]}" 2>/dev/null | grep -c '^\[')" >>"$dir/build.log"
  if ! timeout "$build_timeout" ninja -C "$b" -j "$jobs" "${kit_targets[@]}" >>"$dir/build.log" 2>&1; then
    echo "the kit targets did not build from the copy (build.log)"
    return 1
  fi
  bk_judge_check "$b"
}
if ((${#submitted[@]})); then
  : >"$dir/build.log"
  targets=()
  for id in "${submitted[@]}"; do
    targets+=("grader/harness/$id.ptx")
    [[ $mode == grade ]] && targets+=("grader/harness/harness-$id")
  done
  if [[ $prebuilt == yes ]]; then
    if why=$(kit_prebuilt); then
      setup=ok
    else
      prebuilt=no
      echo "bulk-task: the prebuilt kit was refused: $why; building the kit here" >>"$dir/build.log"
    fi
  fi
  if [[ $prebuilt == no ]]; then
    kit_here && setup=ok || setup=failed
  fi
  [[ $setup == ok ]] && timeout "$build_timeout" ninja -C "$b" -j "$jobs" -k 0 "${targets[@]}" >>"$dir/build.log" 2>&1
  build_seconds=$(($(date +%s) - tb))
  if [[ $prebuilt == yes ]]; then kit_build="prebuilt (OUT/kit-build, job $(bk_stamp job_id))"; else kit_build="built here ($why)"; fi
  echo "bulk-task: kit: $kit_build"
  echo "bulk-task: build (kit $setup) in ${build_seconds} s (build.log)"
  for id in "${submitted[@]}"; do
    h=$b/grader/harness/harness-$id p=$b/grader/harness/$id.ptx k=$work/kit/labs/$id/kernel.cu
    if [[ $setup != ok ]]; then
      echo kit-error >"$dir/labs/$id.state"
    elif [[ ! -f $p || ($mode == grade && ! -x $h) ]]; then
      echo build-failed >"$dir/labs/$id.state"
      # Once more alone, so that build-ID.log holds this lab's errors only.
      timeout 600 ninja -C "$b" "grader/harness/harness-$id" "grader/harness/$id.ptx" >"$dir/build-$id.log" 2>&1
    elif [[ $k -nt $p || ($mode == grade && $k -nt $h) ]]; then
      # What is graded must be built from the student's kernel.cu, never an older build of it.
      echo "kit-error grader/harness/$([[ $k -nt $p ]] && echo "$id.ptx" || echo "harness-$id") is older than the student's labs/$id/kernel.cu: it was not built from it (kit: $kit_build)" \
        >"$dir/labs/$id.state"
    fi
  done
fi

tg=$(date +%s)
# 4. Grade each built lab: `labkit grade` (the judge) runs the lab's code in its sandboxed harness,
#    with its own time limit (the lab's own time) and `timeout` as the backstop, past the kit's own
#    harness limit (2 x the lab's + 120 s) and the memory check's run: 3 x the limit + 180 s. The
#    sandbox also hides the submissions folder and the class's output (LABKIT_HIDE), so no student
#    sees another's work.
for id in "${submitted[@]}"; do
  [[ -f $dir/labs/$id.state ]] && continue
  echo "bulk-task: $id ..."
  args=(--json --timeout "$lab_timeout" --sandbox "${LABKIT_BULK_SANDBOX:-bubblewrap}")
  if [[ $mode == grade ]]; then
    [[ -d ${LABKIT_BULK_DATA:-/nonexistent} ]] && args+=(--data "$LABKIT_BULK_DATA")
  else
    args=(--json --evidence-only)
  fi
  LABKIT_HIDE="${LABKIT_HIDE:-}:$(dirname "$dir")" timeout -k 10 "$((3 * ${lab_timeout%.*} + 180))" "$b/grader/labkit" grade "$id" "${args[@]}" \
    >"$dir/labs/$id.out" 2>"$dir/labs/$id.err"
  code=$?
  echo "ran $code" >"$dir/labs/$id.state"
  echo "bulk-task: $id exit $code"
done

grading_seconds=$(($(date +%s) - tg))

# 5. What the task saw, then results.json through `labkit bulk finish` (which writes grade.json
#    last, by rename: a task killed before that leaves no grade.json, so nothing of it is merged).
one() { tr -d '\n' <<<"$1"; }
{
  echo "student=$student"
  echo "index=$index"
  echo "mode=$mode"
  echo "kit=$kit"
  echo "node=$(hostname)"
  echo "job_id=${SLURM_JOB_ID:-}"
  echo "array_job_id=${SLURM_ARRAY_JOB_ID:-}"
  echo "array_task_id=${SLURM_ARRAY_TASK_ID:-}"
  echo "cuda_visible_devices=${CUDA_VISIBLE_DEVICES:-}"
  echo "slurm_gpus=$slurm_gpus"
  echo "devices_constrained=$devices_constrained"
  echo "cpus_allowed=$cpus_allowed"
  echo "grading_seconds=$grading_seconds"
  echo "start=$(date -Is -d "@$t0")"
  echo "end=$(date -Is)"
  echo "setup=$setup"
  echo "build_seconds=$build_seconds"
  echo "kit_build=$kit_build"
  echo "gpu_before=$(one "$gpu_before")"
  echo "gpu_after=$(one "$(gpu_query)")"
  echo "gpu_other_processes=$(one "$other_procs")"
} >"$dir/task.env"
if "$labkit" bulk finish "$dir" && [[ -s $dir/results.json ]]; then
  echo "bulk-task: $student done in $(($(date +%s) - t0)) s: $dir/results.json" | tee /dev/fd/3
  exit 0
fi
# The finisher itself failed: still leave a results.json that says so.
printf '{"score": 0, "max_score": 0, "output": "labkit bulk: grading %s failed in the kit (see grade.log on %s); the instructor will regrade.", "tests": []}\n' \
  "$student" "$(hostname)" >"$dir/results.json"
echo "bulk-task: $student: labkit bulk finish failed; wrote a placeholder results.json" >&3
exit 99
