// Cheat: lab 09's paired half FMAs in a branch the timed kernel never takes (K < 0), beside a
// plain fp32 conv that does the work. The f16x2 pattern is in the kernel that ran for all of the
// timed GPU time; only a count of executed half-precision FMAs sees none. Expected verdict, where
// Nsight Compute can read the GPU's counters: missing-evidence ("Executed counters").
#include <cuda_fp16.h>

#include "../common.cuh"

__device__ __half2 branch_scratch[64];

__global__ void conv_with_dead_branch(float* out, const float* in, const float* mask, labkit::ConvShape s,
                                      std::size_t total) {
  if (s.K < 0) {  // never taken
    const unsigned t = threadIdx.x % 32;
    branch_scratch[t] = __hfma2(branch_scratch[t], branch_scratch[t + 32], branch_scratch[t]);
    return;
  }
  const test_lab::PlainTerm term;
  const int ho = s.H_out(), wo = s.W_out();
  for (std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; i < total; i += std::size_t(gridDim.x) * blockDim.x) {
    const int w = int(i % wo), h = int(i / wo % ho), m = int(i / (std::size_t(wo) * ho) % s.M);
    const std::size_t b = i / (std::size_t(wo) * ho * s.M);
    float acc = 0;
    for (int c = 0; c < s.C; ++c)
      for (int p = 0; p < s.K; ++p)
        for (int q = 0; q < s.K; ++q) acc += term(in, mask, s, b, m, c, h, w, p, q);
    out[i] = acc;
  }
}

TEST_LAB_STANDARD_PROLOG_EPILOG
void labkit::conv_forward_gpu(float* out, const float* in, const float* mask, const ConvShape& s) {
  conv_with_dead_branch<<<1024, 256>>>(out, in, mask, s, s.output_size());
  LABKIT_CUDA_CHECK_LAUNCH();
}
