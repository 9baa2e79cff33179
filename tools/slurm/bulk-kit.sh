#!/usr/bin/env bash
# The kit's trusted part, built once per class for `labkit bulk` (a task's own build of it was
# 47-64 s of every task on 16 CPUs, against 28 s of grading for 3 labs). Two uses:
#   bash OUT/bulk-kit.sh   the kit build job. `labkit bulk submit` submits it first (no GPU, the
#                          tasks' --cpus-per-task) and the student array with
#                          --dependency=afterany:JOB, so the array starts when this job has ended,
#                          whether it built the kit or not. It copies the kit as every task does,
#                          builds the kit targets a task builds (bk_kit_targets) in node-local
#                          scratch, publishes them as OUT/kit-build/{kit,build} and, last,
#                          OUT/kit-build/stamp: ok or failed, the kit's digest, the meson options,
#                          the targets, the toolchain and the folder it was built in. Its log is
#                          OUT/kit-build.log.
#   source bulk-kit.sh     (bulk-task.sh) the copy, options and targets both share, and the checks
#                          before a task uses the prebuilt kit.
# Why a copied build is safe: the task moves its copy with `meson setup --reconfigure`, which
# rewrites every absolute path of the build (build.ninja, the lab registry, build_paths.cpp: the
# judge's own folders) to the task's scratch. The kit's compile commands hold no absolute path of
# the source or build folder, so ninja keeps the kit's objects and compiles only build_paths.cpp
# and the student's labs. A task refuses the copy, and builds everything itself as before, when
# the stamp is missing, failed, or differs from what the task would build; when the kit changed
# since; when a file ninja or the judge reads still names the kit build's folder; or when the
# rebuilt judge does not read the task's own lab registry (bk_judge_check).
# Everything here reads LABKIT_BULK_OUT, LABKIT_BULK_KIT, LABKIT_BULK_MODE, LABKIT_BULK_GPU_ARCH,
# LABKIT_BULK_DATA and LABKIT_BULK_PREBUILT (0: --no-prebuilt-kit) as grade.sbatch exports them.

# The kit's top-level entries a build copies: not its solutions, tests, docs or build folders.
bk_kit_entries() {  # SRC -> one name a line
  local p
  for p in "$1"/*; do
    [[ -e $p ]] || continue
    case ${p##*/} in solutions | tests | docs) continue ;; esac
    [[ -d $p/meson-private ]] && continue
    printf '%s\n' "${p##*/}"
  done
}

bk_copy_kit() {  # SRC DEST
  local e
  while IFS= read -r e; do
    cp -a "$1/$e" "$2/" || return 1
  done < <(bk_kit_entries "$1")
}

# One sha256 of what bk_copy_kit copies from DIR: every file (its path and bytes) and symbolic
# link (its path and target). The same for the kit and for a copy of it; nothing (and 1) when DIR
# cannot be read.
bk_digest() {  # DIR
  local list
  list=$(
    cd "$1" || exit 1
    mapfile -t entries < <(bk_kit_entries .)
    ((${#entries[@]})) || exit 1
    find "${entries[@]}" -type f -print0 | LC_ALL=C sort -z | xargs -0 -r sha256sum -- || exit 1
    find "${entries[@]}" -type l -printf '%p -> %l\n' | LC_ALL=C sort
  ) || return 1
  [[ -n $list ]] || return 1
  sha256sum <<<"$list" | cut -d' ' -f1
}

# The meson options of every bulk build, the kit job's and the tasks' alike. nvcc is the one the
# kit's tools/cuda.ini names, found on PATH: a --native-file would put the file's absolute path
# into the build, and meson keeps it on reconfigure.
bk_setup_env() {  # KIT_COPY
  bk_opts=(-Dtests=false -Dbench=disabled -Dcudnn=false)
  [[ -n ${LABKIT_BULK_GPU_ARCH:-} ]] && bk_opts+=("-Dgpu_arch=$LABKIT_BULK_GPU_ARCH")
  local nvcc
  nvcc=$(sed -n "s/^[[:space:]]*cuda[[:space:]]*=[[:space:]]*['\"]\([^'\"]*\)['\"].*/\1/p" "$1/tools/cuda.ini" 2>/dev/null | head -1)
  if [[ -n $nvcc && -x $nvcc ]]; then PATH=${nvcc%/*}:$PATH; export PATH; fi
}

# The kit's targets for MODE: the judge, and for grading the library every lab's harness links and
# the kit's own harnesses (its timing calibration); the synthetic test set's generator when the
# class has no test set (the task then makes the set itself: datasets/synth-test-set.txt).
bk_kit_targets() {  # MODE -> bk_targets
  bk_targets=(grader/labkit)
  [[ $1 == grade ]] && bk_targets+=(grader/harness/liblabkit_harness.a grader/harness/harness-kit-conv grader/harness/harness-kit-map)
  [[ $1 == grade && ! -d ${LABKIT_BULK_DATA:-/nonexistent} ]] && bk_targets+=(datasets/labkit-gen-dataset)
  return 0
}

# The compilers and build tools (after bk_setup_env): objects of one toolchain only are linked.
bk_toolchain() {
  printf '%s; %s (%s); meson %s; ninja %s' "$(${CXX:-c++} --version 2>&1 | head -1)" \
    "$(nvcc --version 2>&1 | tail -1)" "$(command -v nvcc)" "$(meson --version 2>&1)" "$(ninja --version 2>&1)"
}

# A value of OUT/kit-build/stamp (key=value lines).
bk_stamp() {  # KEY
  sed -n "s/^$1=//p" "$LABKIT_BULK_OUT/kit-build/stamp" 2>/dev/null | head -1
}

# Why this task may not use OUT/kit-build, on stdout ("" when it may). After bk_setup_env and
# bk_kit_targets; before anything is copied.
bk_prebuilt_refusal() {  # MODE
  local stamp=$LABKIT_BULK_OUT/kit-build/stamp key want have
  if [[ ${LABKIT_BULK_PREBUILT:-1} != 1 ]]; then echo "--no-prebuilt-kit"; return; fi
  if [[ ! -f $stamp ]]; then echo "no kit build: OUT/kit-build/stamp is missing (the kit build job did not finish; OUT/kit-build.log)"; return; fi
  if [[ $(bk_stamp status) != ok ]]; then echo "the kit build job failed (OUT/kit-build.log)"; return; fi
  for key in mode options targets toolchain; do
    case $key in
      mode) want=$1 ;;
      options) want=${bk_opts[*]} ;;
      targets) want=${bk_targets[*]} ;;
      toolchain) want=$(bk_toolchain) ;;
    esac
    have=$(bk_stamp "$key")
    if [[ $have != "$want" ]]; then echo "stale stamp: $key \"$have\" there, \"$want\" here"; return; fi
  done
  have=$(bk_digest "$LABKIT_BULK_KIT")
  if [[ -z $have || $have != "$(bk_stamp kit_digest)" ]]; then
    echo "stale stamp: the kit ($LABKIT_BULK_KIT) changed since the kit build job"
    return
  fi
  if [[ -z $(bk_stamp built_in) ]]; then echo "the stamp does not say where the kit was built"; fi
}

# Copies OUT/kit-build's kit and build folders into WORK (mtimes kept: ninja compares them) and
# checks the copy against the stamp; why not on stdout and 1 when it fails.
bk_copy_prebuilt() {  # WORK
  local from=$LABKIT_BULK_OUT/kit-build
  if ! cp -a "$from/kit/." "$1/kit/" || ! cp -a "$from/build" "$1/build"; then
    echo "cannot copy $from"
    return 1
  fi
  local have
  have=$(bk_digest "$1/kit")
  if [[ -z $have || $have != "$(bk_stamp kit_digest)" ]]; then
    echo "OUT/kit-build/kit differs from its stamp's digest"
    return 1
  fi
}

# Moves the copied kit build to BUILD (its kit beside it, the student's kernels in place):
# `meson setup --reconfigure` rewrites the build's absolute paths. Then refuses it (1, why on
# stdout) when a file ninja reads still names the kit build's folder or OUT/kit-build, or when a
# .cu file of a submitted lab is not a source of the configured build.
bk_relocate() {  # BUILD KIT LOG LAB_ID...
  local b=$1 k=$2 log=$3 old hit f id
  shift 3
  old=$(bk_stamp built_in)
  if ! timeout 600 meson setup --reconfigure "$b" "$k" "${bk_opts[@]}" >>"$log" 2>&1; then
    echo "meson setup --reconfigure failed (build.log)"
    return 1
  fi
  # Text files (-I: not objects or executables), then ninja's binary logs.
  hit=$(grep -rlIF -e "$old" -e "$LABKIT_BULK_OUT/kit-build" --exclude-dir=meson-logs "$b" 2>/dev/null | head -1)
  for f in .ninja_deps .ninja_log; do
    [[ -z $hit && -f $b/$f ]] && grep -qaF -e "$old" -e "$LABKIT_BULK_OUT/kit-build" "$b/$f" && hit=$b/$f
  done
  if [[ -n $hit ]]; then
    echo "${hit#"$b"/} still names the kit build's folder ($old) after the reconfigure"
    return 1
  fi
  for id; do
    for f in "$k/labs/$id"/*.cu; do
      if ! grep -qF " $(cd "${f%/*}" && pwd -P)/${f##*/}" "$b/build.ninja"; then
        echo "labs/$id/${f##*/} is not a source of the configured build"
        return 1
      fi
    done
  done
  # The node that built the kit may have a clock ahead of this one's: its build_paths.cpp object
  # could then look newer than the file the reconfigure just rewrote. Removed, it is compiled here.
  find "$b" -name '*build_paths.cpp.o' -delete
}

# After the kit targets were built from the copy: the judge must read this build's lab registry
# and name no folder of the kit build (its constants: build_paths.cpp). Why not on stdout, 1.
bk_judge_check() {  # BUILD
  local b real ro why=
  b=$1
  real=$(cd "$b" && pwd -P)
  ro=$(mktemp) || { echo "mktemp failed"; return 1; }
  if ! objcopy -O binary --only-section=.rodata "$b/grader/labkit" "$ro" 2>/dev/null; then
    why="cannot read grader/labkit's constants (objcopy)"
  elif ! grep -qaF "$real/grader/harness/labs.json" "$ro"; then
    why="grader/labkit does not read this task's lab registry ($real/grader/harness/labs.json)"
  elif grep -qaF -e "$(bk_stamp built_in)" -e "$LABKIT_BULK_OUT/kit-build" "$ro"; then
    why="grader/labkit still names the kit build's folder"
  fi
  rm -f "$ro"
  [[ -z $why ]] || { echo "$why"; return 1; }
}

# The kit build job.
bk_kit_job() {
  set -uo pipefail
  local out=${LABKIT_BULK_OUT:?} kit=${LABKIT_BULK_KIT:?} mode=${LABKIT_BULK_MODE:-grade}
  local dest=$out/kit-build t0 work status=failed digest= commit jobs
  t0=$(date +%s)
  # First: no task may read an earlier stamp beside a build this job replaces.
  rm -f "$dest/stamp"
  exec >"$out/kit-build.log" 2>&1
  echo "bulk-kit: $(hostname), $(date -Is), mode $mode, kit $kit"
  work=${LABKIT_BULK_SCRATCH:-${TMPDIR:-/tmp}}/labkit-bulk-kit-${SLURM_JOB_ID:-$$}
  rm -rf "$work" && mkdir -p "$work/kit" || { echo "bulk-kit: cannot create $work"; exit 99; }
  work=$(cd "$work" && pwd -P)  # meson records real paths: the stamp names what it recorded
  [[ ${LABKIT_BULK_KEEP:-0} == 1 ]] || trap 'rm -rf "$work"' EXIT
  jobs=${SLURM_CPUS_PER_TASK:-$(nproc)}
  commit=$(git -C "$kit" rev-parse --short HEAD 2>/dev/null)
  [[ -n $commit && -n $(git -C "$kit" status --porcelain --untracked-files=no 2>/dev/null | head -1) ]] && commit+=" (modified)"
  if bk_copy_kit "$kit" "$work/kit"; then
    digest=$(bk_digest "$work/kit")
    bk_setup_env "$work/kit"
    bk_kit_targets "$mode"
    if timeout "${LABKIT_BULK_BUILD_TIMEOUT:-3600}" meson setup "$work/build" "$work/kit" "${bk_opts[@]}" \
       && timeout "${LABKIT_BULK_BUILD_TIMEOUT:-3600}" ninja -C "$work/build" -j "$jobs" "${bk_targets[@]}"; then
      # Published whole or not at all: a new folder beside the old one, then renamed.
      rm -rf "$dest.new" && mkdir -p "$dest.new" && cp -a "$work/kit" "$work/build" "$dest.new/" \
        && rm -rf "$dest" && mv "$dest.new" "$dest" && status=ok
    fi
  else
    bk_setup_env "$kit"
    bk_kit_targets "$mode"
    echo "bulk-kit: cannot copy $kit"
  fi
  mkdir -p "$dest"
  {
    echo "status=$status"
    echo "kit_digest=$digest"
    echo "kit_commit=$commit"
    echo "mode=$mode"
    echo "options=${bk_opts[*]}"
    echo "targets=${bk_targets[*]}"
    echo "toolchain=$(bk_toolchain)"
    echo "built_in=$work/build"
    echo "node=$(hostname)"
    echo "job_id=${SLURM_JOB_ID:-}"
    echo "seconds=$(($(date +%s) - t0))"
    echo "date=$(date -Is)"
  } >"$dest/stamp.tmp" && mv "$dest/stamp.tmp" "$dest/stamp"
  echo "bulk-kit: kit build $status in $(($(date +%s) - t0)) s ($dest/stamp)"
  [[ $status == ok ]]
}

if [[ ${BASH_SOURCE[0]} == "$0" ]]; then
  bk_kit_job
  exit $?
fi
