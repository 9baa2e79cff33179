#!/usr/bin/env bash
# `labkit report` on any machine: the milestone table through the CPU reference conv in every
# format, the progress lines, and each way a run can fail (missing data, a broken model file, a
# lab that is not a conv lab, an unknown lab, no GPU for a GPU conv) with its message and exit code.
#   usage: test_report.sh PATH_TO_LABKIT PYTHON3 [GPU_SUBJECT...]
# GPU_SUBJECT: what the GPU part reports on, `--solution --lab 03-tiling` by default; a student
# distribution, which has no solutions, passes `--baseline`.
set -u
labkit=$1
python=$2
shift 2
gpu_subject=("$@")
((${#gpu_subject[@]})) || gpu_subject=(--solution --lab 03-tiling)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
failures=0
fail() { echo "FAIL $*"; failures=$((failures + 1)); }
ok() { echo "ok   $*"; }

# The milestone table in Markdown, two batches, through the CPU reference.
"$labkit" report --cpu --batches 20,50 >"$tmp/md" 2>"$tmp/err"
status=$?
[[ $status -eq 0 ]] || fail "report --cpu: exit $status: $(cat "$tmp/err")"
grep -q '^| Batch Size | Op Time 1 | Op Time 2 | Total Execution Time | Accuracy |$' "$tmp/md" \
  && grep -Eq '^\| 20 \| [0-9]+\.[0-9]{3} ms \| [0-9]+\.[0-9]{3} ms \| [0-9]+\.[0-9]{2} s \| [01]\.[0-9]{4} \|$' "$tmp/md" \
  && grep -Eq '^\| 50 \| ' "$tmp/md" && ok "md table: $(grep '^| 50 ' "$tmp/md")" || fail "md table: $(cat "$tmp/md")"
grep -q '\[1/2\] cpu-reference at batch 20' "$tmp/err" && grep -q '\[2/2\] cpu-reference at batch 50' "$tmp/err" \
  && ok "progress lines" || fail "progress lines: $(cat "$tmp/err")"

# csv and tex headers; json with consistent numbers.
"$labkit" report --cpu --batches 20 --format csv 2>/dev/null | head -1 | grep -q '^batch_size,op_time_1_ms,op_time_2_ms,total_execution_time_s,accuracy,error$' \
  && ok "csv header" || fail "csv header"
"$labkit" report --cpu --batches 20 --format tex --output "$tmp/table.tex" >/dev/null 2>&1
grep -q 'begin{tabular}' "$tmp/table.tex" && ok "tex written with --output" || fail "tex --output: $(cat "$tmp/table.tex")"
"$labkit" report --cpu --batches 30 --format json >"$tmp/run.json" 2>"$tmp/err" || fail "json: $(cat "$tmp/err")"
"$python" - "$tmp/run.json" <<'PY' && ok "json: predictions, accuracy and times consistent" || fail "json run"
import json, sys
run = json.load(open(sys.argv[1]))["runs"][0]
assert run["batch"] == 30 and len(run["predictions"]) == 30
assert abs(run["accuracy"] - run["correct"] / 30) < 1e-12
assert run["conv"][0]["op_ms"] > 0 and run["conv"][1]["op_ms"] > 0
assert run["total_s"] >= run["load_s"] > 0
assert run["conv"][0]["nonfinite"] == 0 and run["device"] == "CPU"
PY

# Failures: each a message naming what is wrong, and a non-zero exit.
"$labkit" report --cpu --batches 10 --data "$tmp/no-such-dir" >"$tmp/out" 2>"$tmp/err"
status=$?
[[ $status -eq 1 ]] && grep -q "no-such-dir/t10k-images-idx3-ubyte" "$tmp/out" && ok "missing data: exit 1, $(grep -o 'failed:.*' "$tmp/out")" \
  || fail "missing data: exit $status: $(cat "$tmp/out" "$tmp/err")"

cp -r "$LABKIT_SOURCE_DIR/datasets/model" "$tmp/model"
head -c 100 "$LABKIT_SOURCE_DIR/datasets/model/conv2.npy" >"$tmp/model/conv2.npy"
"$labkit" report --cpu --batches 10 --model "$tmp/model" >"$tmp/out" 2>"$tmp/err"
status=$?
[[ $status -eq 1 ]] && grep -q "conv2.npy" "$tmp/out" && ok "broken model file: exit 1, $(grep -o 'failed:.*' "$tmp/out")" \
  || fail "broken model file: exit $status: $(cat "$tmp/out" "$tmp/err")"

"$labkit" report --cpu --batches 20000 >"$tmp/out" 2>"$tmp/err"
status=$?
[[ $status -eq 1 ]] && grep -q "holds 10000 images" "$tmp/out" && ok "batch larger than the set: exit 1" \
  || fail "batch larger than the set: exit $status: $(cat "$tmp/out" "$tmp/err")"

"$labkit" report --lab 04-float4 >"$tmp/out" 2>"$tmp/err"
status=$?
[[ $status -eq 2 ]] && grep -q "not a conv lab" "$tmp/err" && ok "map lab refused: $(cat "$tmp/err")" || fail "map lab: exit $status: $(cat "$tmp/err")"
"$labkit" report --lab no-such-lab >"$tmp/out" 2>"$tmp/err"
status=$?
[[ $status -eq 2 ]] && grep -q 'no lab named "no-such-lab"' "$tmp/err" && ok "unknown lab refused" || fail "unknown lab: exit $status: $(cat "$tmp/err")"
"$labkit" report >"$tmp/out" 2>"$tmp/err"
[[ $? -eq 2 ]] && grep -q "nothing to run" "$tmp/err" && ok "nothing to run" || fail "no subject: $(cat "$tmp/err")"
# A lab's Op Time only from calls whose input the kit wrote inside the call: no --op-repeats 0.
"$labkit" report --lab 03-tiling --op-repeats 0 >"$tmp/out" 2>"$tmp/err"
status=$?
[[ $status -eq 2 ]] && grep -q "Pass --op-repeats 1 or more" "$tmp/err" && ok "a lab with --op-repeats 0 refused" \
  || fail "--op-repeats 0 on a lab: exit $status: $(cat "$tmp/err")"

# The baseline's row takes a lab's path: its conv in the kit's own harness, sandboxed, through
# labkit-network's lab mode (the same harness start, shared-memory file and checks as a lab's row);
# --baseline-inprocess adds the in-process run beside it. --dry-run prints the commands only.
"$labkit" report --compare --baseline-inprocess --batches 10000 --dry-run >"$tmp/out" 2>"$tmp/err"
status=$?
base=$(grep '^baseline: ' "$tmp/out")
inproc=$(grep '^baseline (in-process): ' "$tmp/out")
[[ $status -eq 0 ]] && [[ $(head -1 "$tmp/out") == "$base" ]] \
  && [[ $base =~ labkit-network\ lab\ --harness\ [^\ ]*/harness-kit-conv\ --lab\ kit-conv\ --precision\ fp32\ --sandbox\  ]] \
  && [[ $base == *" --network --batch 10000 "* ]] \
  && [[ $inproc =~ labkit-network\ baseline\ --network\ --batch\ 10000\  ]] \
  && ok "baseline row through the kit's harness: ${base%% --network*}" \
  || fail "report --compare --dry-run: exit $status: $(cat "$tmp/out" "$tmp/err")"
"$labkit" report --baseline --dry-run --op-repeats 0 --batches 10 >"$tmp/out" 2>"$tmp/err"
[[ $? -eq 0 ]] && grep -q "harness-kit-conv" "$tmp/out" && ok "the kit's baseline allows --op-repeats 0 (it is no lab's code)" \
  || fail "baseline --op-repeats 0: $(cat "$tmp/out" "$tmp/err")"

# A GPU conv: 77 and a clear skip without a device, a table with one.
# Three repeats: the report's check on unaccounted time reads their median, which one slow
# request (the machine's, not the lab's) does not move.
"$labkit" report "${gpu_subject[@]}" --batches 10 --op-repeats 3 >"$tmp/out" 2>"$tmp/err"
status=$?
if [[ $status -eq 77 ]]; then
  grep -q "skipped: no usable CUDA device" "$tmp/err" && ok "GPU conv without a GPU: exit 77, skip named" || fail "no-GPU message: $(cat "$tmp/err")"
elif [[ $status -eq 0 ]]; then
  grep -Eq '^\| 10 \| ' "$tmp/out" && ok "GPU conv: $(grep '^| 10 ' "$tmp/out")" || fail "GPU conv table: $(cat "$tmp/out")"
else
  fail "GPU conv: exit $status: $(cat "$tmp/out" "$tmp/err")"
fi

exit $((failures > 0))
