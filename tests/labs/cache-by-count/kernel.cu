// Cheat: cache-by-count. The first 20 calls compute the conv (enough for every correctness case a
// grader runs: 8 fixtures + a few random cases + the 2 grading shapes, and the timing warm-up);
// from then on every call only replays the last computed output (a device-to-device
// cudaMemcpyAsync, truncated to the smaller of the two sizes), whatever the shape or input.
// On a naive grader that checks outputs only in its correctness phase and then times the same
// data over and over without looking at what the timed calls wrote (labkit before the
// judge/harness split), everything checked was computed: full marks, and the timed calls are
// copies, a large speedup.
// Expected verdict: incorrect (the judge checks every timed call's output, each on fresh input,
// and its correctness cases are not the only calls that count). 0 points.
#include <algorithm>

#include "../common.cuh"

namespace {
constexpr int kHonestCalls = 20;
int g_calls = 0;
float* g_last = nullptr;     // a device copy of the last computed output
std::size_t g_last_n = 0;    // its size (floats)
std::size_t g_capacity = 0;  // floats allocated at g_last
}  // namespace

TEST_LAB_STANDARD_PROLOG_EPILOG
void labkit::conv_forward_gpu(float* out, const float* in, const float* mask, const ConvShape& s) {
  const std::size_t n = s.output_size();
  if (++g_calls > kHonestCalls && g_last) {
    LABKIT_CUDA_CHECK(cudaMemcpyAsync(out, g_last, std::min(n, g_last_n) * sizeof(float), cudaMemcpyDeviceToDevice));
    return;
  }
  test_lab::launch(out, in, mask, s, 0, n);
  if (n > g_capacity) {
    if (g_last) LABKIT_CUDA_CHECK(cudaFree(g_last));
    LABKIT_CUDA_CHECK(cudaMalloc(&g_last, n * sizeof(float)));
    g_capacity = n;
  }
  LABKIT_CUDA_CHECK(cudaMemcpyAsync(g_last, out, n * sizeof(float), cudaMemcpyDeviceToDevice));
  g_last_n = n;
}
