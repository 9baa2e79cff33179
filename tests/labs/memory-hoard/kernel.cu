// Cheat: memory-hoard. gpu-memory-hog's smarter sibling: a static initializer takes all free
// device memory but 64 MiB in one block and keeps it, and the lab's own prolog is served from
// that block (a bump allocator, guard bytes and all), so the lab itself never runs out.
// The target is the kit's baseline, which allocates its buffers on every timed call in the kit's
// own harness: its cudaMalloc fails mid-pairs. A naive grader reports that as its own failure
// (kit-error: "not the student's fault", regraded by hand or excused), or names the failing call
// as if it were the lab's.
// Expected verdict: cuda-error with 0 points, and a message that says the kit's own work ran out
// of device memory while the lab's process held it; never kit-error.
#include <cstdio>

#include "../common.cuh"
#include "labkit/guard_regions.h"

namespace {
constexpr std::size_t kKeep = std::size_t(64) << 20, kMiB = std::size_t(1) << 20;

struct Hoard {
  char* base = nullptr;
  std::size_t size = 0, used = 0;
};

Hoard hoard = [] {
  Hoard h;
  std::size_t free_bytes = 0, total = 0;
  if (cudaMemGetInfo(&free_bytes, &total) != cudaSuccess) {
    cudaGetLastError();
    return h;
  }
  for (std::size_t size = free_bytes > kKeep ? free_bytes - kKeep : 0; size >= kMiB; size -= size / 16) {
    if (cudaMalloc(reinterpret_cast<void**>(&h.base), size) == cudaSuccess) {
      h.size = size;
      break;
    }
    cudaGetLastError();
  }
  std::fprintf(stderr, "labkit-cheat: holding %zu MiB of device memory\n", h.size / kMiB);
  return h;
}();

// A buffer of `bytes` plus the kit's guard bytes, from the hoard (never freed: the epilog rewinds).
float* take(std::size_t bytes) {
  const std::size_t need = (bytes + labkit::guards::kGuardBytes + 255) / 256 * 256;
  if (hoard.used + need > hoard.size) {
    float* p = nullptr;  // a hoard too small (no GPU memory to speak of): allocate normally
    LABKIT_CUDA_CHECK(cudaMalloc(reinterpret_cast<void**>(&p), bytes + labkit::guards::kGuardBytes));
    LABKIT_CUDA_CHECK(cudaMemset(reinterpret_cast<char*>(p) + bytes, labkit::guards::kGuardByte, labkit::guards::kGuardBytes));
    labkit::guards::add(p, bytes);
    return p;
  }
  float* p = reinterpret_cast<float*>(hoard.base + hoard.used);
  hoard.used += need;
  LABKIT_CUDA_CHECK(cudaMemset(reinterpret_cast<char*>(p) + bytes, labkit::guards::kGuardByte, labkit::guards::kGuardBytes));
  labkit::guards::add(p, bytes);
  return p;
}

bool from_hoard(const float* p) {
  return hoard.base && reinterpret_cast<const char*>(p) >= hoard.base &&
         reinterpret_cast<const char*>(p) < hoard.base + hoard.size;
}
}  // namespace

void labkit::conv_forward_gpu_prolog(const float*, const float* host_input, const float* host_mask,
                                     float** device_output, float** device_input, float** device_mask,
                                     const ConvShape& s) {
  *device_output = take(s.output_size() * sizeof(float));
  *device_input = take(s.input_size() * sizeof(float));
  *device_mask = take(s.mask_size() * sizeof(float));
  LABKIT_CUDA_CHECK(cudaMemcpy(*device_input, host_input, s.input_size() * sizeof(float), cudaMemcpyHostToDevice));
  LABKIT_CUDA_CHECK(cudaMemcpy(*device_mask, host_mask, s.mask_size() * sizeof(float), cudaMemcpyHostToDevice));
}

void labkit::conv_forward_gpu(float* out, const float* in, const float* mask, const ConvShape& s) {
  test_lab::launch(out, in, mask, s, 0, s.output_size());
}

void labkit::conv_forward_gpu_epilog(float* host_output, float* device_output, float* device_input,
                                     float* device_mask, const ConvShape& s) {
  LABKIT_CUDA_CHECK(cudaMemcpy(host_output, device_output, s.output_size() * sizeof(float), cudaMemcpyDeviceToHost));
  for (float* p : {device_output, device_input, device_mask}) {
    labkit::guards::remove(p);
    if (!from_hoard(p)) LABKIT_CUDA_CHECK(cudaFree(p));
  }
  hoard.used = 0;
}
