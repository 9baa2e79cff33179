#include "device_ops.h"

#include <cuda_runtime.h>

#include "grader/protocol/fresh.h"
#include "labkit/cuda_check.h"

namespace labkit::harness {
namespace {

__global__ void digest_kernel(const float* data, std::size_t n, unsigned long long* sum) {
  std::uint64_t acc = 0;
  const std::size_t threads = std::size_t(gridDim.x) * blockDim.x;
  for (std::size_t k = std::size_t(blockIdx.x) * blockDim.x + threadIdx.x; k < n; k += threads)
    acc += fresh::digest_term(__float_as_uint(data[k]), k);
  // Sums modulo 2^64 commute, so a warp reduction and one atomic per warp give the host's value.
  for (int offset = 16; offset > 0; offset /= 2) acc += __shfl_down_sync(0xFFFFFFFFu, acc, offset);
  if ((threadIdx.x & 31) == 0) atomicAdd(sum, static_cast<unsigned long long>(acc));
}

__global__ void fill_kernel(float* data, std::size_t n, std::uint64_t seed, float lo, float hi) {
  const std::size_t threads = std::size_t(gridDim.x) * blockDim.x;
  for (std::size_t k = std::size_t(blockIdx.x) * blockDim.x + threadIdx.x; k < n; k += threads)
    data[k] = fresh::fresh_value(seed, k, lo, hi);
}

}  // namespace

std::uint64_t device_digest(const float* device, std::size_t n) {
  // Allocated once: an allocation inside the judge's clock would widen every run's round trip.
  static unsigned long long* sum = [] {
    unsigned long long* p = nullptr;
    LABKIT_CUDA_CHECK(cudaMalloc(&p, sizeof *p));
    return p;
  }();
  LABKIT_CUDA_CHECK(cudaMemset(sum, 0, sizeof *sum));
  digest_kernel<<<1024, 256>>>(device, n, sum);
  LABKIT_CUDA_CHECK(cudaGetLastError());
  unsigned long long host = 0;
  LABKIT_CUDA_CHECK(cudaMemcpy(&host, sum, sizeof host, cudaMemcpyDeviceToHost));
  return host;
}

void device_fill(float* device, std::size_t n, std::uint64_t seed, float lo, float hi) {
  fill_kernel<<<1024, 256>>>(device, n, seed, lo, hi);
  LABKIT_CUDA_CHECK(cudaGetLastError());
  LABKIT_CUDA_CHECK(cudaDeviceSynchronize());
}

}  // namespace labkit::harness
