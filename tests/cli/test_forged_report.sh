#!/usr/bin/env bash
# The forged-report lab (tests/labs/forged-static-init: a static initializer prints a full-marks
# report and exits) graded by the judge on this machine, GPU or not: whatever the verdict, it is
# never "passed", never scores, and the exit status is not 0. Without a GPU the judge never
# starts the lab (no-device); with one the lab's exit before its hello is protocol-error.
set -uo pipefail
labkit=$1
python=$2
out=$("$labkit" grade --tests forged-static-init --json 2>/dev/null)
code=$?
"$python" - "$code" "$out" <<'PY'
import json, sys
code, out = int(sys.argv[1]), sys.argv[2]
r = json.loads(out)["results"][0]
print(f"verdict {r['verdict']}, score {r['score']['total']} of {r['score']['max']}, exit {code}")
assert r["verdict"] in ("no-device", "protocol-error"), r["verdict"]
assert r["score"]["total"] == 0 and code != 0
assert "passed" not in r.get("message", "").lower() or r["verdict"] != "passed"
print("ok   the forged report was not believed")
PY
