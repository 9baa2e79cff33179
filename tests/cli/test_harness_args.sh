#!/usr/bin/env bash
# The harness's own options before --channel (grader/harness/harness.cpp main): a malformed
# --reserve-pinned is refused with exit 2 and a message naming the option and what it wants,
# before any CUDA call (so this runs without a GPU); without --channel the harness says what it
# is and how to grade instead.
#   test_harness_args.sh HARNESS
set -uo pipefail
harness=$1
fails=0
expect() {  # expect WANT_EXIT WANT_TEXT ARGS...
  local want=$1 text=$2; shift 2
  local out status
  out=$("$harness" "$@" 2>&1); status=$?
  if [[ $status -ne $want || $out != *"$text"* ]]; then
    echo "FAIL: $harness $* -> exit $status, wanted $want and \"$text\"; said: $out"
    fails=$((fails + 1))
  else
    echo "ok: $* -> exit $status"
  fi
}
expect 2 "--reserve-pinned= wants float counts separated by commas" --reserve-pinned=1,,2 --channel
expect 2 "--reserve-pinned= wants float counts separated by commas" --no-trace --reserve-pinned=x --channel
expect 2 "--reserve-pinned= wants float counts separated by commas" --reserve-pinned=0 --channel
expect 2 "grades nothing"
((fails == 0)) || { echo "$fails case(s) failed"; exit 1; }
