#!/usr/bin/env bash
# `labkit sweep` through the real build dir and ninja.
#   usage: test_sweep.sh LABKIT MODE [--solution] LAB NAME V1,V2
# MODE build (unit suite, any machine): the parameter mistakes exit 2 naming the file, then the
#   two values are built with --build-only: both executables exist and differ. 77 when nvcc
#   cannot be started.
# MODE gpu (gpu suite): the sweep itself, graded and timed: with --solution, exit 0, a passed row
#   per value, the chart with one line per grading shape; without it (a kit exported for students:
#   the skeleton), a graded row per value and the exit status those rows call for. 77 without a
#   CUDA device.
set -u
labkit=$1
mode=$2
shift 2
subject=("${@:1:$#-2}")
name=${*: -2:1}
values=${*: -1}
lab=${subject[-1]}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
failures=0
fail() { echo "FAIL $*"; failures=$((failures + 1)); }

if [[ $mode == build ]]; then
  "$labkit" sweep "${subject[@]}" --param "$name" >"$tmp/out" 2>"$tmp/err"
  status=$?
  [[ $status -eq 2 ]] && grep -q "no '='" "$tmp/err" && echo "ok   --param without '=': exit 2, $(cat "$tmp/err")" \
    || fail "--param $name: exit $status: $(cat "$tmp/err")"

  "$labkit" sweep "${subject[@]}" --param "$name=8,x" >"$tmp/out" 2>"$tmp/err"
  status=$?
  [[ $status -eq 2 ]] && grep -q '"x" is not a positive integer' "$tmp/err" && echo "ok   a value that is no integer: exit 2" \
    || fail "--param $name=8,x: exit $status: $(cat "$tmp/err")"

  "$labkit" sweep "${subject[@]}" --param NO_SUCH_MACRO=1,2 >"$tmp/out" 2>"$tmp/err"
  status=$?
  [[ $status -eq 2 ]] && grep -q "$lab/kernel.cu: declares no NO_SUCH_MACRO" "$tmp/err" \
    && echo "ok   a parameter the file does not declare: exit 2, $(cat "$tmp/err")" \
    || fail "--param NO_SUCH_MACRO: exit $status: $(cat "$tmp/err")"

  "$labkit" sweep "${subject[@]}" --param "$name=$values" --build-only --jobs 2 >"$tmp/out" 2>"$tmp/err"
  status=$?
  if [[ $status -ne 0 ]] && grep -q "could not start" "$tmp/err"; then
    echo "SKIP the compiler cannot be started here: $(grep -m1 'could not start' "$tmp/err")"
    exit 77
  fi
  [[ $status -eq 0 ]] || fail "--build-only: exit $status: $(cat "$tmp/out" "$tmp/err")"
  mapfile -t exes < <(sed -n "s/^$name=[0-9]*: //p" "$tmp/out")
  if [[ ${#exes[@]} -ne 2 ]]; then
    fail "--build-only printed ${#exes[@]} executables: $(cat "$tmp/out")"
  elif [[ -x ${exes[0]} && -x ${exes[1]} ]] && ! cmp -s "${exes[0]}" "${exes[1]}"; then
    echo "ok   $name=$values built: two different executables (${exes[0]}, ${exes[1]})"
  else
    fail "the variants are missing or identical: ${exes[*]}"
  fi
  exit $((failures > 0))
fi

# gpu: the whole sweep, as a student runs it.
"$labkit" sweep "${subject[@]}" --param "$name=$values" --max-time 1 --svg "$tmp/chart.svg" >"$tmp/table" 2>"$tmp/err"
status=$?
if [[ $status -eq 77 ]]; then
  grep -q "no usable CUDA device" "$tmp/err" && { echo "SKIP $(cat "$tmp/err")"; exit 77; }
  fail "exit 77 without the no-device message: $(cat "$tmp/err")"
  exit 1
fi
cat "$tmp/table"
# Without --solution the subject is the lab's skeleton (a kit exported for students has no
# solutions): until it is completed its variants are graded but do not pass, and the sweep says so
# with exit 1. A completed lab passes as the solution does; either way each value gets a graded row.
skeleton=1
[[ ${subject[0]} == --solution ]] && skeleton=0
values_n=0 passed=0
for v in ${values//,/ }; do
  values_n=$((values_n + 1))
  verdict=$(sed -nE "s/^\| $v \| ([a-z-]+) \| .*/\1/p" "$tmp/table")
  if [[ $verdict == passed ]]; then
    passed=$((passed + 1))
    echo "ok   $name=$v: a passed row"
  elif ((skeleton)) && [[ -n $verdict && $verdict != kit-error ]]; then
    echo "ok   $name=$v: graded, $verdict (the skeleton, not yet completed)"
  else
    fail "no passed row for $name=$v (verdict: ${verdict:-no row})"
  fi
done
want_status=$((passed == values_n ? 0 : 1))
[[ $status -eq $want_status ]] && echo "ok   exit $status: $passed of $values_n values passed" \
  || fail "sweep: exit $status, want $want_status ($passed of $values_n values passed): $(tail -40 "$tmp/err")"
# One line per grading shape that was timed: both shapes when a value passed (the solution), none
# when no value got a time (a skeleton that writes no correct output).
series=$(grep -c '<g class="series"' "$tmp/chart.svg" 2>/dev/null)
lines=$(grep -c '<polyline class="line"' "$tmp/chart.svg" 2>/dev/null)
series=${series:-0} lines=${lines:-0}
want_lines=$series
((passed > 0 || !skeleton)) && want_lines=2
[[ $lines -eq $want_lines && $series -eq $want_lines ]] \
  && echo "ok   the chart has one line per timed grading shape ($lines)" \
  || fail "the chart has $lines lines in $series series, want $want_lines"
grep -q "against $name on " "$tmp/chart.svg" && echo "ok   the chart's title names $name and the GPU" || fail "chart title"
exit $((failures > 0))
