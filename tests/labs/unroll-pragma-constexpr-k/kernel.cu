// Lab 01 done the course's third way: __restrict__ pointers and, for K = 7, a kernel whose p and q
// loops run to a compile-time constant (kK7) under #pragma unroll; any other K takes a plain loop.
// Correct for every K. Expected: lab 01's evidence is found (the 49 multiply-adds in one kernel,
// the mask's 49th weight at a compile-time offset), as for a template <int K> kernel or the 7 x 7
// written out by hand (tests/labs/unroll-7x7-by-hand). The same pragma on a loop whose bound is
// the run-time s.K does not count (tests/labs/unroll-runtime-k).
#include "../common.cuh"

namespace {

constexpr int kK7 = 7;  // known at compile time: the pragma can unroll both loops completely

__global__ void conv_k7(float* __restrict__ out, const float* __restrict__ in, const float* __restrict__ mask,
                        labkit::ConvShape s) {
  const int ho = s.H_out(), wo = s.W_out();
  const std::size_t n = s.output_size();
  for (std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; i < n; i += std::size_t(gridDim.x) * blockDim.x) {
    const int w = int(i % wo), h = int(i / wo % ho), m = int(i / (std::size_t(wo) * ho) % s.M);
    const std::size_t b = i / (std::size_t(wo) * ho * s.M);
    float acc = 0.0f;
    for (int c = 0; c < s.C; ++c) {
      const float* x = in + ((b * s.C + c) * s.H + h) * s.W + w;
      const float* k = mask + (std::size_t(m) * s.C + c) * kK7 * kK7;
#pragma unroll
      for (int p = 0; p < kK7; ++p)
#pragma unroll
        for (int q = 0; q < kK7; ++q) acc += x[p * s.W + q] * k[p * kK7 + q];
    }
    out[i] = acc;
  }
}

}  // namespace

TEST_LAB_STANDARD_PROLOG_EPILOG
void labkit::conv_forward_gpu(float* out, const float* in, const float* mask, const ConvShape& s) {
  if (s.K == kK7) {
    conv_k7<<<1024, 256>>>(out, in, mask, s);
    LABKIT_CUDA_CHECK_LAUNCH();
    return;
  }
  test_lab::launch(out, in, mask, s, 0, s.output_size());
}
