// grader/judge/lab_spec.h — what a lab's lab.json says, validated.
//
// Contract
//   * lab.json sits beside the lab's skeleton (labs/NN-name/lab.json); the solution
//     (solutions/NN-name/kernel.cu) is graded with the same file. Keys:
//       id                 "03-tiling": must equal the folder name
//       title              one line for reports
//       points             > 0, the lab's weight in the course
//       kind               "conv" (the three-phase conv API) or "map" (the elementwise API)
//       precision          "fp32", "fp16", "tf32" or "any": picks the tolerance (docs/grading.md);
//                          "any" (a lab that may use any arithmetic) gets the loosest, fp16's
//       timed              "op" (conv_forward_gpu alone) or "layer" (prolog + op + epilog)
//       target_speedup     > 1: the speedup over the baseline that earns the full performance part,
//                          on a GPU that targets_by_gpu does not name
//       targets_by_gpu     optional {"<GPU name as CUDA reports it>": {"target_speedup": > 1, and
//                          what `labkit calibrate --write` measured: "solution_speedup",
//                          "solution_low", "solution_high", "batch", "margin", "driver", "date"}}:
//                          the target on that model (the same solution runs 1.07x on an H100 and
//                          1.30x on an H200); target_for() picks it
//       correctness_share  in [0, 1]: the part of `points` a correct result earns by itself
//       evidence           array of PTX patterns (grader/judge/evidence.h), may be empty
//       course_evidence    optional array of PTX patterns: under the course contract (below) they
//                          replace `evidence`, and their hints the evidence hint (apply_contract()):
//                          what the course's rubric accepts where it asks for less than the lab
//                          teaches (09: FP16 arithmetic, scalar __half or paired __half2)
//       evidence_share     optional, in [0, 1], default 0.5: in a graded run a pattern counts only
//                          when the kernels that carry it take at least this share of the GPU time
//                          of the lab's timed calls (grader/judge/executed_evidence.h)
//       host_evidence      optional array: "streams" (>= 2 streams with overlap),
//                          "no_extra_memory" (device memory stays near input + output + mask)
//       hints              optional {"correctness": "...", "performance": "...", "evidence": "..."}
//       map                optional, map labs: {"dimx", "dimy", "niterations"} of the timed workload
//       network_accuracy   optional, conv labs: {"max_drop_points", "images"}: the milestone network
//                          (grader/network/network_run.h) on the first `images` test images may classify at
//                          most max_drop_points percentage points worse with the lab's conv than
//                          with the baseline's; a conv that passes the per-element tolerance but
//                          rounds the same way everywhere (fp16 sums) fails here
//       batch              optional, conv labs: the grading shapes' batch (default 1000; `--batch`
//                          overrides it)
//       speedup_of         optional: "geometric-mean" (default: of the grading shapes' speedups) or
//                          "total" (the baseline's total time over the lab's: conv1 + conv2 time)
//       sanitize           optional: the compute-sanitizer tools of the memory check that every
//                          `labkit grade` runs on the small correctness cases (grader/cli/
//                          memory_check.h): default ["memcheck"]; ["memcheck", "racecheck"] for
//                          labs whose technique is shared memory; any of memcheck, racecheck,
//                          synccheck, initcheck, each once; [] turns the check off for the lab
//       tiers              optional: ascending speedups above 1, the last equal to target_speedup;
//                          the performance part is paid per tier reached (grader/judge/score.h). A tiered
//                          lab has no targets_by_gpu: its tiers are the same on every GPU
//       counters           optional, conv labs: executed-instruction evidence where the GPU's
//                          counters can be read (grader/cli/counter_check.h): an array of {"name",
//                          "metrics": [Nsight Compute metrics, summed], "per_count": multiply-adds
//                          one count stands for (default 1), "min_fraction": the share of the
//                          profiled calls' multiply-adds they must cover (default 0.5, or 0 when
//                          "max_fraction" is given), "max_fraction": the share they may not
//                          exceed (optional), "over": [metrics, summed]: compare with their sum
//                          instead of the multiply-adds (a ratio of two counts, e.g. bank
//                          conflicts over shared-load wavefronts)}
//       contract           optional, conv labs: "general" (default) or "course": the shapes whose
//                          correctness counts (grader/judge/contract.h); `labkit grade --contract` overrides it
//       requires_gpu       optional: {"compute_capability": "8.0", "features": "cp.async"}: the lab
//                          (its skeleton or solution) uses instructions that GPUs older than that
//                          lack; the build leaves its harness out where gpu_arch targets an older
//                          GPU (discover_labs.py), the grade says so on such a GPU (grader/judge/gpu_arch.h)
//   * load() throws LabSpecError with one line naming the file, the key and what was expected.
//     Unknown keys are errors too: a typo ("target_speedups") must not silently fall back.
#pragma once

#include <filesystem>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "grader/judge/contract.h"
#include "grader/judge/evidence.h"
#include "grader/judge/gpu_arch.h"

namespace labkit {

class LabSpecError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

enum class LabKind { conv, map };
enum class Precision { fp32, fp16, tf32, any };
enum class SpeedupOf { geometric_mean, total };
enum class TimedRegion { op, layer };
enum class HostEvidence { streams, no_extra_memory };

const char* to_string(LabKind);
const char* to_string(Precision);
const char* to_string(TimedRegion);
const char* to_string(HostEvidence);
const char* to_string(SpeedupOf);
// "fp32", "fp16", "tf32" or "any", as lab.json spells them; throws std::invalid_argument otherwise.
Precision precision_from_string(const std::string& name);

struct MapWorkload {
  int dimx = 8192, dimy = 8192, niterations = 16;
};

struct NetworkAccuracy {
  double max_drop_points = 0.5;
  int images = 10000;
};

// One GPU model's calibrated target (lab.json's targets_by_gpu).
struct GpuTarget {
  std::string gpu;
  double target_speedup = 0;
  double solution_speedup = 0, solution_low = 0, solution_high = 0, margin = 0;  // 0: not recorded
  int batch = 0;
  std::string driver, date;
};

// The target used on one GPU, and why (for the report: "calibrated for NVIDIA H100 80GB HBM3
// on 2026-11-25 (solution 1.08x)", or "lab.json's default: no calibration for <gpu>").
struct ChosenTarget {
  double target_speedup = 0;
  bool calibrated = false;
  std::string why;
};

// Executed-instruction evidence (the counter check of labkit grade, grader/cli/counter_check.h).
struct CounterEvidence {
  std::string name;                   // "tf32 tensor-core math", for the report
  std::vector<std::string> metrics;   // Nsight Compute metrics, summed over the run's kernels
  double per_count = 1;               // multiply-adds one count stands for
  double min_fraction = 0.5;          // of the multiply-adds of the profiled calls (or of `over`)
  std::optional<double> max_fraction;  // the most the count may reach, as min_fraction reads it
  std::vector<std::string> over;      // the denominator's metrics (summed); empty: the multiply-adds
};

struct LabSpec {
  std::filesystem::path file;
  std::string id, title;
  double points = 0;
  LabKind kind = LabKind::conv;
  Precision precision = Precision::fp32;
  TimedRegion timed = TimedRegion::op;
  double target_speedup = 2;
  std::vector<GpuTarget> targets_by_gpu;
  double correctness_share = 0.5;
  std::vector<evidence::Pattern> evidence;
  std::optional<std::vector<evidence::Pattern>> course_evidence;  // "course_evidence"
  double evidence_share = 0.5;
  std::vector<HostEvidence> host_evidence;
  std::string hint_correctness, hint_performance, hint_evidence;
  MapWorkload map;
  std::optional<NetworkAccuracy> network_accuracy;
  int batch = 1000;
  SpeedupOf speedup_of = SpeedupOf::geometric_mean;
  std::vector<double> tiers;
  // The lab's kernels may use Hopper's arch-specific instructions (wgmma): where the build targets
  // compute capability 9.0, its harness also embeds sm_90a code (grader/harness/meson.build, which
  // reads the key at configure time through discover_labs.py).
  bool arch_specific = false;
  std::optional<GpuRequirement> requires_gpu;  // "requires_gpu": the oldest GPU the lab runs on
  Contract contract = Contract::general;  // "contract": which correctness cases count
  std::vector<std::string> sanitize = {"memcheck"};  // the memory check's tools, in this order
  std::vector<CounterEvidence> counters;             // "counters": executed-instruction evidence

  // The calibrated target of `gpu` (exact name), else target_speedup.
  ChosenTarget target_for(const std::string& gpu) const;
  // Sets `contract` (the one a grade resolved: --contract, else lab.json's). Under "course" with
  // course_evidence, those patterns become `evidence` and their hints `hint_evidence`; true when
  // they did.
  bool apply_contract(Contract c);
};

// Reads and validates FILE. `expected_id`, when given, must equal the "id" key (the folder name).
LabSpec load_lab_spec(const std::filesystem::path& file, const std::string& expected_id = {});

// `labkit calibrate --write` (grader/judge/lab_spec_write.cpp): the file is edited as text, its
// layout kept; targets_by_gpu holds one GPU per line, sorted, and the GPU's line is replaced or
// added (after the top-level target_speedup when the block is new). The result must load as a
// lab.json, else the old text is put back and LabSpecError says why.
void write_gpu_target(const std::filesystem::path& file, const GpuTarget& target);
// Replaces the top-level target_speedup (the target of GPUs without a calibration).
void write_default_target(const std::filesystem::path& file, double target);

}  // namespace labkit
