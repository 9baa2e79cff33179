// grader/core/event_timer.h — timing a device call with CUDA events, sample by sample; EventPair is
// the start/stop pair every timer of the kit (pair_timing, bench) records with.
//
//   std::vector<double> ms = time_samples(warmup, samples,
//       [&] { flush(); },                 // before each sample: enqueued, not timed
//       [&] { ops.forward(...); });       // the timed region
// Events are recorded on the default stream around `body`; work `body` starts on other streams
// is not covered (the grader's host clock catches that). Returns one time in milliseconds per
// sample after `warmup` untimed calls. CUDA failures throw labkit::CudaError.
#pragma once

#include <cuda_runtime_api.h>

#include <vector>

#include "labkit/cuda_check.h"

namespace labkit {

// A start and a stop event, created together and destroyed together.
class EventPair {
 public:
  EventPair() {
    LABKIT_CUDA_CHECK(cudaEventCreate(&start));
    LABKIT_CUDA_CHECK(cudaEventCreate(&stop));
  }
  ~EventPair() {
    cudaEventDestroy(start);
    cudaEventDestroy(stop);
  }
  EventPair(const EventPair&) = delete;
  EventPair& operator=(const EventPair&) = delete;
  // Milliseconds between the two, once stop has completed.
  float elapsed_ms() const {
    float ms = 0;
    LABKIT_CUDA_CHECK(cudaEventElapsedTime(&ms, start, stop));
    return ms;
  }
  cudaEvent_t start = nullptr, stop = nullptr;
};

template <class Before, class Body>
std::vector<double> time_samples(int warmup, int samples, Before&& before, Body&& body) {
  EventPair ev;
  std::vector<double> ms;
  ms.reserve(samples > 0 ? samples : 0);
  for (int i = 0; i < warmup + samples; ++i) {
    before();
    LABKIT_CUDA_CHECK(cudaEventRecord(ev.start));
    body();
    LABKIT_CUDA_CHECK(cudaEventRecord(ev.stop));
    LABKIT_CUDA_CHECK(cudaEventSynchronize(ev.stop));
    if (i >= warmup) ms.push_back(ev.elapsed_ms());
  }
  return ms;
}

}  // namespace labkit
