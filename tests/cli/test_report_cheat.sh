#!/usr/bin/env bash
# `labkit report` on tests/labs/fake-event-timer-half, whose CUDA events report half of the real
# time: the milestone table must not print that Op Time. Exit 77 without a GPU.
#   usage: test_report_cheat.sh PATH_TO_LABKIT
set -u
labkit=$1
out=$(mktemp)
trap 'rm -f "$out"' EXIT
"$labkit" report --tests --lab fake-event-timer-half --batches 10000 --op-repeats 3 >"$out" 2>&1
status=$?
if [[ $status -eq 77 ]]; then
  echo "skipped: no CUDA device"; exit 77
fi
cat "$out"
if [[ $status -eq 0 ]]; then echo "FAIL: report exited 0 for a lab that reports half of its time"; exit 1; fi
if ! grep -q "does not account for" "$out"; then echo "FAIL: no 'does not account for' verdict in the report"; exit 1; fi
if grep -qE "^\| 10000 \| [0-9.]+ ms" "$out"; then echo "FAIL: an Op Time was printed"; exit 1; fi
echo "ok: the half-time lab's report failed on the time it does not account for"
