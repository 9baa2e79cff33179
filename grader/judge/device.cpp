#include "grader/judge/device.h"

#include <fmt/core.h>

#include "labkit/cuda_check.h"

namespace labkit {

std::string DeviceInfo::summary() const {
  auto version = [](int v) { return fmt::format("{}.{}", v / 1000, (v % 1000) / 10); };
  return fmt::format("{} (sm_{}{}, {} SMs, L2 {} MiB, {} MHz peak, driver {}, runtime {})", name,
                     cc_major, cc_minor, sm_count, l2_bytes >> 20, peak_sm_clock_mhz,
                     version(driver_version), version(runtime_version));
}

DeviceInfo device_info() {
  DeviceInfo d;
  LABKIT_CUDA_CHECK(cudaGetDevice(&d.index));
  cudaDeviceProp prop{};
  LABKIT_CUDA_CHECK(cudaGetDeviceProperties(&prop, d.index));
  d.name = prop.name;
  d.cc_major = prop.major;
  d.cc_minor = prop.minor;
  d.sm_count = prop.multiProcessorCount;
  int l2 = 0, clock_khz = 0;
  LABKIT_CUDA_CHECK(cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, d.index));
  LABKIT_CUDA_CHECK(cudaDeviceGetAttribute(&clock_khz, cudaDevAttrClockRate, d.index));
  d.l2_bytes = static_cast<std::size_t>(l2);
  d.peak_sm_clock_mhz = clock_khz / 1000;
  LABKIT_CUDA_CHECK(cudaDriverGetVersion(&d.driver_version));
  LABKIT_CUDA_CHECK(cudaRuntimeGetVersion(&d.runtime_version));
  return d;
}

L2Flush::L2Flush() {
  int device = 0, l2 = 0;
  LABKIT_CUDA_CHECK(cudaGetDevice(&device));
  LABKIT_CUDA_CHECK(cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, device));
  bytes_ = 2 * static_cast<std::size_t>(l2 > 0 ? l2 : 1 << 20);
  LABKIT_CUDA_CHECK(cudaMalloc(&buffer_, bytes_));
}

L2Flush::~L2Flush() { cudaFree(buffer_); }

void L2Flush::operator()(cudaStream_t stream) {
  LABKIT_CUDA_CHECK(cudaMemsetAsync(buffer_, ++pattern_, bytes_, stream));
}

}  // namespace labkit
