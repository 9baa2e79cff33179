// Bad for an fp32 lab: inputs and mask rounded to half precision before the (fp32) products —
// what a half-precision kernel computes at best. The fp32 tolerance must reject it. Expected:
// incorrect (wrong values).
#include <cuda_fp16.h>

#include "../common.cuh"

__global__ void conv_half_inputs(float* out, const float* in, const float* mask, labkit::ConvShape s) {
  const int ho = s.H_out(), wo = s.W_out();
  for (std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; i < s.output_size();
       i += std::size_t(gridDim.x) * blockDim.x) {
    const int w = int(i % wo), h = int(i / wo % ho), m = int(i / (std::size_t(wo) * ho) % s.M);
    const std::size_t b = i / (std::size_t(wo) * ho * s.M);
    float acc = 0;
    for (int c = 0; c < s.C; ++c)
      for (int p = 0; p < s.K; ++p)
        for (int q = 0; q < s.K; ++q) {
          const float x = __half2float(__float2half(in[((b * s.C + c) * s.H + h + p) * s.W + w + q]));
          const float k = __half2float(__float2half(mask[((std::size_t(m) * s.C + c) * s.K + p) * s.K + q]));
          acc += x * k;
        }
    out[i] = acc;
  }
}

TEST_LAB_STANDARD_PROLOG_EPILOG
void labkit::conv_forward_gpu(float* out, const float* in, const float* mask, const ConvShape& s) {
  conv_half_inputs<<<1024, 256>>>(out, in, mask, s);
  LABKIT_CUDA_CHECK_LAUNCH();
}
