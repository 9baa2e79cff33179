// gpu_drain.h (judge-private) — waits until the GPU has finished the work other processes queued
// on it, as seen from the judge's own context: what a stopped lab (grader/judge/session.h, pause())
// left behind before the baseline is timed.
//
//   * The harness synchronizes the device before it answers a request, but a thread of the lab
//     may queue work after that (copies, kernels on its own streams), and stopping the lab's
//     processes stops no GPU work already queued. Contexts of different processes share the GPU
//     by time slices, and each copy engine serves one context at a time: while another context
//     is busy, a tiny piece of work of the judge's own waits for its turn.
//   * probe(): one such piece, timed on the host: an empty kernel, then a 64 KiB copy to the
//     device and one back (pinned memory, so they go through the copy engines, on which a lab's
//     copies queue), on a stream of the judge's own, waited for.
//   * drain(): probes until two in a row complete within kSettledMs (the GPU is free), or
//     kDrainCapMs has passed (settled = false: the interference check decides, timing_checks.h).
//   * idle_ms(): the median probe with nothing else on the GPU (before the lab starts): the
//     latency kSettledMs must stay well above, reported with the grade so it can be checked.
//   * CUDA failures throw labkit::CudaError.
#pragma once

#include <cuda_runtime_api.h>

namespace labkit::judge {

// Two probes in a row within this: nothing else runs. To be checked against idle_ms() on each GPU
// (the grade's JSON "timing.still.idle_probe_ms").
inline constexpr double kSettledMs = 0.1;
// The longest the judge waits for the GPU before a baseline sample.
inline constexpr double kDrainCapMs = 20;

struct Drain {
  double ms = 0;        // probing, in all
  int probes = 0;
  bool settled = false;
  double first_ms = 0;  // the first probe: over kSettledMs, the GPU was busy
};

class GpuDrain {
 public:
  GpuDrain();
  ~GpuDrain();
  GpuDrain(const GpuDrain&) = delete;
  GpuDrain& operator=(const GpuDrain&) = delete;
  double probe();
  Drain drain(double settled_ms = kSettledMs, double cap_ms = kDrainCapMs);
  double idle_ms(int probes = 21);

 private:
  cudaStream_t stream_ = nullptr;
  void* host_ = nullptr;    // pinned, 2 x kProbeBytes
  void* device_ = nullptr;  // kProbeBytes
};

}  // namespace labkit::judge
