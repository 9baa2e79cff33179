#!/usr/bin/env bash
# `labkit baseline` on broken fixtures: one line on stderr naming the file, exit status 1 —
# on any machine, since fixtures are read before the GPU is looked for.
#   usage: test_baseline_errors.sh PATH_TO_LABKIT
set -u
labkit=$1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
failures=0

expect_one_line_error() {  # NAME EXPECTED_SUBSTRING -- ARGS...
  local name=$1 want=$2; shift 3
  "$labkit" "$@" >"$tmp/out" 2>"$tmp/err"
  local status=$? lines
  lines=$(wc -l <"$tmp/err")
  if [[ $status -ne 1 || $lines -ne 1 ]] || ! grep -qF -- "$want" "$tmp/err"; then
    echo "FAIL $name: exit $status (want 1), $lines stderr line(s) (want 1), want \"$want\" in:"
    sed 's/^/    /' "$tmp/err"
    failures=$((failures + 1))
  else
    echo "ok   $name: $(cat "$tmp/err")"
  fi
}

manifest() {  # FILE_FOR_INPUT
  cat >"$tmp/manifest.json" <<JSON
{"cases": [{"name": "broken", "kind": "conv",
  "shape": {"B": 1, "M": 1, "C": 1, "H": 2, "W": 2, "K": 2},
  "files": {"input": "$1", "mask": "$1", "expected": "$1"}}]}
JSON
}

manifest input.npy
expect_one_line_error "missing .npy" "input.npy" -- baseline --fixtures "$tmp/manifest.json" --batch 0

printf 'PK\003\004 this is a zip, not an npy' >"$tmp/input.npy"
expect_one_line_error "bad magic" "input.npy" -- baseline --fixtures "$tmp/manifest.json" --batch 0

# A valid v1 header promising 4 floats, followed by only 3 bytes of data.
header="{'descr': '<f4', 'fortran_order': False, 'shape': (1, 1, 2, 2), }"
printf -v padded '%-117s' "$header"
{ printf '\x93NUMPY\x01\x00\x76\x00'; printf '%s\n' "$padded"; printf 'abc'; } >"$tmp/input.npy"
expect_one_line_error "truncated data" "input.npy" -- baseline --fixtures "$tmp/manifest.json" --batch 0

echo '{"cases": [' >"$tmp/manifest.json"
expect_one_line_error "manifest not JSON" "manifest.json" -- baseline --fixtures "$tmp/manifest.json" --batch 0

expect_one_line_error "missing manifest" "nowhere.json" -- baseline --fixtures "$tmp/nowhere.json" --batch 0

exit $((failures > 0))
