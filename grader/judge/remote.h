// remote.h (judge-private) — what the judge needs to believe a lab's timed calls: fresh inputs
// per call, the digest, the sampled check of every timed output, the physical floor, and the
// lab's side of a timed pair built on a harness session.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <vector>

#include "labkit/conv.h"
#include "grader/judge/executed_evidence.h"
#include "grader/judge/device.h"
#include "grader/judge/grade_result.h"
#include "grader/judge/lab_spec.h"
#include "grader/judge/pair_timing.h"
#include "grader/judge/session.h"

namespace labkit::judge {

// A timed call's output read where the harness left it (the tensor file), every element exactly
// once: that one read feeds the digest, the scan for poison (0xFFFFFFFF) and NaN/inf, and the
// values kept at `positions` (ascending). Reading twice would let a writer still running in the
// lab's process show the check one value and the digest another; copying 100 MB out first cost
// more than the call. `copy_to`, when not empty, receives every value read (the network case).
struct SealedRead {
  std::uint64_t digest = 0;
  std::size_t unwritten = 0, nonfinite = 0;
  std::vector<std::pair<std::size_t, float>> bad;  // the first bad elements (index, value), ascending
  std::vector<float> values;                       // at `positions`, in their order
};
SealedRead read_sealed(std::span<const float> shared, std::span<const std::size_t> positions,
                       std::span<float> copy_to = {}, std::size_t max_bad = 8);

// A draw the lab's process cannot predict, from the kernel's random source (getrandom): the seeds
// of every timed call's fresh inputs, the positions checked, which calls are checked. Not from
// the grade's seed: the harness sees each fresh input's seed, and seeded streams are invertible
// (SplitMix64's mix is a bijection, seed_for is FNV-1a), so from one seed it could recompute the
// grade's seed and every later draw: the next calls' inputs, to have their outputs ready, and
// the positions the judge will look at. Timed calls are therefore not replayed by --seed.
std::uint64_t secret_draw();

// `samples` positions of an output of `n` elements picked by `seed`, plus the last element;
// ascending, no repeats.
std::vector<std::size_t> pick_positions(std::size_t n, std::uint64_t seed, int samples);

// The fastest any implementation could run a call that does `macs` multiply-adds and must read
// `read_bytes` and write `write_bytes` of device memory (beyond what L2 can hold), at the
// device's peaks with margin: tensor-core rate for the arithmetic, memory clock x bus width for
// the bytes. A reported time below it is not a time.
double floor_ms(double macs, double read_bytes, double write_bytes);

// A timed conv call's inputs, drawn fresh for that call (grader/protocol/fresh.h).
struct FreshConv {
  ConvShape shape{};
  std::uint64_t input_seed = 0, mask_seed = 0;
  float lo = 0, hi = 1;  // the input's range; the mask's is [-0.5, 0.5)
};

// A timed call's output, read by read_sealed at `positions`, checked there against the
// double-precision conv of the same fresh inputs; any poison, NaN or inf anywhere fails it.
// `name` names the call in the report.
CaseReport check_fresh_conv(const FreshConv& c, const SealedRead& out, std::span<const std::size_t> positions,
                            Precision precision, const std::string& name);

// Bounds the judge places on one lab sample (ms). Exceeding one is timing-implausible.
struct RemoteCosts {
  double round_trip_ms = 0;  // median empty request
  // What a timed request costs beyond the reported time and the round trip (the digest, the GPU's
  // switch between the judge's and the harness's contexts), measured with the kit's own harness
  // (harness-kit-conv/map: the baseline behind the lab API) before the lab's process starts.
  double overhead_ms = 0;
};

// kit_harness(kind), the kit's own harness of a kind, is declared in grader/judge/judge.h: `labkit
// report` runs the baseline's network row through it too.

// What the remote sides record beside the samples, for the judge's checks after timing.
struct RemoteLog {
  std::vector<double> wall_ms, event_ms, host_ms;
  int calls = 0;
  // Where a lab sample's time goes (ms, summed over calls): the prepare request (fresh inputs and
  // the prolog), the L2 flush, the timed request, the finish request (epilog), the judge's check.
  double prepare_ms = 0, flush_ms = 0, run_ms = 0, finish_ms = 0, check_ms = 0;
  // The check of the most recent call when it was not checked at once (it lies in the tensor file
  // until the next call of this side): the side's user runs it once the pairs are done, so the
  // last timed call is always checked. Empty when the last call was checked.
  std::function<void()> check_last;
  int checked = 0;  // calls whose output was read and checked
  // The records of the kernels that ran in each timed call (grader/judge/executed_evidence.h), sent by
  // the harness in the request after it (finish), in the order of the calls.
  std::vector<executed::Window> windows;
};

// Where a timed call's records travel: a region of the tensor file, named in the request after the
// timed one ("executed_out"), and read back from its reply's "executed": {"bytes": n}. A reply
// without it, or with a size out of the region, gives an unavailable window, never a failure.
nlohmann::json executed_out(std::uint64_t offset);
executed::Window executed_window(TensorFile& tensors, std::uint64_t offset, const nlohmann::json& reply,
                                 std::string group, double wall_ms, double reported_ms);

// Adds the time since the last lap (or construction) to one of RemoteLog's parts.
class CallClock {
 public:
  explicit CallClock(RemoteLog& log) : log_(log) {}
  void lap(double RemoteLog::*part) {
    const auto now = std::chrono::steady_clock::now();
    log_.*part += std::chrono::duration<double, std::milli>(now - last_).count();
    last_ = now;
  }

 private:
  RemoteLog& log_;
  std::chrono::steady_clock::time_point last_ = std::chrono::steady_clock::now();
};

// Appends a timed shape's lab-sample parts to result.phases (seconds, summed over its calls).
void record_call_costs(GradeResult& result, const RemoteLog& log);

}  // namespace labkit::judge
