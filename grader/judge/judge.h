// grader/judge/judge.h — grading one lab: the trusted side of the boundary (docs/architecture.md).
//
// Contract
//   * judge_lab() owns the seed, the cases, the expected outputs, the comparison, the timing
//     statistics, the evidence, the score and the verdict. The lab's code runs only in its
//     harness (grader/judge/session.h), in the chosen sandbox; no student code is linked into or loaded
//     by the process that calls this.
//   * Order: lab.json and the PTX evidence; then, if there is a device, the expected outputs of
//     every correctness case and the baseline's clean times, all before the lab's process starts
//     (nothing the lab does to the GPU can touch them); then the lab: correctness cases, the
//     network accuracy case, timed pairs with fresh data per call, run-time evidence; then the
//     baseline's clean times again with the lab's process gone.
//   * Returns the filled GradeResult; the lab's failures are its verdict. Throws only when the
//     kit itself fails (the caller reports kit-error).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "grader/judge/contract.h"
#include "grader/judge/grade_result.h"
#include "grader/judge/pair_timing.h"
#include "grader/judge/sandbox.h"
#include "grader/judge/session.h"

namespace labkit::judge {

struct LabUnderTest {
  std::string id;          // "03-tiling"
  std::string role;        // "lab", "solution" or "test"
  std::string lab_json;    // absolute path of lab.json
  std::string ptx;         // the PTX built from kernel.cu
  std::string source;      // kernel.cu, relative to the repository root, for reports
  std::string source_path; // kernel.cu, absolute
  std::string harness;     // the lab's harness executable
  std::string unbuilt;     // why the build has no harness for it ("needs compute capability 8.0 ..."), or ""
};

struct Options {
  std::uint64_t seed = 0;
  bool seed_given = false;
  int batch = 0;  // of the grading shapes; 0: the lab's (lab.json "batch", else 1000)
  int random_cases = 3;
  std::string fixtures;             // manifest of the correctness fixtures
  std::string data_dir, model_dir;  // the network's test set and model (lab.json network_accuracy)
  StoppingRule stopping;
  bool correctness_only = false;
  bool evidence_only = false;
  double timeout_s = 300;
  sandbox::Mode sandbox = sandbox::Mode::bubblewrap;
  sandbox::Probe probe;                  // bubblewrap as found (when sandbox is bubblewrap)
  std::vector<std::string> hide;         // folders the lab must not see (kit, build, fixtures, data)
  std::vector<std::string> wrapper;      // e.g. compute-sanitizer and its options (labkit grade --sanitize)
  bool under_sanitizer = false;          // correctness cases only, no CUPTI, no network run
  std::optional<Contract> contract;      // --contract; unset: the lab's (lab.json "contract")
  // The memory check of every grade (grader/cli/memory_check.h) runs compute-sanitizer inside the
  // sandbox: its folders shown read-only there (sandbox::Policy::read_only_extra), its log pipe
  // handed to the lab's process, and how that process ended written to *session_end.
  std::vector<std::string> show;
  std::vector<HarnessProcess::ChildFd> extra_fds;
  SessionEnd* session_end = nullptr;
  double close_wait_s = 5;               // after bye, before the lab's process is killed
};

GradeResult judge_lab(const LabUnderTest& lab, const Options& options);

// This build's source and build trees, its data and model folders and $HOME: what a lab's
// sandbox hides by default.
std::vector<std::string> kit_paths_to_hide();

// The kit's own harness of this kind ("conv", "map": the baseline behind the lab API, no student
// code in it), in this build's tree. Grading times the baseline in it; `labkit report` runs the
// baseline's network row through it, so that row pays the lab path's costs as a lab's row does.
std::string kit_harness(const std::string& kind);

}  // namespace labkit::judge
