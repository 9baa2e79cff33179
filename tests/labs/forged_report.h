// forged_report.h — what the forged-* test labs (tests/labs/forged-*) print: a complete,
// full-marks grading report in the exact JSON form `labkit grade --json` used to read back from a
// lab's process (grader/judge/grade_result.cpp, to_json), written with write(2) so no stdio
// buffer of the kit's can reorder or drop it. Not a lab: this folder has no kernel.cu.
//
// A student who read the kit's source could write all of this into their kernel.cu; the test
// labs share it so that the three of them forge the same report.
#pragma once

#include <unistd.h>

#include <cerrno>
#include <string>

namespace test_lab {

inline std::string replace_all(std::string s, const std::string& from, const std::string& to) {
  for (std::size_t at = s.find(from); at != std::string::npos; at = s.find(from, at + to.size()))
    s.replace(at, from.size(), to);
  return s;
}

// The report, for the lab `id` (its lab.json's title and points), role "test" (a student's lab
// would say "lab").
inline std::string forged_report(const std::string& id, const std::string& title, int points) {
  std::string r = R"JSON({
  "lab": {"id": "@ID@", "title": "@TITLE@", "role": "test", "kind": "conv", "precision": "fp32",
          "timed": "op", "kernel": "tests/labs/@ID@/kernel.cu"},
  "seed": "13830412386212270001",
  "batch": 1000,
  "device": {"name": "NVIDIA H200", "driver": "580.82", "peak_sm_clock_mhz": 1980, "max_sm_clock_mhz": 1980},
  "verdict": "passed",
  "message": "Correct on every case; speedup 3.41x over the baseline (target 1.50x).",
  "hint": "",
  "tolerance": "|out - ref| <= 1e-5 * (n + 4) * sum|x*w| + 1e-30 (n = C*K*K of each case)",
  "cases": [
    {"name": "ece408-conv1-b2", "origin": "fixture", "shape": "B=2 M=4 C=1 H=86 W=86 K=7", "passed": true,
     "outcome": "ok", "detail": "", "worst": 0.012},
    {"name": "ece408-conv2-b2", "origin": "fixture", "shape": "B=2 M=16 C=4 H=40 W=40 K=7", "passed": true,
     "outcome": "ok", "detail": "", "worst": 0.017},
    {"name": "random-1", "origin": "random", "shape": "B=3 M=11 C=2 H=41 W=17 K=5", "passed": true,
     "outcome": "ok", "detail": "", "worst": 0.021},
    {"name": "conv1 B=1000", "origin": "grading", "shape": "B=1000 M=4 C=1 H=86 W=86 K=7", "passed": true,
     "outcome": "ok", "detail": "", "worst": 0.009},
    {"name": "conv2 B=1000", "origin": "grading", "shape": "B=1000 M=16 C=4 H=40 W=40 K=7", "passed": true,
     "outcome": "ok", "detail": "", "worst": 0.014}
  ],
  "timing": {"measured": true, "shapes": [
      {"name": "conv1 B=1000", "shape": "B=1000 M=4 C=1 H=86 W=86 K=7", "baseline_ms": 0.5012, "lab_ms": 0.1493,
       "speedup": 3.357, "speedup_low": 3.341, "speedup_high": 3.372, "samples": 24, "noise": 0.0046,
       "converged": true, "hidden_work": false, "lab_extra_host_ms": 0.0, "sm_clock_mhz": 1980},
      {"name": "conv2 B=1000", "shape": "B=1000 M=16 C=4 H=40 W=40 K=7", "baseline_ms": 1.9110, "lab_ms": 0.5533,
       "speedup": 3.454, "speedup_low": 3.437, "speedup_high": 3.470, "samples": 21, "noise": 0.0048,
       "converged": true, "hidden_work": false, "lab_extra_host_ms": 0.0, "sm_clock_mhz": 1980}],
    "speedup": 3.405, "speedup_low": 3.389, "speedup_high": 3.421, "target_speedup": 1.5},
  "evidence": {"ok": true, "kernels": ["_Z11conv_kernelPfPKfS1_N6labkit9ConvShapeE"], "patterns": [], "text": "",
               "host": []},
  "score": {"total": @POINTS@, "max": @POINTS@, "lines": [
      {"item": "correctness", "points": @HALF@, "max": @HALF@, "why": "correct on every case: 50% of the points"},
      {"item": "performance", "points": @HALF@, "max": @HALF@, "why": "speedup 3.41x reaches the target 1.50x: full"}]},
  "seconds": 7.4,
  "exit_code": 0
}
)JSON";
  r = replace_all(r, "@ID@", id);
  r = replace_all(r, "@TITLE@", title);
  r = replace_all(r, "@POINTS@", std::to_string(points));
  return replace_all(r, "@HALF@", std::to_string(points / 2.0));
}

// All of `text` to `fd`, past short writes and EINTR.
inline void write_all(int fd, const std::string& text) {
  std::size_t done = 0;
  while (done < text.size()) {
    const ssize_t n = ::write(fd, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;
    done += std::size_t(n);
  }
}

}  // namespace test_lab
