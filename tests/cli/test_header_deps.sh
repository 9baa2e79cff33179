#!/usr/bin/env bash
# A lab's own header rebuilds what includes it: ninja holds the headers of kernel.cu's two
# compiles (the harness object, the PTX) for the 12-tensor-cores solution, whose kernel.cu
# includes tensor_cores.cuh (and, through it, its other .cuh files).
#   usage: test_header_deps.sh BUILD_DIR HARNESS_OBJECT PTX
set -u
build=$1 object=$2 ptx=$3
failures=0
for target in "$object" "$ptx"; do
  deps=$(ninja -C "$build" -t deps "$target" 2>&1)
  if grep -q "solutions/12-tensor-cores/maps_mma.cuh" <<<"$deps"; then
    echo "ok   $target: $(grep -c '\.cuh$' <<<"$deps") .cuh files among its $(head -1 <<<"$deps" | grep -oE '#deps [0-9]+')"
  else
    echo "FAIL $target: ninja records no maps_mma.cuh, so editing it would not rebuild this:"
    head -3 <<<"$deps"
    failures=$((failures + 1))
  fi
done
exit $((failures > 0))
