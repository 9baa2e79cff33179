#!/usr/bin/env bash
# `labkit report` on a cheating test lab (tests/labs): the run must fail with the lab's own
# verdict text and the milestone table must print no Op Time for it. Exit 77 without a GPU.
#   usage: test_report_cheat.sh PATH_TO_LABKIT LAB BATCH TEXT
#   fake-event-timer-half (its CUDA events report half of the real time): "does not account for"
#   prolog-compute (the conv in the untimed prolog, a copy in the op): "just before conv_forward_gpu"
set -u
labkit=$1
lab=$2
batch=$3
text=$4
out=$(mktemp)
trap 'rm -f "$out"' EXIT
"$labkit" report --tests --lab "$lab" --batches "$batch" --op-repeats 3 >"$out" 2>&1
status=$?
if [[ $status -eq 77 ]]; then
  echo "skipped: no CUDA device"; exit 77
fi
cat "$out"
if [[ $status -eq 0 ]]; then echo "FAIL: report exited 0 for the cheating lab $lab"; exit 1; fi
if ! grep -q "$text" "$out"; then echo "FAIL: no '$text' in the report"; exit 1; fi
if grep -qE "^\| $batch \| [0-9.]+ ms" "$out"; then echo "FAIL: an Op Time was printed"; exit 1; fi
echo "ok: the report of $lab failed with '$text' and printed no Op Time"
