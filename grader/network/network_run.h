// grader/network/network_run.h — one run of the milestone program: load the test set and the model, run
// the network (reference/network.h) on the first `batch` images with a given conv, and measure
// Op Time 1, Op Time 2, Total Execution Time and Accuracy (design.md section 7).
//
// Contract
//   * The two conv layers run through a ConvBackend: a lab's three phases on the GPU (a lab, a
//     solution, the baseline, cuDNN), or the CPU reference (double accumulation, rounded to float).
//     Everything else (ReLU, pooling, FC, argmax, accuracy) is the same CPU code for every backend,
//     so two backends whose predictions differ differ in their convs.
//   * Op Time k (GPU): CUDA events around conv_forward_gpu of layer k, L2 flushed before it.
//     `first_ms` is the network's own call, the one whose output is used. Then, after the program
//     is done, the layer is set up again and `op_repeats` more calls are timed the same way;
//     `op_ms` is their median (the first call when op_repeats is 0). CPU backend: the host clock
//     around the reference conv, one call.
//   * Layer time k: host clock around prolog + op + epilog of the network's own call (a lab's: the
//     judge's clock around its three requests). Beside it, disjoint: wait_ms (start-up the layer
//     waited for) and boundary_ms (moving and checking its tensors outside those requests).
//   * Total Execution Time: host clock from `program_start` (taken by the caller at the top of
//     main) until the accuracy is known: loading the data and the model, CUDA start-up, both
//     layers and the CPU layers; the op-time repeats come after it and are not in it.
//   * A conv output holding NaN or inf is counted (`nonfinite`) and the run goes on; the accuracy
//     shows the damage. A lab that throws (a CUDA error) stops the run: run_network rethrows.
//   * Data problems (missing or malformed files, batch larger than the set) throw
//     std::runtime_error with one line naming the file and what was expected.
#pragma once

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "labkit/conv.h"

namespace labkit::network {

struct LayerTiming;

// One phase of a lab harness's start-up, in milliseconds of the host clock (labkit-network's run_lab).
struct StartupPhase {
  std::string name;
  double ms = 0;
};

// A conv layer run elsewhere: a lab's conv through its harness (the judge's side runs it, checks
// its output and times it; grader/judge/network_case.h). Fills `output` and `timing`.
using RemoteConv = std::function<void(const ConvShape& shape, std::span<const float> input,
                                      std::span<const float> mask, std::span<float> output, LayerTiming& timing)>;

struct ConvBackend {
  std::string name;              // "baseline", "06-fusion (solution)", "cpu-reference", "cudnn"
  const ConvOps* gpu = nullptr;  // the judge's own GPU code (baseline, cuDNN); nullptr: see remote
  RemoteConv remote;             // a lab's conv; neither set: the CPU reference
  std::string precision = "fp32";  // its precision class (lab.json "precision"), for its roofline
  // A remote conv's harness start-up, phase by phase (RunResult::startup_ms), asked once the run
  // is done; empty: none to report.
  std::function<std::vector<StartupPhase>()> startup;
};

struct RunOptions {
  int batch = 100;
  std::filesystem::path data_dir;   // holds t10k-images-idx3-ubyte and t10k-labels-idx1-ubyte
  std::filesystem::path model_dir;  // holds the six .npy files of reference/network.h
  int op_repeats = 5;
  std::chrono::steady_clock::time_point program_start = std::chrono::steady_clock::now();
  // With a remote conv: after the network, `op_repeats` calls on fresh inputs of each layer's
  // shape and range (the judge checks each one); their median is the Op Time.
  std::function<void(const ConvShape&, float lo, float hi, int repeats, LayerTiming&)> remote_repeats;
};

struct LayerTiming {
  double op_ms = 0;              // the Op Time printed in tables
  double first_ms = 0;           // the network's own call
  std::vector<double> samples_ms;  // the repeats
  double layer_ms = 0;           // prolog + op + epilog of the network's own call
  // Host clock, beside layer_ms and disjoint from it, for "Where the Total Execution Time went":
  double wait_ms = 0;      // before the layer's first request or prolog: waiting for CUDA's start-up, the
                           // lab's harness (its sandbox, CUDA and pinned arrays) and the host arrays
  double boundary_ms = 0;  // outside the layer's requests: the tensors copied into the harness's
                           // shared-memory file and the output read back, digested and checked (the
                           // lab path), or the scan of the output for NaN/inf (in-process)
  std::size_t nonfinite = 0;     // NaN or inf elements in the layer's output
  double floor_ms = 0;           // the shape's physical floor on this GPU, where the judge computed
                                 // it (a lab's conv, judge/remote.h floor_ms); 0: not computed
  double roofline_ms = 0;        // the layer's roofline floor on this GPU at the backend's precision
                                 // class (grader/judge/roofline.h): the teaching limit of "% of floor";
                                 // 0: not on a GPU
  std::string roofline_bound;    // which bound decides it (roofline::to_string(Bound))
};

struct RunResult {
  std::string backend;
  std::string precision = "fp32";  // the backend's precision class (files before it: fp32 floors)
  int batch = 0;
  std::string data_source, data_checksum;  // the whole test set's checksum (grader/network/dataset.h)
  std::string model_dir;
  LayerTiming conv[2];
  double total_s = 0;      // Total Execution Time
  double load_s = 0;       // of which: reading the test set and the model
  double cpu_layers_s = 0; // of which: ReLU, pooling, FC, argmax on the CPU
  int correct = 0;
  double accuracy = 0;     // correct / batch
  std::string predictions; // one digit per image, for comparing backends image by image
  std::string device;      // labkit::DeviceInfo::summary(), or "CPU" for the CPU reference
  int sm_clock_mhz = 0;    // read after the run (0: unavailable)
  // Through a harness: where its start-up went (the judge's spawn, the harness's sandbox, CUDA and
  // pinned arrays as the harness reported them, the tensor file), in the order they ran; these
  // overlap the loading and one another, so they are not a split of Total Execution Time. Empty
  // in-process and in older files.
  std::vector<StartupPhase> startup_ms;
};

// A GPU conv without a usable CUDA device. The check runs beside the loading of the data (the
// CUDA driver's start takes ~0.1 s), so it is thrown when the first conv needs the device.
struct NoDevice : std::runtime_error {
  using std::runtime_error::runtime_error;
};

RunResult run_network(const ConvBackend& backend, const RunOptions& options);

// Images two runs classify differently (RunResult::predictions of each, compared image by image).
int count_differing(const std::string& a, const std::string& b);

nlohmann::json to_json(const RunResult& r);
RunResult from_json(const nlohmann::json& j);  // throws nlohmann::json::exception on a bad document

// The child-process entry point shared by every program that runs the network (a lab's grading
// executable with --network, and labkit-network): parses --batch, --data, --model, --op-repeats,
// prints the RunResult as JSON on stdout (or {"error": "..."} on failure) and returns the exit
// status (grader/core/exit_codes.h: 0, 1 for bad data, 77 without a GPU for a GPU backend, 99).
int program_main(int argc, char** argv, const ConvBackend& backend,
                 std::chrono::steady_clock::time_point program_start,
                 std::function<void(const ConvShape&, float, float, int, LayerTiming&)> remote_repeats = {});

}  // namespace labkit::network
