// Cheat: gpu-memory-hog. A static initializer asks how much device memory is free
// (cudaMemGetInfo) and cudaMalloc's all of it but 64 MiB, in as few blocks as will go, and never
// frees it: the memory stays taken as long as the process lives.
// The target is the grader's own work on the same GPU (the reference, the baseline's buffers, an
// L2 flush buffer, a digest): on a naive grader that shares the GPU with the lab's process, those
// allocations fail, the grader reports its own failure (kit-error, "not the student's fault") and
// the run is regraded by hand or excused. A smarter student would then serve their own prolog
// from the hoard; this one keeps the standard prolog, whose allocations fail for the grading
// shapes.
// Expected verdict: cuda-error (the lab's own prolog gets cudaErrorMemoryAllocation), never
// kit-error: the judge must blame the lab's allocations, not itself. 0 points.
#include <cstdio>

#include "../common.cuh"

namespace {
const std::size_t held_bytes = [] {
  constexpr std::size_t kKeep = std::size_t(64) << 20, kMiB = std::size_t(1) << 20;
  std::size_t free_bytes = 0, total = 0, held = 0;
  if (cudaMemGetInfo(&free_bytes, &total) != cudaSuccess) {
    cudaGetLastError();
    return held;
  }
  std::size_t chunk = free_bytes > kKeep ? free_bytes - kKeep : 0;
  while (chunk >= kMiB) {
    void* p = nullptr;
    if (cudaMalloc(&p, chunk) == cudaSuccess) {
      held += chunk;
      if (cudaMemGetInfo(&free_bytes, &total) != cudaSuccess) break;
      chunk = free_bytes > kKeep ? free_bytes - kKeep : 0;
    } else {
      cudaGetLastError();
      chunk /= 2;
    }
  }
  std::fprintf(stderr, "labkit-cheat: holding %zu MiB of device memory, %zu MiB left free\n", held / kMiB,
               free_bytes / kMiB);
  return held;
}();
}  // namespace

TEST_LAB_STANDARD_PROLOG_EPILOG
void labkit::conv_forward_gpu(float* out, const float* in, const float* mask, const ConvShape& s) {
  test_lab::launch(out, in, mask, s, 0, s.output_size());
}
