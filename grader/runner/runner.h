// runner.h — the per-lab grading executable: grader core + one lab's kernel.cu.
//
// Each lab folder (labs/NN-name, solutions/NN-name, tests/labs/name) is built into its own
// executable by grader/runner/meson.build: entry_conv.cpp or entry_map.cpp (by lab.json's kind)
// compiled with the lab's identity as macros, linked with that kernel.cu. A lab that crashes or
// hangs takes down only its own process. The core below never names a lab.
#pragma once

#include <cstdint>
#include <string>

#include "labkit/conv.h"
#include "labkit/grade_result.h"
#include "labkit/lab_spec.h"
#include "labkit/map.h"
#include "labkit/pair_timing.h"

namespace labkit::runner {

// Compiled into each executable (see entry_*.cpp).
struct LabUnderTest {
  const char* id;          // "03-tiling"
  const char* role;        // "lab", "solution" or "test"
  const char* lab_json;    // absolute path of lab.json
  const char* ptx;         // absolute path of the PTX built from kernel.cu
  const char* source;      // kernel.cu, relative to the repository root, for reports
  const char* source_path; // kernel.cu, absolute
  const ConvOps* conv;     // exactly one of conv and map is set
  const MapOps* map;
};

struct Options {
  std::uint64_t seed = 0;
  bool seed_given = false;
  int batch = 1000;
  int random_cases = 3;
  std::string fixtures;          // manifest of the committed fixtures
  std::string data_dir, model_dir;  // the network's test set and model (lab.json network_accuracy)
  StoppingRule stopping;
  bool correctness_only = false;
  bool evidence_only = false;
  double timeout_s = 300;
  // Run by `labkit grade --sanitize` under compute-sanitizer, which slows every kernel 10-100x:
  // the correctness cases only, without CUPTI (the sanitizer owns the device's callbacks), the
  // network run or the map lab's timed-size workload.
  bool under_sanitizer = false;
  // Run by `labkit profile` under Nsight Compute: one side's op on one grading shape, nothing else.
  std::string profile_side;  // "lab" or "baseline"; empty: grade
  int profile_case = 0;
};

// What a profile run ran, printed as JSON for `labkit profile`.
struct ProfiledShape {
  std::string name, shape;
  int shapes = 0;  // how many grading shapes the lab has
};

// Grades correctness, timing and host evidence of a conv or map lab into `result`. Throws only
// for kit errors; the lab's own failures become result.verdict and result.message.
void grade_conv(const LabUnderTest& lab, const LabSpec& spec, const Options& opt, GradeResult& result);
void grade_map(const LabUnderTest& lab, const LabSpec& spec, const Options& opt, GradeResult& result);

// One op on grading shape opt.profile_case, its device inputs ready, between cudaProfilerStart and
// cudaProfilerStop: `ncu --profile-from-start off` collects exactly the kernels of that call.
// Throws std::out_of_range for a shape index past the last.
ProfiledShape profile_conv(const LabUnderTest& lab, const Options& opt);
ProfiledShape profile_map(const LabUnderTest& lab, const LabSpec& spec, const Options& opt);

int main(int argc, char** argv, const LabUnderTest& lab);

}  // namespace labkit::runner
