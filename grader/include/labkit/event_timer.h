// labkit/event_timer.h — timing a device call with CUDA events, sample by sample.
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

template <class Before, class Body>
std::vector<double> time_samples(int warmup, int samples, Before&& before, Body&& body) {
  cudaEvent_t start, stop;
  LABKIT_CUDA_CHECK(cudaEventCreate(&start));
  LABKIT_CUDA_CHECK(cudaEventCreate(&stop));
  std::vector<double> ms;
  ms.reserve(samples > 0 ? samples : 0);
  try {
    for (int i = 0; i < warmup + samples; ++i) {
      before();
      LABKIT_CUDA_CHECK(cudaEventRecord(start));
      body();
      LABKIT_CUDA_CHECK(cudaEventRecord(stop));
      LABKIT_CUDA_CHECK(cudaEventSynchronize(stop));
      float t = 0;
      LABKIT_CUDA_CHECK(cudaEventElapsedTime(&t, start, stop));
      if (i >= warmup) ms.push_back(t);
    }
  } catch (...) {
    cudaEventDestroy(start);
    cudaEventDestroy(stop);
    throw;
  }
  LABKIT_CUDA_CHECK(cudaEventDestroy(start));
  LABKIT_CUDA_CHECK(cudaEventDestroy(stop));
  return ms;
}

}  // namespace labkit
