// remote.h (judge-private) — what the judge needs to believe a lab's timed calls: fresh inputs
// per call, the digest, the sampled check of every timed output, the physical floor, and the
// lab's side of a timed pair built on a harness session.
#pragma once

#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <vector>

#include "labkit/conv.h"
#include "labkit/device.h"
#include "labkit/grade_result.h"
#include "labkit/lab_spec.h"
#include "labkit/pair_timing.h"
#include "labkit/session.h"

namespace labkit::judge {

// fresh::digest_term summed over `data` (several threads for big outputs).
std::uint64_t host_digest(std::span<const float> data);

// A timed call's output copied out of the tensor file in one pass on several threads, with its
// digest computed from the copy: what is checked is exactly what was sealed.
struct Snapshot {
  std::vector<float> values;
  std::uint64_t digest = 0;
};
Snapshot snapshot(std::span<const float> shared);

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

// The output of a timed call checked at `samples` positions picked by `pick_seed` (after the
// call), against the double-precision conv of the same fresh inputs, plus a scan of every element
// for the poison pattern, NaN and inf. `name` names the call in the report.
CaseReport check_fresh_conv(const FreshConv& c, std::span<const float> out, Precision precision,
                            std::uint64_t pick_seed, const std::string& name, int samples = 2048);

// Bounds the judge places on one lab sample (ms). Exceeding one is timing-implausible.
struct RemoteCosts {
  double round_trip_ms = 0;  // median empty request
  // What a timed request costs beyond the reported time and the round trip (the digest, the GPU's
  // switch between the judge's and the harness's contexts), measured with the kit's own harness
  // (harness-kit-conv/map: the baseline behind the lab API) before the lab's process starts.
  double overhead_ms = 0;
};

// The kit's own harness of this kind (trusted: no student code in it).
std::string kit_harness(const std::string& kind);

// What the remote sides record beside the samples, for the judge's checks after timing.
struct RemoteLog {
  std::vector<double> wall_ms, event_ms, host_ms;
  int calls = 0;
};

}  // namespace labkit::judge
