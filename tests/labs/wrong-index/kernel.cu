// Bad: reads the mask transposed (p and q swapped), a classic indexing slip. Expected: incorrect
// (wrong values), with the first mismatches listed as (b, m, h, w).
#include "../common.cuh"

__global__ void conv_transposed_mask(float* out, const float* in, const float* mask, labkit::ConvShape s) {
  const int ho = s.H_out(), wo = s.W_out();
  for (std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; i < s.output_size();
       i += std::size_t(gridDim.x) * blockDim.x) {
    const int w = int(i % wo), h = int(i / wo % ho), m = int(i / (std::size_t(wo) * ho) % s.M);
    const std::size_t b = i / (std::size_t(wo) * ho * s.M);
    float acc = 0;
    for (int c = 0; c < s.C; ++c)
      for (int p = 0; p < s.K; ++p)
        for (int q = 0; q < s.K; ++q)
          acc += in[((b * s.C + c) * s.H + h + p) * s.W + w + q] *
                 mask[((std::size_t(m) * s.C + c) * s.K + q) * s.K + p];
    out[i] = acc;
  }
}

TEST_LAB_STANDARD_PROLOG_EPILOG
void labkit::conv_forward_gpu(float* out, const float* in, const float* mask, const ConvShape& s) {
  conv_transposed_mask<<<1024, 256>>>(out, in, mask, s);
  LABKIT_CUDA_CHECK_LAUNCH();
}
