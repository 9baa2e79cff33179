#!/usr/bin/env bash
# `labkit profile LAB`: a clear usage error for an unknown lab; with a GPU and Nsight Compute, a
# table per grading shape whose rows hold numbers for the baseline's kernel; without them, exit 77
# and one line that says which is missing.
#   usage: test_profile.sh PATH_TO_LABKIT LAB [--solution]
set -u
labkit=$1
lab=$2
shift 2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
failures=0
fail() { echo "FAIL $*"; failures=$((failures + 1)); }
ok() { echo "ok   $*"; }

"$labkit" profile no-such-lab >"$tmp/out" 2>"$tmp/err"
status=$?
[[ $status -eq 2 ]] && grep -q 'no lab named "no-such-lab"' "$tmp/err" && ok "unknown lab: exit 2" \
  || fail "unknown lab: exit $status: $(cat "$tmp/err")"

"$labkit" profile "$lab" "$@" >"$tmp/out" 2>"$tmp/err"
status=$?
cat "$tmp/out"
if [[ $status -eq 77 ]]; then
  if grep -q "skipped: " "$tmp/err"; then
    echo "skipped: $(grep 'skipped: ' "$tmp/err")"
    ((failures == 0)) && exit 77
  else
    fail "exit 77 without saying why: $(cat "$tmp/err")"
  fi
elif [[ $status -eq 0 ]]; then
  for row in "duration" "SM throughput (% of peak)" "memory throughput (% of peak)" "achieved occupancy" \
             "registers/thread" "shared memory/block" "L1 hit rate" "L2 hit rate" "global load bytes" \
             "global store bytes"; do
    # The baseline's column (the first after the label) must be a measured value, not n/a.
    line=$(grep -F "  $row " "$tmp/out" | head -1)
    [[ -n $line && ${line:32} =~ ^\ *[0-9] ]] && ok "$row: ${line:32:40}" || fail "row '$row': '$line'"
  done
  grep -q "^  kernel time .*x$" "$tmp/out" && ok "$(grep '^  kernel time' "$tmp/out" | head -1)" || fail "no kernel time line"
else
  fail "profile $lab: exit $status: $(cat "$tmp/err")"
fi
exit $((failures > 0))
