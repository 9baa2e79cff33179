// Cheat: cache-by-host-pointer. The harness keeps its host arrays between timed calls (two of
// each size, used in turn), so the host input pointer comes back every other call. The first call
// on a host input pointer computes the conv and keeps a device copy of the output; every later
// call with that pointer replays the copy (one device-to-device copy) instead of computing.
// Expected verdict: incorrect. The host array comes back, but with fresh contents every call:
// the replayed output belongs to an older input, and the judge checks every timed call's output.
// 0 points.
#include <vector>

#include "../common.cuh"

namespace {
struct Entry {
  const float* host_input;
  std::size_t n;
  float* copy;
};
std::vector<Entry> g_cache;
const float* g_host_input = nullptr;  // of the current call, recorded by the prolog
}  // namespace

void labkit::conv_forward_gpu_prolog(const float*, const float* host_input, const float* host_mask,
                                     float** device_output, float** device_input, float** device_mask,
                                     const ConvShape& shape) {
  g_host_input = host_input;
  labkit::standard_prolog(host_input, host_mask, device_output, device_input, device_mask, shape);
}

void labkit::conv_forward_gpu(float* out, const float* in, const float* mask, const ConvShape& s) {
  const std::size_t n = s.output_size();
  for (const Entry& e : g_cache)
    if (e.host_input == g_host_input && e.n == n) {
      LABKIT_CUDA_CHECK(cudaMemcpyAsync(out, e.copy, n * sizeof(float), cudaMemcpyDeviceToDevice));
      return;
    }
  test_lab::launch(out, in, mask, s, 0, n);
  float* copy = nullptr;
  LABKIT_CUDA_CHECK(cudaMalloc(&copy, n * sizeof(float)));
  LABKIT_CUDA_CHECK(cudaMemcpyAsync(copy, out, n * sizeof(float), cudaMemcpyDeviceToDevice));
  g_cache.push_back({g_host_input, n, copy});
}

void labkit::conv_forward_gpu_epilog(float* host_output, float* device_output, float* device_input,
                                     float* device_mask, const ConvShape& shape) {
  labkit::standard_epilog(host_output, device_output, device_input, device_mask, shape);
}
