// labkit/lab_spec.h — what a lab's lab.json says, validated.
//
// Contract
//   * lab.json sits beside the lab's skeleton (labs/NN-name/lab.json); the solution
//     (solutions/NN-name/kernel.cu) is graded with the same file. Keys:
//       id                 "03-tiling": must equal the folder name
//       title              one line for reports
//       points             > 0, the lab's weight in the course
//       kind               "conv" (the three-phase conv API) or "map" (the elementwise API)
//       precision          "fp32" or "fp16": picks the tolerance (docs/grading.md)
//       timed              "op" (conv_forward_gpu alone) or "layer" (prolog + op + epilog)
//       target_speedup     > 1: the speedup over the baseline that earns the full performance part
//       correctness_share  in [0, 1]: the part of `points` a correct result earns by itself
//       evidence           array of PTX patterns (labkit/evidence.h), may be empty
//       host_evidence      optional array: "streams" (>= 2 streams with overlap),
//                          "no_extra_memory" (device memory stays near input + output + mask)
//       hints              optional {"correctness": "...", "performance": "...", "evidence": "..."}
//       map                optional, map labs: {"dimx", "dimy", "niterations"} of the timed workload
//       network_accuracy   optional, conv labs: {"max_drop_points", "images"}: the milestone network
//                          (labkit/network_run.h) on the first `images` test images may classify at
//                          most max_drop_points percentage points worse with the lab's conv than
//                          with the baseline's; a conv that passes the per-element tolerance but
//                          rounds the same way everywhere (fp16 sums) fails here
//   * load() throws LabSpecError with one line naming the file, the key and what was expected.
//     Unknown keys are errors too: a typo ("target_speedups") must not silently fall back.
#pragma once

#include <filesystem>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "labkit/evidence.h"

namespace labkit {

class LabSpecError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

enum class LabKind { conv, map };
enum class Precision { fp32, fp16 };
enum class TimedRegion { op, layer };
enum class HostEvidence { streams, no_extra_memory };

const char* to_string(LabKind);
const char* to_string(Precision);
const char* to_string(TimedRegion);
const char* to_string(HostEvidence);

struct MapWorkload {
  int dimx = 8192, dimy = 8192, niterations = 16;
};

struct NetworkAccuracy {
  double max_drop_points = 0.5;
  int images = 10000;
};

struct LabSpec {
  std::filesystem::path file;
  std::string id, title;
  double points = 0;
  LabKind kind = LabKind::conv;
  Precision precision = Precision::fp32;
  TimedRegion timed = TimedRegion::op;
  double target_speedup = 2;
  double correctness_share = 0.5;
  std::vector<evidence::Pattern> evidence;
  std::vector<HostEvidence> host_evidence;
  std::string hint_correctness, hint_performance, hint_evidence;
  MapWorkload map;
  std::optional<NetworkAccuracy> network_accuracy;
};

// Reads and validates FILE. `expected_id`, when given, must equal the "id" key (the folder name).
LabSpec load_lab_spec(const std::filesystem::path& file, const std::string& expected_id = {});

}  // namespace labkit
