#!/usr/bin/env python3
"""Runs a grading executable (or `labkit grade`) on a test lab and checks the verdict it reports.

  expect_verdict.py [checks] -- COMMAND...
checks:
  --verdict V            the result's verdict (this or --verdict-in is required)
  --verdict-in V,W       any of these verdicts
  --speedup-max X        a passed grade's speedup is at most X (a cheat earned no speed; other verdicts score no speed)
  --outcome TEXT         some failing case's outcome contains TEXT
  --contract NAME        the result was graded under this correctness contract (general, course)
  --warning TEXT         some failing case that does not count (a warning of the course contract)
                         has an outcome containing TEXT (repeatable)
  --no-warning           no case is a failing warning
  --text TEXT            the message, hint, a case's detail or a sanitizer finding contains TEXT
                         (repeatable: each must be found)
  --evidence-text TEXT   the evidence report (evidence.text, one line a pattern) contains TEXT
  --phase TEXT           a phase of the grade (phases[].phase, where its seconds went) contains TEXT
  --speedup-contains X   the geometric-mean speedup interval, widened by the printed precision
                         of speedups (0.005), contains X
  --twice                run COMMAND twice; the two speedups must agree within 3%
  --score-zero           the result's score total is 0
  --log-absent TEXT      the result's "log" (the lab's own stdout/stderr) does not contain TEXT; a
                         result without "log" counts as absent (repeatable)
  --log-contains TEXT    the result's "log" contains TEXT (a probe ran at all) (repeatable)
  --timeline             the result's streams timeline (grader/tools/timeline.h) holds the lab's recorded
                         layer and the baseline's, each available, each with a kernel, an HtoD and a
                         DtoH copy, every record inside [0, the layer's span]; the lab's on >= 2 streams
  --timeline-name TEXT   a kernel of the lab's timeline is named exactly TEXT (repeatable)
  --file-contains FILE TEXT, --file-lacks FILE TEXT
                         a file the command wrote (its --html page, its --svg picture) does or does
                         not contain TEXT (repeatable)
Checks of what the lab may have done to the machine (the cheat test labs, tests/labs/*):
  --no-process PATTERN   after the run, no process (other than this script and its ancestors) has
                         PATTERN in its command line or name; any found are killed (SIGKILL) and
                         the check fails (repeatable)
  --file-unchanged PATH  PATH has the same sha256 after the run as before it (repeatable)
  --listen PORT          a TCP listener on the host's 127.0.0.1:PORT is open during the run; the
                         check fails if anything connected to it (repeatable)
  --tmp-absent GLOB      after the run no path matches GLOB (e.g. /tmp/name*); matches left from an
                         earlier run are removed before it, and matches after it are removed too
                         (repeatable)
  --plant PATH           before the run, write a small file at PATH (and the folders above it that
                         are missing) for the lab to look for; removed after the run. A PATH that
                         cannot be written is reported and skipped; none at all fails (repeatable)
  --run-timeout S        give COMMAND at most S seconds (default 900); the checks above still run
                         after a command that had to be stopped
Exit: 0 checks passed, 1 a check failed, 77 the command reported no CUDA device (or exited 77
without a result: `labkit grade --sanitize` with no GPU or no compute-sanitizer).
COMMAND gets --json; for `labkit grade` the first result of {"results": [...]} is checked.
"""
import argparse
import glob
import hashlib
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time


def run(command, timeout=900):
    try:
        p = subprocess.run(command + ["--json"], capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        # A grader that never returns (or waits on a pipe a stray process keeps open) is a failure.
        print(f"{' '.join(command)} did not finish within {timeout:g} s")
        sys.exit(1)
    try:
        doc = json.loads(p.stdout)
    except json.JSONDecodeError:
        if p.returncode == 77:
            print(f"skipped: {p.stderr.strip()}")
            sys.exit(77)
        print(f"no JSON from {' '.join(command)} (exit {p.returncode})\nstdout:\n{p.stdout}\nstderr:\n{p.stderr}")
        sys.exit(1)
    result = doc["results"][0] if "results" in doc else doc
    return p.returncode, result, p.stderr


def sha256(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


class Listener:
    """A TCP listener on 127.0.0.1:port for the length of the run; records who connected and what
    they sent."""

    def __init__(self, port):
        self.port = port
        self.connections = []  # (peer, bytes received)
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.sock.bind(("127.0.0.1", port))
        self.sock.listen(16)
        self.sock.settimeout(0.2)
        self.done = threading.Event()
        self.thread = threading.Thread(target=self._accept, daemon=True)
        self.thread.start()

    def _accept(self):
        while not self.done.is_set():
            try:
                conn, peer = self.sock.accept()
            except socket.timeout:
                continue
            except OSError:
                return
            conn.settimeout(1)
            data = b""
            try:
                while len(data) < 4096:
                    chunk = conn.recv(4096)
                    if not chunk:
                        break
                    data += chunk
            except OSError:
                pass
            conn.close()
            self.connections.append((peer, data))

    def close(self):
        self.done.set()
        self.thread.join()
        self.sock.close()


def ancestors():
    pids, pid = set(), os.getpid()
    while pid > 1:
        pids.add(pid)
        try:
            with open(f"/proc/{pid}/stat") as f:
                pid = int(f.read().rsplit(")", 1)[1].split()[1])
        except (OSError, ValueError, IndexError):
            break
    return pids


def processes_matching(pattern):
    """(pid, command line) of every process whose command line or name contains pattern."""
    mine, found = ancestors(), []
    for entry in os.listdir("/proc"):
        if not entry.isdigit() or int(entry) in mine:
            continue
        try:
            with open(f"/proc/{entry}/cmdline", "rb") as f:
                cmdline = f.read().replace(b"\0", b" ").decode(errors="replace").strip()
            with open(f"/proc/{entry}/comm") as f:
                comm = f.read().strip()
        except OSError:
            continue
        if pattern in cmdline or pattern in comm:
            found.append((int(entry), cmdline or comm))
    return found


def remove(path):
    try:
        if os.path.isdir(path) and not os.path.islink(path):
            shutil.rmtree(path)
        else:
            os.remove(path)
    except OSError as e:
        print(f"cannot remove {path}: {e}")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--verdict")
    ap.add_argument("--verdict-in", help="comma-separated verdicts, any of which is right")
    ap.add_argument("--speedup-max", type=float, help="the speedup must not exceed this (a cheat earned nothing)")
    ap.add_argument("--outcome")
    ap.add_argument("--contract")
    ap.add_argument("--warning", action="append", default=[])
    ap.add_argument("--no-warning", action="store_true")
    ap.add_argument("--text", action="append", default=[])
    ap.add_argument("--evidence-text", action="append", default=[],
                    help="the evidence report (one line a pattern) contains TEXT")
    ap.add_argument("--speedup-contains", type=float)
    ap.add_argument("--phase", action="append", default=[], help="a phase of the grade (phases[].phase) contains TEXT")
    ap.add_argument("--twice", action="store_true")
    ap.add_argument("--score-zero", action="store_true")
    ap.add_argument("--log-absent", action="append", default=[])
    ap.add_argument("--log-contains", action="append", default=[])
    ap.add_argument("--timeline", action="store_true")
    ap.add_argument("--timeline-name", action="append", default=[])
    ap.add_argument("--file-contains", action="append", default=[], nargs=2, metavar=("FILE", "TEXT"))
    ap.add_argument("--file-lacks", action="append", default=[], nargs=2, metavar=("FILE", "TEXT"))
    ap.add_argument("--no-process", action="append", default=[])
    ap.add_argument("--file-unchanged", action="append", default=[])
    ap.add_argument("--listen", action="append", default=[], type=int)
    ap.add_argument("--tmp-absent", action="append", default=[])
    ap.add_argument("--plant", action="append", default=[])
    ap.add_argument("--run-timeout", type=float, default=900)
    ap.add_argument("command", nargs=argparse.REMAINDER)
    a = ap.parse_args()
    if not a.verdict and not a.verdict_in:
        ap.error("--verdict or --verdict-in is required")
    allowed = a.verdict_in.split(",") if a.verdict_in else [a.verdict]
    command = a.command[1:] if a.command and a.command[0] == "--" else a.command

    failures = []
    # Before the run: what the lab must leave as it is, and the traps it must not reach.
    sums = {}
    for path in a.file_unchanged:
        try:
            sums[path] = sha256(path)
        except OSError as e:
            failures.append(f"cannot read {path} before the run: {e}")
    for pattern in a.tmp_absent:
        for path in glob.glob(pattern):
            print(f"removing {path}, left by an earlier run")
            remove(path)
    planted = Plants(a.plant, failures)
    listeners = []
    for port in a.listen:
        try:
            listeners.append(Listener(port))
        except OSError as e:
            failures.append(f"cannot listen on 127.0.0.1:{port}: {e}")

    try:
        code, r, err = run(command, a.run_timeout)
    except SystemExit:  # no result (skipped, or no JSON): still check and clean up the machine
        for listener in listeners:
            listener.close()
        planted.remove()
        after_run(a, sums, listeners, failures)
        for f in failures:
            print("FAILED:", f)
        if failures:
            sys.exit(1)
        raise
    for listener in listeners:
        listener.close()
    planted.remove()
    after_run(a, sums, listeners, failures)
    if r.get("verdict") == "no-device":
        # What the lab did before it found no device (a static initializer) still counts.
        for f in failures:
            print("FAILED:", f)
        print("no CUDA device: skipped" if not failures else "no CUDA device, but the checks above failed")
        sys.exit(1 if failures else 77)
    print(json.dumps(r, indent=2)[:6000])
    if r.get("verdict") not in allowed:
        failures.append(f"verdict {r.get('verdict')!r}, expected {' or '.join(allowed)}")
    expected_code = 0 if r.get("verdict") == "passed" else 1
    if code != expected_code:
        failures.append(f"exit code {code}, expected {expected_code}")
    cases = r.get("cases", [])
    if a.outcome and not any(a.outcome in c.get("outcome", "") for c in cases if not c.get("passed")):
        failures.append(f"no failing case with outcome containing {a.outcome!r}")
    if a.contract and r.get("contract", {}).get("name") != a.contract:
        failures.append(f"graded under contract {r.get('contract', {}).get('name')!r}, expected {a.contract!r}")
    warnings = [c for c in cases if not c.get("passed") and not c.get("counts", True)]
    for text in a.warning:
        if not any(text in c.get("outcome", "") for c in warnings):
            failures.append(f"no warning (a failing case that does not count) with outcome containing {text!r}")
    if a.no_warning and warnings:
        failures.append(f"{len(warnings)} warning(s), expected none: first {warnings[0].get('name')!r}")
    texts = [r.get("message", ""), r.get("hint", "")] + [c.get("detail", "") for c in cases]
    texts.append(json.dumps(r.get("sanitizer", {})))
    for text in a.text:
        if not any(text in t for t in texts):
            failures.append(f"no message, hint, case detail or sanitizer finding contains {text!r}")
    phases = [p.get("phase", "") for p in r.get("phases", [])]
    for text in a.phase:
        if not any(text in p for p in phases):
            failures.append(f"no phase of the grade contains {text!r}: {phases}")
    evidence_text = r.get("evidence", {}).get("text", "")
    for text in a.evidence_text:
        if text not in evidence_text:
            failures.append(f"the evidence report does not contain {text!r}")
    if r.get("verdict") != "passed" and r.get("score", {}).get("total", 0) >= r.get("score", {}).get("max", 1) > 0:
        failures.append("a failed lab got full marks")
    if not r.get("score", {}).get("max", 0) > 0:
        failures.append("the result has no maximum score: a crashed or hung lab must still count its points")
    timing = r.get("timing", {})
    if a.speedup_contains is not None:
        lo, hi = timing.get("speedup_low", 0), timing.get("speedup_high", 0)
        # Two buffers of the same kernel can differ by a real 0.03% (measured): the interval is
        # widened by the precision speedups are printed with.
        if not lo - 0.005 <= a.speedup_contains <= hi + 0.005:
            failures.append(f"speedup interval [{lo}, {hi}] does not contain {a.speedup_contains}")
    # A speedup the grade does not believe (timing-implausible, hidden-work: 0 performance points)
    # earned nothing, whatever it reads; on a node shared with other grades it can read high.
    if a.speedup_max is not None and r.get("verdict") == "passed" and timing.get("speedup", 0) > a.speedup_max:
        failures.append(f"speedup {timing.get('speedup')} above {a.speedup_max}: the cheat earned speed")
    if a.score_zero and r.get("score", {}).get("total", 0) != 0:
        failures.append(f"score {r['score']['total']}, expected 0")
    log = r.get("log", "")
    for text in a.log_absent:
        if text in log:
            failures.append(f"the lab's log contains {text!r}")
    for text in a.log_contains:
        if text not in log:
            failures.append(f"the lab's log does not contain {text!r}")
    if a.timeline or a.timeline_name:
        check_timeline(r, a, failures)
    for path, text in a.file_contains + a.file_lacks:
        try:
            content = open(path, encoding="utf-8").read()
        except OSError as e:
            failures.append(f"cannot read {path}: {e}")
            continue
        if [path, text] in a.file_contains and text not in content:
            failures.append(f"{path} does not contain {text!r}")
        if [path, text] in a.file_lacks and text in content:
            failures.append(f"{path} contains {text!r}")
    if a.twice:
        _, r2, _ = run(command, a.run_timeout)
        s1, s2 = timing.get("speedup", 0), r2.get("timing", {}).get("speedup", 0)
        print(f"speedups of two runs: {s1:.4f} and {s2:.4f}")
        if not (s1 > 0 and abs(s2 / s1 - 1) <= 0.03):
            failures.append(f"two runs disagree: {s1:.4f} vs {s2:.4f} (more than 3%)")
    for f in failures:
        print("FAILED:", f)
    sys.exit(1 if failures else 0)


def check_timeline(r, a, failures):
    """--timeline and --timeline-name: the recorded layers the grade keeps for its picture."""
    sides = {t.get("side"): t for t in r.get("timeline", [])}
    if a.timeline:
        if sorted(sides) != ["baseline", "lab"]:
            failures.append(f"timeline sides {sorted(sides)}, expected baseline and lab")
        for side, t in sides.items():
            records, span = t.get("records", []), t.get("span_ms", 0)
            if not t.get("available"):
                failures.append(f"the {side}'s timeline was not recorded: {t.get('why')!r}")
                continue
            kinds = {x.get("kind") for x in records}
            if not {"kernel", "HtoD", "DtoH"} <= kinds:
                failures.append(f"the {side}'s timeline has kinds {sorted(kinds)}: no kernel, HtoD or DtoH")
            outside = [x for x in records if not 0 <= x["start_ms"] <= x["end_ms"] <= span + 1e-9]
            if outside:
                failures.append(f"the {side}'s timeline: {len(outside)} record(s) outside [0, {span}] ms: {outside[0]}")
        lab_streams = {x.get("stream") for x in sides.get("lab", {}).get("records", []) if x.get("kind") != "memset"}
        if len(lab_streams) < 2:
            failures.append(f"the lab's timeline ran on streams {sorted(lab_streams)}: expected 2 or more")
    names = {x.get("name") for x in sides.get("lab", {}).get("records", []) if x.get("kind") == "kernel"}
    for name in a.timeline_name:
        if name not in names:
            failures.append(f"no kernel of the lab's timeline is named {name!r} (names: {sorted(names)[:5]})")


class Plants:
    """Files written for the lab to look for (outside what its sandbox shows), with the folders
    made for them; remove() takes away exactly those."""

    def __init__(self, paths, failures):
        self.files, self.dirs = [], []
        for path in paths:
            path = os.path.abspath(path)
            missing = []
            d = os.path.dirname(path)
            while not os.path.isdir(d):
                missing.append(d)
                d = os.path.dirname(d)
            try:
                for d in reversed(missing):
                    os.mkdir(d)
                    self.dirs.append(d)
                with open(path, "w") as f:
                    f.write("labkit-probe: planted outside the sandbox's allow-list\n")
                self.files.append(path)
            except OSError as e:
                print(f"cannot plant {path} ({e}): not checked there")
        if paths and not self.files:
            failures.append("none of the --plant files could be written")

    def remove(self):
        for path in self.files:
            remove(path)
        for d in reversed(self.dirs):
            remove(d)
        self.files, self.dirs = [], []


def after_run(a, sums, listeners, failures):
    """The checks of what the run did to this machine; they run before the result is looked at, so
    that a skipped or failed grade still cleans up what the lab left behind."""
    for path, before in sums.items():
        try:
            now = sha256(path)
        except OSError as e:
            failures.append(f"cannot read {path} after the run: {e}")
            continue
        if now != before:
            failures.append(f"{path} changed during the run (sha256 {before} -> {now})")
    for listener in listeners:
        for peer, data in listener.connections:
            failures.append(f"something connected to 127.0.0.1:{listener.port} from {peer[0]}:{peer[1]} "
                            f"and sent {data[:80]!r}")
    for pattern in a.no_process:
        # The sandbox's processes end with it; give a slow teardown two seconds.
        deadline = time.monotonic() + 2
        while (left := processes_matching(pattern)) and time.monotonic() < deadline:
            time.sleep(0.1)
        for pid, cmdline in left:
            failures.append(f"process {pid} ({cmdline}) outlived the grade")
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass
    for pattern in a.tmp_absent:
        for path in glob.glob(pattern):
            failures.append(f"{path} exists after the run")
            remove(path)


main()
