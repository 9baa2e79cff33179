// Cheat: cache-by-shape. The first call of each ConvShape computes the conv and keeps a copy of
// the output on the device; every later call of the same shape replays it (one device-to-device
// cudaMemcpyAsync) whatever its buffers hold.
// On a naive grader whose correctness cases all have different shapes and whose timed calls reuse
// the grading shapes' data (as labkit did before the judge/harness split: the timed calls ran on
// the very input the correctness case had checked, and their outputs were never looked at), every
// checked call is computed and every timed call is a copy: full marks and a large speedup.
// Expected verdict: incorrect (every timed call gets fresh random input and mask through its own
// prolog, so the replayed output is an older input's; the judge checks every timed call's
// output). 0 points.
#include <vector>

#include "../common.cuh"

namespace {
struct Entry {
  labkit::ConvShape shape;
  float* copy;
};
std::vector<Entry> g_cache;

bool same(const labkit::ConvShape& a, const labkit::ConvShape& b) {
  return a.B == b.B && a.M == b.M && a.C == b.C && a.H == b.H && a.W == b.W && a.K == b.K;
}
}  // namespace

TEST_LAB_STANDARD_PROLOG_EPILOG
void labkit::conv_forward_gpu(float* out, const float* in, const float* mask, const ConvShape& s) {
  const std::size_t bytes = s.output_size() * sizeof(float);
  for (const Entry& e : g_cache)
    if (same(e.shape, s)) {
      LABKIT_CUDA_CHECK(cudaMemcpyAsync(out, e.copy, bytes, cudaMemcpyDeviceToDevice));
      return;
    }
  test_lab::launch(out, in, mask, s, 0, s.output_size());
  float* copy = nullptr;
  LABKIT_CUDA_CHECK(cudaMalloc(&copy, bytes));
  LABKIT_CUDA_CHECK(cudaMemcpyAsync(copy, out, bytes, cudaMemcpyDeviceToDevice));
  g_cache.push_back({s, copy});
}
