#!/usr/bin/env bash
# `labkit list` and `labkit grade` plumbing, on any machine: lab selection errors, the aggregate
# exit code (77 without a GPU, the verdict's code with one) and a valid Gradescope results.json.
#   usage: test_grade.sh PATH_TO_LABKIT PYTHON3 [--tests] LAB
# LAB is the grader's test lab plain-conv (--tests plain-conv: it must pass on a GPU) or, in a
# student distribution, which has no test labs, a lab of labs/ (any verdict: it is the student's).
set -u
labkit=$1
python=$2
shift 2
subject=("$@")
lab=${subject[-1]}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
failures=0
fail() { echo "FAIL $*"; failures=$((failures + 1)); }

"$labkit" list --tests >"$tmp/list" 2>&1 || fail "list exited $?"
grep -q "^$lab  *\(test\|lab\) " "$tmp/list" && echo "ok   list shows $lab" || fail "list: $(cat "$tmp/list")"

"$labkit" grade >"$tmp/out" 2>"$tmp/err"
status=$?
[[ $status -eq 2 ]] && grep -q "nothing to grade" "$tmp/err" && echo "ok   grade without a lab: exit 2, $(cat "$tmp/err")" \
  || fail "grade without a lab: exit $status: $(cat "$tmp/err")"

"$labkit" grade --tests no-such-lab >"$tmp/out" 2>"$tmp/err"
status=$?
[[ $status -eq 2 ]] && grep -q 'no test named "no-such-lab"' "$tmp/err" && echo "ok   unknown lab: exit 2, $(cat "$tmp/err")" \
  || fail "unknown lab: exit $status: $(cat "$tmp/err")"

"$labkit" grade "${subject[@]}" --correctness-only --gradescope "$tmp/results.json" >"$tmp/out" 2>"$tmp/err"
status=$?
if [[ ${subject[0]} == --tests && $status -ne 0 && $status -ne 77 ]]; then
  fail "grade $lab: exit $status (want 0 with a GPU, 77 without)"; cat "$tmp/out" "$tmp/err"
elif [[ $status -ne 0 && $status -ne 1 && $status -ne 77 ]]; then
  fail "grade $lab: exit $status (want a verdict's 0 or 1 with a GPU, 77 without)"; cat "$tmp/out" "$tmp/err"
fi
"$python" - "$tmp/results.json" "$status" "$lab" <<'PY' && echo "ok   results.json is valid Gradescope output (exit $status)" || fail "results.json"
import json, sys
r = json.load(open(sys.argv[1]))
assert set(r) >= {"score", "max_score", "tests", "output"}, r.keys()
t = r["tests"][0]
assert t["name"].startswith(sys.argv[3] + ": "), t["name"]
assert t["max_score"] > 0 and t["status"] in ("passed", "failed"), t
if sys.argv[2] == "77":
    assert t["status"] == "failed" and "No usable CUDA device" in t["output"], t
PY

exit $((failures > 0))
