#!/usr/bin/env bash
# `labkit bulk submit` without Slurm: checking SUBMISSIONS_DIR (a student, a student one folder
# deeper, and five folders it must skip with their reasons), the files it writes (students.txt,
# skipped.txt, grade.sbatch with every option, kit-build.sbatch, bulk-task.sh, bulk-kit.sh),
# --dry-run, the kit build job submitted before the array and the array waiting for it
# (--dependency=afterany, a fake sbatch), --no-prebuilt-kit, the usage errors (exit 2) and a
# failing sbatch (exit 1). Runs anywhere.
#   usage: test_submit.sh PATH_TO_LABKIT
set -u
labkit=$1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
failures=0
fail() { echo "FAIL $*"; failures=$((failures + 1)); }
check() { if eval "$1"; then echo "ok   $2"; else fail "$2"; fi; }

s=$tmp/subs
mkdir -p "$s/jdoe/labs/03-tiling" "$s/asmith/labkit-main/labs/06-fusion" "$s/a b/labs/03-tiling" \
  "$s/nolabs/src" "$s/unknown/labs/99-mine" "$s/linked/labs"
echo "k" >"$s/jdoe/labs/03-tiling/kernel.cu"
echo "k" >"$s/asmith/labkit-main/labs/06-fusion/kernel.cu"
echo "k" >"$s/a b/labs/03-tiling/kernel.cu"
echo "k" >"$s/unknown/labs/99-mine/kernel.cu"
ln -s "$s/jdoe/labs/03-tiling" "$s/linked/labs/03-tiling"
echo "notes" >"$s/notes.txt"

"$labkit" bulk submit "$s" --out "$tmp/out" --dry-run --max-parallel 2 --exclusive --constraint h100 \
  --partition gpu --account cls --mem 8G --time 00:45:00 >"$tmp/stdout" 2>"$tmp/stderr"
status=$?
check '[[ $status -eq 0 ]]' "dry run: exit 0 ($(head -1 "$tmp/stdout"))"
check 'grep -q "dry run, not submitted" "$tmp/stdout" && grep -qF "KIT_JOB=\$(sbatch --parsable $tmp/out/kit-build.sbatch)" "$tmp/stdout" && grep -qF "sbatch --parsable --dependency=afterany:\$KIT_JOB $tmp/out/grade.sbatch" "$tmp/stdout" && [[ ! -e $tmp/out/job.txt && ! -e $tmp/out/kit-job.txt ]]' \
  "dry run prints the two sbatch commands (kit build, then the array waiting for it) and submits nothing"
check '[[ $(grep -vc "^#" "$tmp/out/students.txt") -eq 2 ]] && grep -q "^0	asmith	$s/asmith/labkit-main/labs	06-fusion$" "$tmp/out/students.txt" && grep -q "^1	jdoe	$s/jdoe/labs	03-tiling$" "$tmp/out/students.txt"' \
  "students.txt: asmith (one folder deeper) and jdoe"
check 'grep -q "^a b	not a usable student id" "$tmp/out/skipped.txt" && grep -q "^nolabs	no labs/ folder" "$tmp/out/skipped.txt" && grep -q "^unknown	no labs/NN-name/kernel.cu of a kit lab" "$tmp/out/skipped.txt" && grep -q "^linked	no labs/NN-name/kernel.cu" "$tmp/out/skipped.txt" && grep -q "^notes.txt	not a folder" "$tmp/out/skipped.txt"' \
  "skipped.txt: a bad id, no labs/, an unknown lab, a symbolic link, a file"
check '[[ $(grep -c "^labkit bulk: skipped" "$tmp/stderr") -eq 5 ]]' "each skipped folder printed with its reason"
sb=$tmp/out/grade.sbatch
for line in "--array=0-1%2" "--gres=gpu:1" "--exclusive" "--constraint=h100" "--partition=gpu" "--account=cls" \
            "--mem=8G" "--time=00:45:00" "--cpus-per-task=4" "--output=$tmp/out/logs/%A_%a.out"; do
  grep -q -- "^#SBATCH $line\( \|$\)" "$sb" || fail "grade.sbatch lacks #SBATCH $line"
done
check 'bash -n "$sb" && grep -q "^export LABKIT_BULK_MODE=.grade." "$sb" && grep -q "^export LABKIT_BULK_PREBUILT=1 " "$sb" && [[ -f $tmp/out/bulk-task.sh && -f $tmp/out/bulk-kit.sh ]] && [[ -d $tmp/out/jdoe && -d $tmp/out/logs ]]' \
  "grade.sbatch: every #SBATCH line, valid bash; bulk-task.sh and bulk-kit.sh copied, folders made"
# The kit build job: the tasks' CPUs, time, memory, partition, account and nodes, no GPU, no array;
# the tasks' environment, line for line.
kb=$tmp/out/kit-build.sbatch
for line in "--cpus-per-task=4" "--constraint=h100" "--partition=gpu" "--account=cls" "--mem=8G" "--time=00:45:00" \
            "--job-name=labkit-grade-kit" "--output=$tmp/out/logs/kit-build_%j.out"; do
  grep -q -- "^#SBATCH $line\( \|$\)" "$kb" || fail "kit-build.sbatch lacks #SBATCH $line"
done
check 'bash -n "$kb" && ! grep -q -- "--gres\|--array\|--exclusive" "$kb" && grep -q "^exec bash .$tmp/out./bulk-kit.sh$" "$kb" && diff <(grep "^export" "$sb") <(grep "^export" "$kb") >/dev/null' \
  "kit-build.sbatch: no GPU, no array, the tasks' environment, runs bulk-kit.sh"

# --resubmit: the students without a complete result (here jdoe, asmith never graded; jdoe then
# given a complete result), from grade.sbatch with its --array line replaced, the "%2" kept.
"$labkit" bulk submit --resubmit "$tmp/out" --dry-run >"$tmp/stdout" 2>&1
check 'grep -q "2 student(s) to grade again (tasks 0,1)" "$tmp/stdout" && grep -q "^#SBATCH --array=0,1%2 " "$tmp/out/resubmit-0.sbatch" && grep -q -- "^#SBATCH --constraint=h100" "$tmp/out/resubmit-0.sbatch"' \
  "--resubmit --dry-run: both students, resubmit-0.sbatch with --array=0,1%2 ($(tail -1 "$tmp/stdout"))"
printf '{"results": [{"lab": {"id": "03-tiling"}, "verdict": "passed", "score": {"total": 2, "max": 2}}]}' >"$tmp/out/jdoe/grade.json"
printf '{"tests": []}' >"$tmp/out/jdoe/results.json"
"$labkit" bulk submit --resubmit "$tmp/out" --dry-run >"$tmp/stdout" 2>&1
check 'grep -q "1 student(s) to grade again (tasks 0)" "$tmp/stdout" && grep -q "^#SBATCH --array=0%2 " "$tmp/out/resubmit-0.sbatch"' \
  "--resubmit: jdoe complete, asmith alone"
# A complete result that holds a kit-error (the kit failed to grade a lab) is graded again.
printf '{"results": [{"lab": {"id": "06-fusion"}, "verdict": "kit-error", "score": {"total": 0, "max": 2}}]}' >"$tmp/out/asmith/grade.json"
printf '{"tests": []}' >"$tmp/out/asmith/results.json"
"$labkit" bulk submit --resubmit "$tmp/out" --dry-run >"$tmp/stdout" 2>&1
check 'grep -q "1 student(s) to grade again (tasks 0)" "$tmp/stdout" && grep -q "kit-error in 06-fusion" "$tmp/stdout" && grep -q "^#SBATCH --array=0%2 " "$tmp/out/resubmit-0.sbatch"' \
  "--resubmit: asmith's kit-error graded again"
printf '{"results": [{"lab": {"id": "06-fusion"}, "verdict": "passed", "score": {"total": 2, "max": 2}}]}' >"$tmp/out/asmith/grade.json"
"$labkit" bulk submit --resubmit "$tmp/out" --dry-run >"$tmp/stdout" 2>&1
check 'grep -q "nothing to resubmit" "$tmp/stdout"' "--resubmit: everyone complete, nothing to resubmit"
rm -f "$tmp"/out/{jdoe,asmith}/{grade,results}.json

"$labkit" bulk submit "$s" --out "$tmp/out2" --dry-run --gres none --task evidence >/dev/null 2>&1
check '! grep -q -- "--gres" "$tmp/out2/grade.sbatch" && grep -q "^export LABKIT_BULK_MODE=.evidence." "$tmp/out2/grade.sbatch"' \
  "--gres none: no gres line; --task evidence"

# Submitting for real (a fake sbatch that logs its arguments and answers job ids 500, 501): the
# kit build job first, then the array with --dependency=afterany on it; job ids kept.
printf '#!/bin/bash\nn=$(wc -l <"%s/sbatch.log" 2>/dev/null || echo 0)\necho "$*" >>"%s/sbatch.log"\necho $((500 + n))\n' "$tmp" "$tmp" >"$tmp/sbatch"
chmod +x "$tmp/sbatch"
"$labkit" bulk submit "$s" --out "$tmp/out6" --sbatch "$tmp/sbatch" >"$tmp/stdout" 2>&1
status=$?
check '[[ $status -eq 0 ]] && [[ $(sed -n 1p "$tmp/sbatch.log") == "--parsable $tmp/out6/kit-build.sbatch" ]] && [[ $(sed -n 2p "$tmp/sbatch.log") == "--parsable --dependency=afterany:500 $tmp/out6/grade.sbatch" ]] && [[ $(cat "$tmp/out6/kit-job.txt") == 500 && $(cat "$tmp/out6/job.txt") == 501 ]] && grep -q "submitted kit build job 500" "$tmp/stdout"' \
  "submit: kit build job 500, then the array 501 with --dependency=afterany:500 ($(tr '\n' ';' <"$tmp/sbatch.log"))"
rm -f "$tmp/sbatch.log"
"$labkit" bulk submit "$s" --out "$tmp/out7" --sbatch "$tmp/sbatch" --no-prebuilt-kit >"$tmp/stdout" 2>&1
status=$?
check '[[ $status -eq 0 && $(wc -l <"$tmp/sbatch.log") -eq 1 ]] && [[ $(cat "$tmp/sbatch.log") == "--parsable $tmp/out7/grade.sbatch" ]] && [[ ! -e $tmp/out7/kit-build.sbatch ]] && grep -q "^export LABKIT_BULK_PREBUILT=0 " "$tmp/out7/grade.sbatch"' \
  "--no-prebuilt-kit: no kit build job, the array alone, LABKIT_BULK_PREBUILT=0"

usage() {  # expected message, then the arguments
  local want=$1; shift
  "$labkit" bulk submit "$@" >"$tmp/stdout" 2>"$tmp/stderr"
  local st=$?
  if [[ $st -eq 2 ]] && grep -q -- "$want" "$tmp/stderr"; then echo "ok   exit 2: $(tail -1 "$tmp/stderr")"
  else fail "submit $*: exit $st, want 2 and '$want': $(cat "$tmp/stderr")"; fi
}
usage "not a folder" "$tmp/nothing" --dry-run
usage "exists and is not empty" "$s" --out "$tmp/out" --dry-run
mkdir -p "$tmp/none/x"
usage "no student folder with labs" "$tmp/none" --out "$tmp/out3" --dry-run
usage "task" "$s" --task bogus --out "$tmp/out4" --dry-run
usage "may not hold spaces" "$s" --out "$tmp/with space" --dry-run

"$labkit" bulk submit "$s" --out "$tmp/out5" --sbatch /bin/false >"$tmp/stdout" 2>"$tmp/stderr"
status=$?
check '[[ $status -eq 1 ]] && grep -q "^labkit bulk: /bin/false --parsable .*exited with code 1" "$tmp/stderr"' \
  "sbatch failing: exit 1, $(grep /bin/false "$tmp/stderr")"
exit $((failures > 0))
