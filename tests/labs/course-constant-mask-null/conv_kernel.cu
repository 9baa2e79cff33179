// The second source file of course-constant-mask-null: the mask in __constant__ memory and the
// kernel that reads it (one thread per output element, a grid-stride loop).
#include <cstdio>
#include <cstdlib>

#include "conv_kernel.cuh"

__constant__ float const_mask[kMaxMaskFloats];

void upload_mask(const float* host_mask, int count) {
  if (count > kMaxMaskFloats) {
    std::fprintf(stderr, "mask of %d floats does not fit the %d of constant memory\n", count, kMaxMaskFloats);
    std::abort();
  }
  cudaMemcpyToSymbol(const_mask, host_mask, count * sizeof(float));
}

__global__ void conv_constant_mask(float* output, const float* input, int Batch, int Map_out, int Channel,
                                   int Height, int Width, int K) {
  const int H_out = Height - K + 1, W_out = Width - K + 1;
  const size_t total = size_t(Batch) * Map_out * H_out * W_out;
  for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < total; i += size_t(gridDim.x) * blockDim.x) {
    const int w = int(i % W_out), h = int(i / W_out % H_out), m = int(i / (size_t(W_out) * H_out) % Map_out);
    const size_t b = i / (size_t(W_out) * H_out * Map_out);
    float acc = 0.0f;
    for (int c = 0; c < Channel; ++c)
      for (int p = 0; p < K; ++p)
        for (int q = 0; q < K; ++q)
          acc += input[((b * Channel + c) * Height + h + p) * Width + w + q] *
                 const_mask[((m * Channel + c) * K + p) * K + q];
    output[i] = acc;
  }
}

void launch_conv(float* output, const float* input, int Batch, int Map_out, int Channel, int Height, int Width,
                 int K) {
  conv_constant_mask<<<1024, 256>>>(output, input, Batch, Map_out, Channel, Height, Width, K);
}
