#!/usr/bin/env bash
# On a CUDA machine: configure a fresh build dir, build, run the kit's tests (the GPU suites are
# the point; the CPU ones come along), the baseline benchmark, `labkit baseline`, the milestone
# reports, `labkit profile`, `labkit grade --sanitize` and `labkit calibrate`, and print a short
# summary last. Logs go to $OUT (if set) or to the build dir.
#
#   tools/gpu-test.sh [--suites] [--part 1|2 [--slice K/N]] [--gpus N] [BUILD_DIR]   (default build-gpu)
#
# --suites: the build and the test suites only (GPU suites included), with their summary; the
# tools' runs above (benchmark, reports, profile, sanitizer, calibration) add several minutes,
# more than one 10-minute call on a lent device machine leaves after the build and the suites.
# --part 1|2 (implies --suites): half of the tests each, for calls shorter than the build and all
# suites (about 80 s + 490 s on an H200): part 1 the CPU suites, the solutions, the skeletons and
# the GPU unit tests; part 2 the suite test-labs (the grader against tests/labs: grader-*,
# cheat-*, sanitize-*, report-*). Part 2 reuses BUILD_DIR when part 1 left it configured (ninja
# rebuilds what changed), so a second call on a machine still warm skips the build.
# --gpus N (implies --suites; N >= 2 GPUs in the machine): the tests at once on N GPUs, dealt by
# tools/deal-tests.py (longest first, by the seconds in tools/gpu-test-durations.txt), each shard on
# its own GPU and its own 1/N of the CPUs (each grade sees one GPU and its own CPUs, as one Slurm
# task of tools/slurm would); the wall time of the slowest shard: about 80 s of build and 315 s of
# tests on 4 H200s, 630 s on two (there, --part 1 and --gpus 2 --part 2 fit 10-minute calls).
# With --part 2: part 2 alone, dealt to all N GPUs.
# --slice K/N (with --part 2, one GPU): every Nth test of part 2 from the Kth (sorted by name), for
# a machine of one GPU where the build and all of part 2 (about 120 s + 520 s on an H200) do not
# fit one 10-minute call: --part 2 --slice 1/2 builds and runs half, --slice 2/2 on the machine
# still warm runs the rest without building again.
set -uo pipefail
cd "$(dirname "$0")/.."
suites_only=0
part=0
slice=
shards=0
while [[ ${1:-} == --* ]]; do
  case $1 in
    --suites) suites_only=1; shift ;;
    --part) part=${2:-}; suites_only=1; shift 2 ;;
    --gpus) shards=${2:-}; suites_only=1; shift 2 ;;
    --slice) slice=${2:-}; shift 2 ;;
    *) echo "gpu-test: unknown option $1 (--suites, --part 1|2, --gpus N, --slice K/N)"; exit 2 ;;
  esac
done
if [[ $part != 0 && $part != 1 && $part != 2 ]]; then echo "gpu-test: --part takes 1 or 2, got '$part'"; exit 2; fi
if [[ -n $slice ]]; then
  [[ $slice =~ ^([0-9]+)/([0-9]+)$ ]] && ((BASH_REMATCH[1] >= 1 && BASH_REMATCH[1] <= BASH_REMATCH[2])) ||
    { echo "gpu-test: --slice takes K/N with 1 <= K <= N, got '$slice'"; exit 2; }
  ((part == 2 && !shards)) || { echo "gpu-test: --slice goes with --part 2 and without --gpus"; exit 2; }
  slice_k=${BASH_REMATCH[1]} slice_n=${BASH_REMATCH[2]}
fi
# --gpus N with --part 2: the test labs alone, dealt to all N GPUs.
labs_only=0
if ((shards)); then
  ((part == 2)) && labs_only=1
  ((part == 1)) && { echo "gpu-test: --gpus deals every test to the GPUs already; --part 1 goes without --gpus"; exit 2; }
  part=shards
  have=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU')
  [[ $shards =~ ^[0-9]+$ ]] && ((shards >= 2 && shards <= have)) ||
    { echo "gpu-test: --gpus takes 2 up to the GPUs here ($have), got '$shards'"; exit 2; }
fi
build=${1:-build-gpu}
logs=${OUT:-$build}

native=()
command -v nvcc >/dev/null || native=(--native-file tools/cuda.ini)
mkdir -p "$logs"
# Part 2 (alone, or dealt to GPUs: part is "shards" then) reuses a configured build dir.
if [[ ($part != 2 && $labs_only == 0) || ! -f $build/build.ninja ]]; then
  rm -rf "$build"
  mkdir -p "$build"
  if ! meson setup "$build" "${native[@]}" >"$logs/setup.log" 2>&1; then
    tail -30 "$logs/setup.log"; echo "gpu-test: meson setup failed"; exit 1
  fi
fi
if ! meson compile -C "$build" >"$logs/build.log" 2>&1; then
  grep -E "error|FAILED" "$logs/build.log" | head -40; echo "gpu-test: build failed"; exit 1
fi

# labtests: the names of the suite test-labs, sorted: what --gpus and --slice deal out.
list_test_labs() {
  # "labkit:gpu+test-labs / NAME" (meson 1.0) or "gpu+test-labs - labkit:NAME" (meson 1.12)
  mapfile -t labtests < <(meson test -C "$build" --no-rebuild --list --suite test-labs 2>/dev/null |
                          sed -E 's#^.* / ##; s#^.* - [^:]+:##' | sort)
  ((${#labtests[@]})) || { echo "gpu-test: meson test --list found no test-labs tests"; exit 1; }
}

# The tests of this run: all but the labs suite (the skeletons, graded 0), or one part of them
# (test-labs: the grader against tests/labs, tests/meson.build).
selection=(--no-suite labs)
if [[ $part == shards ]]; then
  # One meson run a GPU in one build dir, each with its own log base (meson-logs/testlog-shardK.json).
  ncpu=$(nproc)
  per=$((ncpu / shards))
  # shard_of[name] = GPU: the test labs alone (--part 2), or every test of this run.
  declare -A shard_of
  if ((labs_only)); then list_test_labs; names=("${labtests[@]}"); else
    mapfile -t names < <(meson test -C "$build" --no-rebuild --list "${selection[@]}" --no-suite slurm-gpu 2>/dev/null |
                         sed -E 's#^.* / ##; s#^.* - [^:]+:##' | sort)
  fi
  while read -r k name; do shard_of[$name]=$k; done < <(printf '%s\n' "${names[@]}" |
    python3 tools/deal-tests.py "$shards" tools/gpu-test-durations.txt 2>"$logs/deal.txt")
  ((${#shard_of[@]})) || { echo "gpu-test: no tests to deal (meson test --list)"; exit 1; }
  pids=()
  for ((k = 0; k < shards; k++)); do
    # The real-GPU Slurm class (suite slurm-gpu) takes every GPU of the node: tools/slurm/measure-class.sh runs it alone.
    args=()
    for name in "${names[@]}"; do [[ ${shard_of[$name]} == "$k" ]] && args+=("$name"); done
    ((${#args[@]})) || continue
    CUDA_VISIBLE_DEVICES=$k taskset -c "$((k * per))-$((k * per + per - 1))" meson test -C "$build" --no-rebuild \
      "${args[@]}" --logbase "testlog-shard$k" --print-errorlogs >"$logs/test-shard$k.log" 2>&1 &
    pids+=($!)
  done
  test_status=0
  for p in "${pids[@]}"; do wait "$p" || test_status=1; done
  cat "$logs"/test-shard*.log >"$logs/test.log"
  cat "$build"/meson-logs/testlog-shard*.json >"$build/meson-logs/testlog.json"
else
  ((part == 1)) && selection+=(--no-suite test-labs)
  if ((part == 2)) && [[ -n $slice ]]; then
    list_test_labs
    selection=()
    for ((i = slice_k - 1; i < ${#labtests[@]}; i += slice_n)); do selection+=("${labtests[i]}"); done
  elif ((part == 2)); then
    selection+=(--suite test-labs)
  fi
  meson test -C "$build" "${selection[@]}" --print-errorlogs >"$logs/test.log" 2>&1
  test_status=$?
fi
cp "$build/meson-logs/testlog.json" "$logs/testlog.json" 2>/dev/null

# The tools' runs (not with --suites).
if ((!suites_only)); then
"$build/bench/bench-baseline" --benchmark_counters_tabular=true >"$logs/bench.log" 2>&1
bench_status=$?
"$build/grader/labkit" baseline >"$logs/baseline.log" 2>&1
baseline_status=$?
# The grader end to end, through `labkit grade` (each lab's code in its sandboxed harness): the baseline
# against itself, a correct conv, the map baseline.
start=$SECONDS
"$build/grader/labkit" grade --tests baseline-self plain-conv map-baseline >"$logs/grade.log" 2>&1
grade_status=$?
grade_seconds=$((SECONDS - start))
# The milestone report: the baseline's and the fastest fp32 solution's tables, and the comparison
# across every conv solution and cuDNN with its chart.
start=$SECONDS
"$build/grader/labkit" report --baseline --solution --lab 06-fusion >"$logs/report.md" 2>"$logs/report.err"
report_status=$?
"$build/grader/labkit" report --compare --svg "$logs/report-compare.svg" >"$logs/report-compare.md" 2>"$logs/report-compare.err"
compare_status=$?
report_seconds=$((SECONDS - start))
# The instructor's and student's tools: Nsight Compute's summary of the 03 solution and the
# untouched skeleton, compute-sanitizer on the 03 solution and on its racy copy, the calibration.
labkit="$build/grader/labkit"
"$labkit" profile 03-tiling --solution >"$logs/profile-solution.txt" 2>&1
profile_status=$?
"$labkit" profile 03-tiling >"$logs/profile-skeleton.txt" 2>&1
"$labkit" grade 03-tiling --solutions --sanitize >"$logs/sanitize-solution.txt" 2>&1
sanitize_status=$?
"$labkit" grade --tests tiling-race --sanitize >"$logs/sanitize-race.txt" 2>&1
race_status=$?
"$labkit" calibrate >"$logs/calibrate.txt" 2>&1
calibrate_status=$?
fi

echo "================ labkit gpu-test summary$( ((suites_only)) && echo " (--suites)")$( [[ $part == shards ]] && echo ", on $shards GPUs at once" || { ((part)) && echo " part $part of 2"; })$( [[ -n $slice ]] && echo ", slice $slice") ================"
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv,noheader 2>/dev/null \
  | sed 's/^/GPU: /'
echo "--- tests (meson test --no-suite labs) ---"
[[ $part == shards ]] && cat "$logs/deal.txt"
grep -E "^ *[0-9]+/[0-9]+ " "$logs/test.log" | sed -E 's/ +/ /g'
if ((!suites_only)); then  # the tools' results
echo "--- benchmark (bench-baseline, exit $bench_status) ---"
grep -E "^(baseline|Benchmark)" "$logs/bench.log" | grep -v "^-" | head -20
echo "--- labkit baseline (exit $baseline_status) ---"
grep -E "conv[12] b|all cases|FAILED|FAIL" "$logs/baseline.log"
echo "--- labkit grade --tests baseline-self plain-conv map-baseline (exit $grade_status, ${grade_seconds} s) ---"
grep -E "^(GPU:|  geometric mean|  conv|  workload|Verdict:)|^(baseline-self|plain-conv|map-baseline|total) " "$logs/grade.log"
echo "--- labkit report --baseline --solution --lab 06-fusion (exit $report_status) ---"
grep -E "^\*\*|^\| " "$logs/report.md"
grep -E "failed|note" "$logs/report.err"
echo "--- labkit report --compare (exit $compare_status, ${report_seconds} s for both reports) ---"
grep -E "^\*\*|^\| " "$logs/report-compare.md"
grep -E "failed|note|chart" "$logs/report-compare.err"
echo "--- labkit profile 03-tiling --solution (exit $profile_status); the skeleton's verdict lines ---"
grep -E "^(conv|  )" "$logs/profile-solution.txt"
grep -E "^conv|skeleton|no kernel" "$logs/profile-skeleton.txt"
echo "--- labkit grade 03-tiling --solutions --sanitize (exit $sanitize_status); --tests tiling-race --sanitize (exit $race_status) ---"
for f in sanitize-solution sanitize-race; do
  sed -n '/^Sanitizer/,/^Score/p' "$logs/$f.txt" | grep -E "^  [a-z]+ |^    [A-Z]" | head -8
  grep -A3 "^Verdict:" "$logs/$f.txt" | head -4
done
echo "--- labkit calibrate (exit $calibrate_status) ---"
grep -E "^[0-9]{2}-|^lab |calibrate on" "$logs/calibrate.txt"
fi
echo "--- solutions suite: each instructor solution's speedups (from the test log) ---"
python3 tools/testlog-summary.py "$build/meson-logs/testlog.json" --reports solutions
summary_status=$?
if ((suites_only)); then
  [[ $test_status -eq 0 && $summary_status -eq 0 ]]
  exit
fi
[[ $test_status -eq 0 && $summary_status -eq 0 && $bench_status -eq 0 && $baseline_status -eq 0 &&
   $report_status -eq 0 && $compare_status -eq 0 && $profile_status -eq 0 && $sanitize_status -eq 0 &&
   $race_status -eq 1 && $calibrate_status -eq 0 ]]
