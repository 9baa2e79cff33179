// grader/judge/grade_result.h — everything one grading run found, and its JSON form.
//
// Contract
//   * A per-lab runner fills a GradeResult and prints it (text, or JSON with --json); `labkit
//     grade` reads that JSON back from the child process, so the JSON is the interface between
//     the two and report.h formats text from the JSON alone.
//   * verdict is one of the names below; exit_code follows it (0 passed, 1 any graded failure,
//     77 no device, 99 kit error). "passed" means correct, with the technique's evidence and
//     honest timing; the score may still be partial (speedup below target).
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "grader/judge/evidence.h"
#include "grader/judge/lab_spec.h"
#include "grader/judge/roofline.h"
#include "grader/judge/score.h"
#include "grader/tools/timeline.h"

namespace labkit {

namespace verdict {
inline constexpr const char* kPassed = "passed";
inline constexpr const char* kIncorrect = "incorrect";
inline constexpr const char* kMissingEvidence = "missing-evidence";
inline constexpr const char* kHiddenWork = "hidden-work";
inline constexpr const char* kCudaError = "cuda-error";
inline constexpr const char* kLabError = "lab-error";   // the lab threw (not a CUDA error)
inline constexpr const char* kTimeout = "timeout";
inline constexpr const char* kCrashed = "crashed";
inline constexpr const char* kNoDevice = "no-device";
inline constexpr const char* kKitError = "kit-error";
inline constexpr const char* kSanitizerError = "sanitizer-error";  // `labkit grade --sanitize` found errors
// The trust boundary's verdicts (docs/grading.md, "What the judge does not believe").
inline constexpr const char* kProtocolError = "protocol-error";        // the harness broke the channel or exited early
inline constexpr const char* kTimingImplausible = "timing-implausible"; // a time the judge's own clock or physics rules out
inline constexpr const char* kInputModified = "input-modified";        // the input or mask changed during a call
inline constexpr const char* kOutOfBounds = "out-of-bounds";           // a kit guard region after a buffer changed
int exit_code(const std::string& verdict);

// Hints for verdicts that two places reach (the runner's watchdog and `labkit grade`'s timeout;
// the runner's crash handler and a child killed by a signal).
inline constexpr const char* kNeverReturnsHint =
    "A kernel that never finishes: a loop whose exit condition is never met, or a "
    "__syncthreads() inside a branch that some threads of the block skip.";
inline constexpr const char* kHostSegfaultHint =
    "A segmentation fault in host code: a device pointer dereferenced on the host, or a host "
    "array indexed past its end.";
}  // namespace verdict

struct CaseReport {
  std::string name;    // "k3-c3-m17-b1", "random-1", "grading conv1"
  std::string origin;  // "fixture", "random", "grading"
  std::string shape;   // to_string(shape) or "dimx=... dimy=... niterations=..."
  bool passed = false;
  std::string outcome; // check::to_string(Outcome) or what stopped the case
  std::string detail;  // check::Result::describe(), several lines
  double worst = 0;    // worst |err| / allowed
  // Under the "course" contract (grader/judge/contract.h) a general shape's failure is a warning: shown,
  // not counted.
  bool warning_only = false;
};

struct ShapeTiming {
  std::string name, shape;
  double base_ms = 0, lab_ms = 0;
  double speedup = 0, low = 0, high = 0;
  int samples = 0;
  double noise = 0;
  bool converged = false;
  bool hidden_work = false;
  double lab_extra_host_ms = 0;
  int sm_clock_mhz = 0;  // 0: unknown
  double gpu_busy_ms = 0;  // an op's timed call: the GPU time CUPTI recorded in it (mean); 0: not traced
  // The judge's bounds on the lab's reported time (0 where not measured): its own clock around the
  // timed request less the round trip of an empty one and the same
  // overhead measured with the kit's own conv in a harness (the context switch between processes), the shape's physical floor, and the
  // baseline's median with no lab process alive.
  double lab_wall_ms = 0, round_trip_ms = 0, floor_ms = 0, base_clean_ms = 0;
  double overhead_ms = 0;        // the kit's, beside the lab during the pairs (KitBaseline::overhead_beside)
  double overhead_clean_ms = 0;  // the kit's before the lab's process started
  // The baseline's median beside the lab (during the pairs, the lab stopped) over its clean median
  // (no lab process alive), and the most that check_interference allows (grader/judge/
  // timing_checks.h): the honest spread of this ratio is what the allowance must come from.
  double base_beside_ms = 0, base_beside_over_clean = 0, interference_limit = 0;
  // Every pair's two times (ms), in the order timed: what the median and the interval came from,
  // so an instructor can audit a speedup and see a drift or a bimodal side.
  std::vector<double> base_samples_ms{}, lab_samples_ms{};
  // The lab's median against the device's peaks (grader/judge/roofline.h); absent for Layer Time,
  // whose host copies no device peak bounds.
  std::optional<roofline::Roofline> roofline{};
};

// How the baseline's samples of the pairs were kept from the lab (grader/judge/timing_checks.h):
// every process of the lab stopped around each one, the GPU drained before it
// (grader/judge/gpu_drain.h).
struct StillReport {
  bool paused = false;            // the lab was stopped for the baseline's samples
  int samples = 0;                // baseline samples taken with the lab stopped
  int drained = 0;                // of them, those whose first probe found the GPU busy
  int capped = 0;                 // those still busy when the drain gave up
  double longest_drain_ms = 0;
  double idle_probe_ms = 0;       // the probe with nothing else on the GPU, before the lab started
  double settled_ms = 0, cap_ms = 0;  // the drain's rule
  double longest_stop_ms = 0;     // from the first SIGSTOP to every process seen stopped
  std::size_t max_processes = 0;  // the most processes of the lab one pause stopped
};

struct HostEvidenceReport {
  std::string name;    // "streams", "no_extra_memory"
  bool ok = false;
  std::string detail;
};

struct GradeResult {
  // What was graded.
  std::string id, title, role, kind, precision, timed_region;  // timed_region: "op" or "layer"
  std::string kernel_source;
  std::uint64_t seed = 0;
  int batch = 0;
  // Where.
  std::string device, driver;
  int peak_sm_clock_mhz = 0, max_sm_clock_mhz = 0;
  // Findings.
  std::string verdict = verdict::kKitError;
  std::string message;  // one paragraph: what happened
  std::string hint;     // what to do next
  std::string tolerance;
  std::string contract = "general";  // which cases count (grader/judge/contract.h)
  std::string contract_note;         // under "course": the general shapes that fail, and why
  std::vector<CaseReport> cases;
  std::vector<ShapeTiming> timing;
  bool timed = false;
  double speedup = 0, speedup_low = 0, speedup_high = 0;  // over the shapes, as speedup_of says
  std::string speedup_of = "geometric-mean";  // or "total": the baseline's summed time over the lab's
  double target_speedup = 0;
  std::optional<roofline::Peaks> peaks;  // the device's, where a shape got a roofline
  std::string target_source;  // which target and why: "calibrated for <GPU> ...", or the default
  evidence::Report evidence;
  std::vector<HostEvidenceReport> host_evidence;
  // The streams evidence's recorded layer, the lab's and the baseline's (grader/tools/timeline.h): what
  // the grade page and the SVG beside the terminal report draw. Empty for other labs.
  std::vector<timeline::Timeline> timelines;
  StillReport still;
  Score score;
  std::string sandbox;  // "bubblewrap 0.8.0 (...)" or "none": how the lab's code was confined
  std::string log;      // the lab's own stdout/stderr, cut: shown, never parsed
  double seconds = 0;
  // Where those seconds went, in the order the judge spent them (name, seconds): what an
  // instructor looks at when grading a class takes too long.
  std::vector<std::pair<std::string, double>> phases;
  int exit_code = 99;
};

nlohmann::json to_json(const GradeResult& r);

}  // namespace labkit
