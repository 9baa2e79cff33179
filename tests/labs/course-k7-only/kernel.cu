// A course submission whose kernel is written for the course's 7 x 7 mask only: the 49 products of
// a channel are spelled out by hand (ROW expands one mask row), K never enters the loops. Right
// for conv1 and conv2, wrong for any other K. (The loads are bounded by the buffers so that K = 1,
// 3, 5 give wrong values, not out-of-bounds reads: a test lab's verdict must not depend on what
// lies past an allocation.)
// Expected: "general": incorrect, every K != 7 case wrong and the message says that every failing
// case has K != 7; "course": passed, with the K != 7 shapes listed as warnings.
#include <cuda_runtime.h>

#include "gpu-new-forward.h"

__device__ __forceinline__ float at(const float* a, size_t i, size_t n) { return i < n ? a[i] : 0.0f; }

__global__ void conv7x7(float* __restrict__ output, const float* __restrict__ input, const float* __restrict__ mask,
                        int Batch, int Map_out, int Channel, int Height, int Width, int H_out, int W_out) {
  const size_t total = (size_t)Batch * Map_out * H_out * W_out;
  const size_t in_n = (size_t)Batch * Channel * Height * Width, mask_n = (size_t)Map_out * Channel * 49;
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < total; i += (size_t)gridDim.x * blockDim.x) {
    const int w = (int)(i % W_out), h = (int)(i / W_out % H_out), m = (int)(i / ((size_t)W_out * H_out) % Map_out);
    const size_t b = i / ((size_t)W_out * H_out * Map_out);
    float acc = 0.0f;
    for (int c = 0; c < Channel; ++c) {
      const size_t in0 = ((b * Channel + c) * Height + h) * Width + w;
      const size_t m0 = ((size_t)m * Channel + c) * 49;
#define TERM(p, q) at(input, in0 + (p) * Width + (q), in_n) * at(mask, m0 + (p) * 7 + (q), mask_n)
#define ROW(p) (TERM(p, 0) + TERM(p, 1) + TERM(p, 2) + TERM(p, 3) + TERM(p, 4) + TERM(p, 5) + TERM(p, 6))
      acc += ROW(0) + ROW(1) + ROW(2) + ROW(3) + ROW(4) + ROW(5) + ROW(6);
#undef ROW
#undef TERM
    }
    output[i] = acc;
  }
}

__host__ void GPUInterface::conv_forward_gpu_prolog(const float*, const float* host_input, const float* host_mask,
                                                    float** device_output_ptr, float** device_input_ptr,
                                                    float** device_mask_ptr, const int Batch, const int Map_out,
                                                    const int Channel, const int Height, const int Width,
                                                    const int K) {
  const size_t in_n = (size_t)Batch * Channel * Height * Width;
  const size_t out_n = (size_t)Batch * Map_out * (Height - K + 1) * (Width - K + 1);
  const size_t mask_n = (size_t)Map_out * Channel * K * K;
  cudaMalloc((void**)device_input_ptr, in_n * sizeof(float));
  cudaMalloc((void**)device_output_ptr, out_n * sizeof(float));
  cudaMalloc((void**)device_mask_ptr, mask_n * sizeof(float));
  cudaMemcpy(*device_input_ptr, host_input, in_n * sizeof(float), cudaMemcpyHostToDevice);
  cudaMemcpy(*device_mask_ptr, host_mask, mask_n * sizeof(float), cudaMemcpyHostToDevice);
}

__host__ void GPUInterface::conv_forward_gpu(float* device_output, const float* device_input,
                                             const float* device_mask, const int Batch, const int Map_out,
                                             const int Channel, const int Height, const int Width, const int K) {
  conv7x7<<<1024, 256>>>(device_output, device_input, device_mask, Batch, Map_out, Channel, Height, Width,
                         Height - K + 1, Width - K + 1);
}

__host__ void GPUInterface::conv_forward_gpu_epilog(float* host_output, float* device_output, float* device_input,
                                                    float* device_mask, const int Batch, const int Map_out,
                                                    const int, const int Height, const int Width, const int K) {
  cudaMemcpy(host_output, device_output, (size_t)Batch * Map_out * (Height - K + 1) * (Width - K + 1) * sizeof(float),
             cudaMemcpyDeviceToHost);
  cudaFree(device_output);
  cudaFree(device_input);
  cudaFree(device_mask);
}

__host__ void GPUInterface::get_device_properties() {}
