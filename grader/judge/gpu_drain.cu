#include "gpu_drain.h"

#include <cuda_runtime.h>

#include <chrono>
#include <vector>

#include "labkit/cuda_check.h"
#include "grader/judge/stats.h"

namespace labkit::judge {
namespace {

using Clock = std::chrono::steady_clock;

// Large enough that the driver hands it to a copy engine rather than writing it into the command
// stream, small enough to take microseconds on an idle link.
constexpr std::size_t kProbeBytes = 64 << 10;

__global__ void probe_kernel(unsigned* word) {
  if (threadIdx.x == 0) *word += 1;
}

}  // namespace

GpuDrain::GpuDrain() {
  LABKIT_CUDA_CHECK(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking));
  LABKIT_CUDA_CHECK(cudaMallocHost(&host_, 2 * kProbeBytes));
  LABKIT_CUDA_CHECK(cudaMalloc(&device_, kProbeBytes));
  LABKIT_CUDA_CHECK(cudaMemset(device_, 0, kProbeBytes));
}

GpuDrain::~GpuDrain() {
  cudaStreamDestroy(stream_);
  cudaFreeHost(host_);
  cudaFree(device_);
}

double GpuDrain::probe() {
  unsigned char* host = static_cast<unsigned char*>(host_);
  const auto t0 = Clock::now();
  probe_kernel<<<1, 32, 0, stream_>>>(static_cast<unsigned*>(device_));
  LABKIT_CUDA_CHECK_LAUNCH();
  LABKIT_CUDA_CHECK(cudaMemcpyAsync(device_, host, kProbeBytes, cudaMemcpyHostToDevice, stream_));
  LABKIT_CUDA_CHECK(cudaMemcpyAsync(host + kProbeBytes, device_, kProbeBytes, cudaMemcpyDeviceToHost, stream_));
  LABKIT_CUDA_CHECK(cudaStreamSynchronize(stream_));
  return std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
}

Drain GpuDrain::drain(double settled_ms, double cap_ms) {
  Drain d;
  const auto t0 = Clock::now();
  int quiet = 0;
  for (;;) {
    const double p = probe();
    if (d.probes++ == 0) d.first_ms = p;
    quiet = p <= settled_ms ? quiet + 1 : 0;
    d.ms = std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
    if (quiet == 2) {
      d.settled = true;
      return d;
    }
    if (d.ms >= cap_ms) return d;
  }
}

double GpuDrain::idle_ms(int probes) {
  probe();  // the first launch of the kernel loads its module
  std::vector<double> ms;
  for (int i = 0; i < probes; ++i) ms.push_back(probe());
  return stats::median(ms);
}

}  // namespace labkit::judge
