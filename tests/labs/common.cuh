// common.cuh — a plain, correct conv for the grader's test labs (tests/labs/*/kernel.cu), which
// each break one thing on purpose. Not a lab: this folder has no kernel.cu.
#pragma once

#include <cuda_runtime.h>

#include "labkit/conv.h"
#include "labkit/conv_buffers.h"
#include "labkit/cuda_check.h"

namespace test_lab {

// The product of one input and one mask value, as the plain conv forms it. Test labs that break
// the arithmetic pass their own (a transposed mask, half-rounded values) to conv_kernel.
struct PlainTerm {
  __device__ float operator()(const float* in, const float* mask, const labkit::ConvShape& s,
                              std::size_t b, int m, int c, int h, int w, int p, int q) const {
    return in[((b * s.C + c) * s.H + h + p) * s.W + w + q] *
           mask[((std::size_t(m) * s.C + c) * s.K + p) * s.K + q];
  }
};

// One thread per output element, a grid-stride loop over elements [first, last) (size_t: any batch),
// for any kernel of a test lab that does the plain conv (conv_kernel, and those that add a branch).
template <class Term = PlainTerm>
__device__ void conv_elements(float* out, const float* in, const float* mask, const labkit::ConvShape& s,
                              std::size_t first, std::size_t last, Term term = {}) {
  const int ho = s.H_out(), wo = s.W_out();
  for (std::size_t i = first + blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; i < last;
       i += std::size_t(gridDim.x) * blockDim.x) {
    const int w = int(i % wo), h = int(i / wo % ho), m = int(i / (std::size_t(wo) * ho) % s.M);
    const std::size_t b = i / (std::size_t(wo) * ho * s.M);
    float acc = 0;
    for (int c = 0; c < s.C; ++c)
      for (int p = 0; p < s.K; ++p)
        for (int q = 0; q < s.K; ++q) acc += term(in, mask, s, b, m, c, h, w, p, q);
    out[i] = acc;
  }
}

template <class Term = PlainTerm>
__global__ void conv_kernel(float* out, const float* in, const float* mask, labkit::ConvShape s,
                            std::size_t first, std::size_t last, Term term = {}) {
  conv_elements(out, in, mask, s, first, last, term);
}

inline void launch(float* out, const float* in, const float* mask, const labkit::ConvShape& s,
                   std::size_t first, std::size_t last, cudaStream_t stream = nullptr) {
  if (last <= first) return;
  conv_kernel<<<1024, 256, 0, stream>>>(out, in, mask, s, first, last, PlainTerm{});
  LABKIT_CUDA_CHECK_LAUNCH();
}

}  // namespace test_lab

// The two phases most test labs keep as they are.
#define TEST_LAB_STANDARD_PROLOG_EPILOG                                                            \
  void labkit::conv_forward_gpu_prolog(const float*, const float* host_input, const float* host_mask, \
                                       float** device_output, float** device_input,               \
                                       float** device_mask, const ConvShape& shape) {             \
    labkit::standard_prolog(host_input, host_mask, device_output, device_input, device_mask, shape); \
  }                                                                                                \
  void labkit::conv_forward_gpu_epilog(float* host_output, float* device_output, float* device_input, \
                                       float* device_mask, const ConvShape& shape) {              \
    labkit::standard_epilog(host_output, device_output, device_input, device_mask, shape);          \
  }
