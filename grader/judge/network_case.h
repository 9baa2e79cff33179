// network_case.h (judge-private) — the milestone network with a lab's conv layers run through its
// harness: the 09-fp16 accuracy case when grading, and `labkit-network` for `labkit report`.
#pragma once

#include <cstdint>
#include <memory>

#include "grading.h"
#include "grader/judge/device.h"
#include "grader/judge/lab_spec.h"
#include "grader/network/network_run.h"
#include "grader/judge/session.h"

namespace labkit::judge {

// A conv layer of the network through the lab's harness: prolog on the layer's input, the
// judge's L2 flush, conv_forward_gpu between the lab's CUDA events (checked against the judge's
// clock and the physical floor), epilog; the output must match the digest taken when the op
// returned. The lab's prolog and epilog get pinned host arrays (the milestone program's, as the
// in-process conv's in network_run.cpp; labkit-network has the harness reserve them ahead).
// Failures throw LabFailure.
network::RemoteConv remote_conv(Session& session, L2Flush& flush);

// The tensor file's size remote_conv needs for one layer of `shape` (input, mask and output):
// labkit-network reserves conv1's in the background while the test set loads.
std::uint64_t network_conv_bytes(const ConvShape& shape);

// Op Time repeats on fresh inputs of the layer's shape and range, each output checked.
std::function<void(const ConvShape&, float, float, int, network::LayerTiming&)> remote_repeats(
    Session& session, L2Flush& flush, Precision precision);

class NetworkCase {
 public:
  // Before the lab starts: the data, the model and the baseline's run (in the judge's process).
  void prepare(Context& ctx, const NetworkAccuracy& want);
  CaseReport run(Context& ctx);

 private:
  NetworkAccuracy want_;
  network::RunResult base_;
  std::unique_ptr<L2Flush> flush_;  // allocated before the lab's process exists
};

}  // namespace labkit::judge
