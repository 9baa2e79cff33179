// grader/tools/activity.h on a real GPU: what CUPTI records for work on the default stream, on two
// streams that overlap, and for allocations made inside and before the recorded window.
#include <doctest/doctest.h>

#include <cuda_runtime_api.h>

#include <cstddef>
#include <string>
#include <vector>

#include "grader/tools/activity.h"
#include "labkit/cuda_check.h"

namespace act = labkit::activity;

namespace {

constexpr std::size_t MiB = std::size_t{1} << 20;

// Busy-waits `cycles` SM clocks: a kernel that takes a known minimum time whatever the GPU.
__global__ void spin(long long cycles, int* sink) {
  const long long start = clock64();
  while (clock64() - start < cycles) {
  }
  if (sink != nullptr) *sink = 1;
}

// Cycles for at least `ms` milliseconds: counted at the rated peak clock, so a GPU running slower
// only spins longer.
long long cycles_for(double ms) {
  int device = 0, khz = 0;
  LABKIT_CUDA_CHECK(cudaGetDevice(&device));
  LABKIT_CUDA_CHECK(cudaDeviceGetAttribute(&khz, cudaDevAttrClockRate, device));
  return static_cast<long long>(ms * khz);
}

int count(const act::Summary& s, act::Kind kind) {
  int n = 0;
  for (const auto& iv : s.intervals) n += iv.kind == kind;
  return n;
}

// The recorder must work on the GPU box; when it cannot, say why instead of failing obscurely.
void require_available(const act::Summary& s) {
  INFO(s.describe());
  REQUIRE(s.available);
  CHECK(s.dropped == 0);
}

}  // namespace

TEST_CASE("activity: stop() without any work returns an empty summary") {
  LABKIT_CUDA_CHECK(cudaFree(nullptr));  // the context exists before recording starts
  act::Recorder recorder;
  const auto s = recorder.stop();
  require_available(s);
  CHECK(s.intervals.empty());
  CHECK(s.streams_used == 0);
  CHECK(s.overlap_ms == 0);
  CHECK(s.busy_ms == 0);
  CHECK(s.peak_allocated_bytes == 0);
  CHECK(s.allocations == 0);
  MESSAGE(s.describe());
}

TEST_CASE("activity: a kernel and copies all on the default stream use one stream and never overlap") {
  std::vector<float> host(MiB / sizeof(float), 1.0f);  // pageable on purpose
  float* device = nullptr;
  LABKIT_CUDA_CHECK(cudaMalloc(&device, MiB));
  act::Recorder recorder;
  LABKIT_CUDA_CHECK(cudaMemcpy(device, host.data(), MiB, cudaMemcpyHostToDevice));
  spin<<<1, 1>>>(cycles_for(0.5), nullptr);
  LABKIT_CUDA_CHECK_LAUNCH();
  LABKIT_CUDA_CHECK(cudaMemcpy(host.data(), device, MiB, cudaMemcpyDeviceToHost));
  const auto s = recorder.stop();
  LABKIT_CUDA_CHECK(cudaFree(device));
  MESSAGE(s.describe());
  require_available(s);
  CHECK(count(s, act::Kind::kernel) == 1);
  CHECK(count(s, act::Kind::memcpy) == 2);
  CHECK(s.streams_used == 1);
  CHECK(s.kernel_streams == 1);
  CHECK(s.copy_streams == 1);
  CHECK(s.overlap_ms == 0);
  CHECK(s.busy_ms >= 0.45);
  for (const auto& iv : s.intervals) {
    CAPTURE(iv.name);
    if (iv.kind == act::Kind::kernel) CHECK(iv.name.find("spin") != std::string::npos);
    if (iv.kind == act::Kind::memcpy) {
      CHECK(iv.bytes == MiB);
      CHECK(iv.pageable);
      CHECK((iv.name == "HtoD" || iv.name == "DtoH"));
    }
  }
}

TEST_CASE("activity: copies and long kernels on two streams overlap") {
  constexpr std::size_t bytes = 8 * MiB;
  cudaStream_t streams[2];
  void* host[2];
  void* device[2];
  for (int i = 0; i < 2; ++i) {
    LABKIT_CUDA_CHECK(cudaStreamCreateWithFlags(&streams[i], cudaStreamNonBlocking));
    LABKIT_CUDA_CHECK(cudaMallocHost(&host[i], bytes));  // pinned: the copy is asynchronous
    LABKIT_CUDA_CHECK(cudaMalloc(&device[i], bytes));
  }
  spin<<<1, 1>>>(1, nullptr);  // module loaded before the window
  LABKIT_CUDA_CHECK(cudaDeviceSynchronize());

  act::Recorder recorder;
  // Stream 2's copy runs while stream 1's kernel spins, and the two 2 ms kernels run together.
  for (int i = 0; i < 2; ++i) {
    LABKIT_CUDA_CHECK(cudaMemcpyAsync(device[i], host[i], bytes, cudaMemcpyHostToDevice, streams[i]));
    spin<<<1, 1, 0, streams[i]>>>(cycles_for(2.0), static_cast<int*>(device[i]));
    LABKIT_CUDA_CHECK_LAUNCH();
  }
  const auto s = recorder.stop();
  for (int i = 0; i < 2; ++i) {
    LABKIT_CUDA_CHECK(cudaStreamDestroy(streams[i]));
    LABKIT_CUDA_CHECK(cudaFreeHost(host[i]));
    LABKIT_CUDA_CHECK(cudaFree(device[i]));
  }
  MESSAGE(s.describe());
  require_available(s);
  CHECK(count(s, act::Kind::kernel) == 2);
  CHECK(count(s, act::Kind::memcpy) == 2);
  CHECK(s.streams_used == 2);
  CHECK(s.kernel_streams == 2);
  CHECK(s.copy_streams == 2);
  CHECK(s.overlap_ms > 0);
  CHECK(s.busy_ms >= 2.0 * 0.95);  // the union is at least one whole kernel
  for (const auto& iv : s.intervals) {
    if (iv.kind != act::Kind::memcpy) continue;
    CHECK(iv.name == "HtoD");
    CHECK(!iv.pageable);
    CHECK(iv.bytes == bytes);
  }
}

TEST_CASE("activity: a 64 MiB allocation freed inside the window is the peak, with nothing left") {
  LABKIT_CUDA_CHECK(cudaFree(nullptr));
  act::Recorder recorder;
  void* p = nullptr;
  LABKIT_CUDA_CHECK(cudaMalloc(&p, 64 * MiB));
  LABKIT_CUDA_CHECK(cudaFree(p));
  const auto s = recorder.stop();
  MESSAGE(s.describe());
  require_available(s);
  CHECK(s.peak_allocated_bytes >= 64 * MiB);
  CHECK(s.peak_allocated_bytes < 65 * MiB);
  CHECK(s.net_allocated_bytes == 0);
  CHECK(s.allocations >= 1);
}

TEST_CASE("activity: freeing memory allocated before the window does not lower the peak below zero") {
  void* old = nullptr;
  LABKIT_CUDA_CHECK(cudaMalloc(&old, 32 * MiB));
  act::Recorder recorder;
  LABKIT_CUDA_CHECK(cudaFree(old));
  void* p = nullptr;
  LABKIT_CUDA_CHECK(cudaMalloc(&p, 16 * MiB));
  LABKIT_CUDA_CHECK(cudaFree(p));
  const auto s = recorder.stop();
  MESSAGE(s.describe());
  require_available(s);
  CHECK(s.peak_allocated_bytes >= 16 * MiB);
  CHECK(s.peak_allocated_bytes < 32 * MiB);  // 16 MiB, not 16 + 32 nor a wrapped negative
  CHECK(s.net_allocated_bytes == 0);
}

TEST_CASE("activity: cudaMallocAsync counts the bytes asked for; a memset is no stream evidence") {
  cudaStream_t stream;
  LABKIT_CUDA_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  act::Recorder recorder;
  void* p = nullptr;
  LABKIT_CUDA_CHECK(cudaMallocAsync(&p, 8 * MiB, stream));
  LABKIT_CUDA_CHECK(cudaMemsetAsync(p, 0, 8 * MiB, stream));
  LABKIT_CUDA_CHECK(cudaFreeAsync(p, stream));
  const auto s = recorder.stop();
  LABKIT_CUDA_CHECK(cudaStreamDestroy(stream));
  MESSAGE(s.describe());
  require_available(s);
  CHECK(s.peak_allocated_bytes >= 8 * MiB);
  CHECK(s.peak_allocated_bytes < 9 * MiB);
  CHECK(s.net_allocated_bytes == 0);
  REQUIRE(count(s, act::Kind::memset) == 1);
  for (const auto& iv : s.intervals)
    if (iv.kind == act::Kind::memset) CHECK(iv.bytes == 8 * MiB);
  CHECK(s.streams_used == 0);
}

TEST_CASE("activity: one Recorder at a time; stop() once; an abandoned window does not leak into the next") {
  LABKIT_CUDA_CHECK(cudaFree(nullptr));
  {
    act::Recorder first;
    {
      act::Recorder second;
      const auto s2 = second.stop();
      CHECK(!s2.available);
      CHECK(s2.why.find("already recording") != std::string::npos);
    }
    spin<<<1, 1>>>(cycles_for(0.1), nullptr);
    LABKIT_CUDA_CHECK_LAUNCH();
    const auto s1 = first.stop();
    require_available(s1);
    CHECK(count(s1, act::Kind::kernel) == 1);
    const auto again = first.stop();
    CHECK(!again.available);
    CHECK(again.why.find("twice") != std::string::npos);
  }
  {
    act::Recorder abandoned;  // destroyed without stop(), its kernel possibly still running
    spin<<<1, 1>>>(cycles_for(1.0), nullptr);
    LABKIT_CUDA_CHECK_LAUNCH();
  }
  act::Recorder next;
  spin<<<2, 1>>>(cycles_for(0.1), nullptr);
  LABKIT_CUDA_CHECK_LAUNCH();
  const auto s = next.stop();
  require_available(s);
  CHECK(count(s, act::Kind::kernel) == 1);
}
