#!/usr/bin/env bash
# `labkit inspect` on a good file and on corrupt ones. Files are written with printf, so the test
# runs without numpy. Each corrupt file must give a failing status and exactly one stderr line
# naming the file and the problem. Usage: test_inspect.sh PATH_TO_LABKIT
set -u
labkit=${1:?usage: test_inspect.sh PATH_TO_LABKIT}
dir=$(mktemp -d "${TMPDIR:-/tmp}/labkit-inspect.XXXXXX") || exit 99
trap 'rm -rf "$dir"' EXIT
failures=0
check() {  # check DESCRIPTION CONDITION...
  local what=$1
  shift
  if "$@"; then echo "ok   $what"; else echo "FAIL $what"; failures=$((failures + 1)); fi
}

# npy FILE DESCR FORTRAN SHAPE DATA: a format 1.0 file whose data starts at byte 64 or 128;
# DATA is a printf format string of the raw little-endian bytes.
npy() {
  local header="{'descr': '$2', 'fortran_order': $3, 'shape': $4, }"
  local len=$(((10 + ${#header} + 1 + 63) / 64 * 64 - 10))
  {
    printf '\x93NUMPY\x01\x00'
    printf "\\x$(printf %02x $((len & 255)))\\x$(printf %02x $((len >> 8)))"
    printf '%-*s\n' $((len - 1)) "$header"
    printf "$5"
  } >"$1"
}
# float32 1, 2, 3, 4, 5, 6
six='\x00\x00\x80\x3f\x00\x00\x00\x40\x00\x00\x40\x40\x00\x00\x80\x40\x00\x00\xa0\x40\x00\x00\xc0\x40'

# run FILE...: runs labkit inspect, leaving $status, $out and $err.
run() {
  "$labkit" inspect "$@" >"$dir/out" 2>"$dir/err"
  status=$?
  out=$(cat "$dir/out")
  err=$(cat "$dir/err")
}
contains() { [[ $1 == *"$2"* ]]; }
one_line() { [[ $(wc -l <"$dir/err") -eq 1 && -n $err ]]; }

good="$dir/good.npy"
npy "$good" '<f4' False '(2, 3)' "$six"
run "$good"
check "good file: exit status 0 (got $status)" test "$status" -eq 0
check "good file: prints dtype and shape" contains "$out" "<f4  shape (2, 3)  6 elements"
check "good file: prints min, max and mean" contains "$out" "min 1  max 6  mean 3.5"
check "good file: prints the first values" contains "$out" "first: 1 2 3 4 5 6"
check "good file: nothing on stderr" test -z "$err"

# name|expected words in the message; each file is made below.
printf 'not a numpy file at all\n' >"$dir/bad magic.npy"
npy "$dir/truncated.npy" '<f4' False '(2, 3)' '\x00\x00\x80\x3f'
npy "$dir/fortran.npy" '<f4' True '(2, 3)' "$six"
npy "$dir/bigendian.npy" '>f4' False '(2, 3)' "$six"
npy "$dir/trailing.npy" '<f4' False '(2, 3)' "$six\\x00"
: >"$dir/empty.npy"
cases=(
  "bad magic.npy|not a .npy file"
  "truncated.npy|truncated data: expected 24 bytes for shape (2, 3) of <f4, found 4"
  "fortran.npy|Fortran order is not supported"
  "bigendian.npy|big-endian dtype '>f4'"
  "trailing.npy|1 trailing byte after the data"
  "empty.npy|empty file"
  "missing.npy|cannot open: No such file or directory"
)
for case in "${cases[@]}"; do
  name=${case%%|*}
  words=${case#*|}
  run "$dir/$name"
  check "$name: failing exit status (got $status)" test "$status" -eq 1
  check "$name: exactly one stderr line" one_line
  check "$name: stderr names the file" contains "$err" "labkit inspect: $dir/$name: "
  check "$name: stderr says '$words'" contains "$err" "$words"
  check "$name: nothing on stdout" test -z "$out"
done

run "$good" "$dir/fortran.npy" "$good"
check "good, bad, good: exit status 1 (got $status)" test "$status" -eq 1
check "good, bad, good: both good files printed" test "$(grep -c 'shape (2, 3)' "$dir/out")" -eq 2
check "good, bad, good: one stderr line" one_line

"$labkit" inspect >/dev/null 2>&1
status=$?
check "no file: usage error, exit status 2 (got $status)" test "$status" -eq 2

if ((failures > 0)); then
  echo "$failures check(s) failed"
  exit 1
fi
echo "all checks passed"
