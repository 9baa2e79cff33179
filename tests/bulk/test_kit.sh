#!/usr/bin/env bash
# tools/slurm/bulk-kit.sh's checks, without Slurm: when a task may use the class's prebuilt kit
# (OUT/kit-build) and why not. The digest (a copy equals its kit; an edited file or a new link
# does not); the stamp refused when missing, failed, of another mode, options, targets or
# toolchain, of another kit, or with --no-prebuilt-kit, and accepted when it matches; a kit build
# folder moved and reconfigured (meson setup --reconfigure, configure only) accepted, and refused
# when a file of it still names the folder it was built in. Needs meson, ninja and nvcc (the kit's
# build tools); runs anywhere.
#   usage: test_kit.sh SOURCE_ROOT
set -u
src=$1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
failures=0
fail() { echo "FAIL $*"; failures=$((failures + 1)); }
check() { if eval "$1"; then echo "ok   $2"; else fail "$2"; fi; }
source "$src/tools/slurm/bulk-kit.sh"

mkdir -p "$tmp/copy"
bk_copy_kit "$src" "$tmp/copy"
d=$(bk_digest "$src")
check '[[ -n $d && $(bk_digest "$tmp/copy") == "$d" && ! -e $tmp/copy/solutions && ! -e $tmp/copy/tests && ! -e $tmp/copy/docs ]]' \
  "a copy (no solutions, tests, docs) has the kit's digest ${d:0:12}"
echo "// edited" >>"$tmp/copy/labs/01-restrict-unroll/kernel.cu"
check '[[ $(bk_digest "$tmp/copy") != "$d" ]]' "an edited kernel.cu changes the digest"
cp "$src/labs/01-restrict-unroll/kernel.cu" "$tmp/copy/labs/01-restrict-unroll/kernel.cu"
ln -s /etc/hostname "$tmp/copy/labs/01-restrict-unroll/link.cuh"
check '[[ $(bk_digest "$tmp/copy") != "$d" ]]' "a new symbolic link changes the digest"
rm "$tmp/copy/labs/01-restrict-unroll/link.cuh"
check '! bk_digest "$tmp/nowhere" >/dev/null 2>&1' "no digest of a missing folder"

# The stamp as the kit build job writes it, for this kit, in evidence mode.
export LABKIT_BULK_OUT=$tmp/out LABKIT_BULK_KIT=$src LABKIT_BULK_MODE=evidence LABKIT_BULK_GPU_ARCH= LABKIT_BULK_PREBUILT=1
mkdir -p "$tmp/out/kit-build"
bk_setup_env "$src"
bk_kit_targets evidence
stamp() {  # KEY=VALUE... over the matching stamp
  {
    echo "status=ok"; echo "kit_digest=$d"; echo "mode=evidence"; echo "options=${bk_opts[*]}"
    echo "targets=${bk_targets[*]}"; echo "toolchain=$(bk_toolchain)"; echo "built_in=/scratch/labkit-bulk-kit-7/build"
    echo "job_id=7"
  } >"$tmp/out/kit-build/stamp"
  local kv
  for kv; do sed -i "s|^${kv%%=*}=.*|$kv|" "$tmp/out/kit-build/stamp"; done
}
refusal() {  # EXPECTED_PART [KEY=VALUE...]
  local want=$1 got
  shift
  stamp "$@"
  got=$(bk_prebuilt_refusal evidence)
  if [[ -z $want && -z $got ]]; then echo "ok   stamp ${*:-as built}: the prebuilt kit is used"
  elif [[ -n $want && $got == *"$want"* ]]; then echo "ok   stamp ${*:-as built}: refused ($got)"
  else fail "stamp ${*:-as built}: got '$got', want '${want:-(used)}'"; fi
}
refusal ""
refusal "the kit build job failed" status=failed
refusal "stale stamp: mode " mode=grade
refusal "stale stamp: options " "options=-Dtests=false"
refusal "stale stamp: targets " "targets=grader/labkit grader/harness/liblabkit_harness.a"
refusal "stale stamp: toolchain " "toolchain=c++ (GCC) 9.0; nvcc 11.0"
refusal "changed since the kit build job" kit_digest=0123
refusal "does not say where" built_in=
LABKIT_BULK_PREBUILT=0 refusal "--no-prebuilt-kit"
rm "$tmp/out/kit-build/stamp"
got=$(bk_prebuilt_refusal evidence)
[[ $got == "no kit build: "* ]] && echo "ok   no stamp: refused ($got)" || fail "no stamp: got '$got'"
bk_kit_targets grade
check '[[ "${bk_targets[*]}" == "grader/labkit grader/harness/liblabkit_harness.a grader/harness/harness-kit-conv grader/harness/harness-kit-map datasets/labkit-gen-dataset" ]]' \
  "grade targets without a test set: the judge, the harness library, the kit harnesses, the test set's generator"

# A kit build configured in one folder, copied (mtimes kept) and moved to another: accepted; a
# file that still names the first folder after the reconfigure: refused.
mkdir -p "$tmp/a/kit" "$tmp/b"
bk_copy_kit "$src" "$tmp/a/kit"
if ! meson setup "$tmp/a/build" "$tmp/a/kit" "${bk_opts[@]}" >"$tmp/setup.log" 2>&1; then
  fail "meson setup: $(tail -n 3 "$tmp/setup.log")"
  exit 1
fi
a=$(cd "$tmp/a" && pwd -P)
stamp "built_in=$a/build"
cp -a "$tmp/a/kit" "$tmp/a/build" "$tmp/b/"
rm -rf "$tmp/b/kit/labs/02-constant-memory"  # a lab not handed in
why=$(bk_relocate "$tmp/b/build" "$tmp/b/kit" "$tmp/relocate.log" 01-restrict-unroll)
rc=$?
check '[[ $rc -eq 0 && -z $why ]] && ! grep -qF "$a" "$tmp/b/build/build.ninja" && grep -qF "$(cd "$tmp/b" && pwd -P)/kit/labs/01-restrict-unroll/kernel.cu" "$tmp/b/build/build.ninja" && ! grep -qF "labs/02-constant-memory" "$tmp/b/build/build.ninja"' \
  "moved build: reconfigured, no path of the first folder left, the lab's kernel.cu its source ${why}"
check '! grep -rqF "$a" "$tmp/b/build/grader/build_paths.cpp" "$tmp/b/build/grader/harness/labs.json" && grep -qF "$(cd "$tmp/b" && pwd -P)/build/grader/harness/labs.json" "$tmp/b/build/grader/build_paths.cpp"' \
  "moved build: build_paths.cpp and labs.json name the new folder only"
echo "built in $a/build" >"$tmp/b/build/grader/stale-note.txt"
why=$(bk_relocate "$tmp/b/build" "$tmp/b/kit" "$tmp/relocate.log" 01-restrict-unroll)
rc=$?
check '[[ $rc -ne 0 && $why == "grader/stale-note.txt still names the kit build"* ]]' "a file naming the first folder: refused ($why)"

# The judge's constants (bk_judge_check): a stand-in grader/labkit whose .rodata names a registry.
judge() {  # REGISTRY_PATH
  mkdir -p "$tmp/b/build/grader"
  printf '#include <stdio.h>\nconst char* const kRegistry = "%s";\nint main(void) { puts(kRegistry); return 0; }\n' "$1" >"$tmp/judge.c"
  ${CC:-cc} -O1 -o "$tmp/b/build/grader/labkit" "$tmp/judge.c"
}
b=$(cd "$tmp/b" && pwd -P)
if command -v "${CC:-cc}" >/dev/null && command -v objcopy >/dev/null; then
  judge "$b/build/grader/harness/labs.json"
  why=$(bk_judge_check "$tmp/b/build")
  rc=$?
  check '[[ $rc -eq 0 && -z $why ]]' "a judge that reads this build's registry: accepted"
  judge "$a/build/grader/harness/labs.json"
  why=$(bk_judge_check "$tmp/b/build")
  rc=$?
  check '[[ $rc -ne 0 && $why == "grader/labkit does not read this task"* ]]' "a judge that reads the kit build's registry: refused ($why)"
else
  echo "skip the judge's constants: no C compiler or objcopy"
fi
exit $((failures > 0))
