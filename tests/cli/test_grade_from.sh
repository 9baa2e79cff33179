#!/usr/bin/env bash
# `labkit grade --from`: a saved result drawn again without grading (no GPU), and the streams
# timeline's SVG written beside the terminal report, its path named there (grader/tools/timeline.h).
#   usage: test_grade_from.sh PATH_TO_LABKIT PYTHON3 GRADE_JSON
# GRADE_JSON: tests/web/fixtures/grade-streams.json (a 10-streams result built by hand, 29 records,
# kernels named with markup).
set -u
labkit=$1
python=$2
fixture=$3
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
failures=0
fail() { echo "FAIL $*"; failures=$((failures + 1)); }

"$labkit" grade --from "$fixture" --svg "$tmp/svg" >"$tmp/out" 2>"$tmp/err"
status=$?
svg="$tmp/svg/10-streams-timeline.svg"
[[ $status -eq 0 ]] && echo "ok   --from: exit 0" || fail "--from: exit $status: $(cat "$tmp/err")"
grep -q "^Timeline picture .*: $svg\$" "$tmp/out" && echo "ok   the report names $svg" || fail "the report does not name $svg: $(tail -3 "$tmp/out")"
grep -q "^  lab  .* 9 streams, 25 records, overlap 0.512 of 2.196 ms busy (23.3%)" "$tmp/out" \
  && echo "ok   the report's timeline line" || fail "timeline lines: $(grep -A3 '^Timeline of' "$tmp/out")"
bars=$(grep -o 'class="bar"' "$svg" 2>/dev/null | wc -l)
[[ $bars -eq 29 ]] && echo "ok   $bars bars in the SVG" || fail "$bars bars in $svg, want 29"
if grep -q '<script\|<img\|<svg onload' "$svg"; then fail "markup from a kernel's name in $svg"; else echo "ok   no markup from kernel names"; fi
grep -q '&lt;script&gt;alert(1)&lt;/script&gt;&amp;"' "$svg" && echo "ok   a hostile name escaped" || fail "the hostile name is not in $svg as text"

"$labkit" grade --from "$fixture" --json >"$tmp/json" 2>"$tmp/err"
"$python" -c 'import json, sys; r = json.load(open(sys.argv[1]))["results"][0]; assert len(r["timeline"]) == 2, r.keys()' "$tmp/json" \
  && echo "ok   --from --json: the result, its timeline kept" || fail "--from --json: $(head -c 300 "$tmp/json")"

"$labkit" grade --from "$fixture" 10-streams >"$tmp/out" 2>"$tmp/err"
status=$?
[[ $status -eq 2 ]] && grep -q "grades nothing" "$tmp/err" && echo "ok   --from with a lab: exit 2" || fail "--from with a lab: exit $status: $(cat "$tmp/err")"
echo '{"results": []}' >"$tmp/empty.json"
"$labkit" grade --from "$tmp/empty.json" >"$tmp/out" 2>"$tmp/err"
status=$?
[[ $status -eq 2 ]] && grep -q "no grade result in it" "$tmp/err" && echo "ok   --from without a result: exit 2" \
  || fail "--from without a result: exit $status: $(cat "$tmp/err")"

exit $((failures > 0))
