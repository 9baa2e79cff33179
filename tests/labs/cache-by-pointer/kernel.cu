// Cheat: cache-by-pointer. The first call on a set of device buffers (input pointer, output
// pointer, output size) computes the conv and keeps a copy of the output; every later call that
// brings the same buffers back replays that copy into the output (one device-to-device
// cudaMemcpyAsync, several times cheaper than the conv) instead of computing. The copy is kept on the
// device, not the host: a host copy would cost a PCIe transfer per call, slower than the baseline.
// On a naive grader that times many calls of conv_forward_gpu on one prolog's buffers with the
// same data, and checks only the output of a correctness call (as labkit did before the judge/
// harness split), every correctness call is computed and every timed call is a copy: full marks
// and a large speedup. Keying by pointer, not by shape, keeps fresh correctness cases honest.
// Expected verdict: incorrect. Every timed call gets fresh input through its own prolog, but
// cudaMalloc hands the freed buffers of the previous call back at the same addresses, so the
// replayed output belongs to an older input; the judge checks every timed call's output.
// 0 points.
#include <vector>

#include "../common.cuh"

namespace {
struct Entry {
  const float* input;
  const float* output;
  std::size_t n;
  float* copy;
};
std::vector<Entry> g_cache;
}  // namespace

TEST_LAB_STANDARD_PROLOG_EPILOG
void labkit::conv_forward_gpu(float* out, const float* in, const float* mask, const ConvShape& s) {
  const std::size_t n = s.output_size();
  for (const Entry& e : g_cache)
    if (e.input == in && e.output == out && e.n == n) {
      LABKIT_CUDA_CHECK(cudaMemcpyAsync(out, e.copy, n * sizeof(float), cudaMemcpyDeviceToDevice));
      return;
    }
  test_lab::launch(out, in, mask, s, 0, n);
  float* copy = nullptr;
  LABKIT_CUDA_CHECK(cudaMalloc(&copy, n * sizeof(float)));
  LABKIT_CUDA_CHECK(cudaMemcpyAsync(copy, out, n * sizeof(float), cudaMemcpyDeviceToDevice));
  g_cache.push_back({in, out, n, copy});
}
