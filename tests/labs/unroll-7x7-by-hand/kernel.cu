// Lab 01 done the course's other way: __restrict__ pointers and, for K = 7, a kernel whose 49
// products are written out by hand (ROW spells one mask row); any other K takes a plain loop.
// Correct for every K. Expected: lab 01's evidence is found (the 49 multiply-adds in one kernel,
// the mask's 49th weight at a compile-time offset), as for a template <int K> kernel.
#include "../common.cuh"

namespace {

__global__ void conv7x7(float* __restrict__ out, const float* __restrict__ in, const float* __restrict__ mask,
                        labkit::ConvShape s) {
  const int ho = s.H_out(), wo = s.W_out();
  const std::size_t n = s.output_size();
  for (std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; i < n; i += std::size_t(gridDim.x) * blockDim.x) {
    const int w = int(i % wo), h = int(i / wo % ho), m = int(i / (std::size_t(wo) * ho) % s.M);
    const std::size_t b = i / (std::size_t(wo) * ho * s.M);
    float acc = 0.0f;
    for (int c = 0; c < s.C; ++c) {
      const float* x = in + ((b * s.C + c) * s.H + h) * s.W + w;
      const float* k = mask + (std::size_t(m) * s.C + c) * 49;
#define ROW(p)                                                                                         \
  acc += x[(p) * s.W] * k[(p) * 7];                                                                    \
  acc += x[(p) * s.W + 1] * k[(p) * 7 + 1];                                                            \
  acc += x[(p) * s.W + 2] * k[(p) * 7 + 2];                                                            \
  acc += x[(p) * s.W + 3] * k[(p) * 7 + 3];                                                            \
  acc += x[(p) * s.W + 4] * k[(p) * 7 + 4];                                                            \
  acc += x[(p) * s.W + 5] * k[(p) * 7 + 5];                                                            \
  acc += x[(p) * s.W + 6] * k[(p) * 7 + 6];
      ROW(0) ROW(1) ROW(2) ROW(3) ROW(4) ROW(5) ROW(6)
#undef ROW
    }
    out[i] = acc;
  }
}

}  // namespace

TEST_LAB_STANDARD_PROLOG_EPILOG
void labkit::conv_forward_gpu(float* out, const float* in, const float* mask, const ConvShape& s) {
  if (s.K == 7) {
    conv7x7<<<1024, 256>>>(out, in, mask, s);
    LABKIT_CUDA_CHECK_LAUNCH();
    return;
  }
  test_lab::launch(out, in, mask, s, 0, s.output_size());
}
