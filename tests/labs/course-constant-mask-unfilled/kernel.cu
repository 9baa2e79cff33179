// A course submission (ECE408's GPUInterface): the prolog allocates *device_mask_ptr as the
// course's skeleton does, but copies the mask only to __constant__ memory; the device mask is
// never filled and the kernel never reads it. Expected: passed under both contracts: the output
// is right (the kit judges the output, not the lab's buffers).
#include <cuda_runtime.h>

#include "gpu-new-forward.h"

#define MAX_MASK 8192  // floats: conv2's 3136 and every fixture's
__constant__ float Mc[MAX_MASK];

__global__ void conv_forward_kernel(float* output, const float* input, const int Batch, const int Map_out,
                                    const int Channel, const int Height, const int Width, const int K) {
  const int H_out = Height - K + 1, W_out = Width - K + 1;
#define out_4d(i3, i2, i1, i0) output[((size_t)(i3) * Map_out + (i2)) * (H_out * W_out) + (i1) * W_out + (i0)]
#define in_4d(i3, i2, i1, i0) input[((size_t)(i3) * Channel + (i2)) * (Height * Width) + (i1) * Width + (i0)]
#define mask_4d(i3, i2, i1, i0) Mc[(i3) * (Channel * K * K) + (i2) * (K * K) + (i1) * K + (i0)]
  const int m = blockIdx.x, b = blockIdx.y;
  for (int t = threadIdx.x; t < H_out * W_out; t += blockDim.x) {
    const int h = t / W_out, w = t % W_out;
    float acc = 0.0f;
    for (int c = 0; c < Channel; ++c)
      for (int p = 0; p < K; ++p)
        for (int q = 0; q < K; ++q) acc += in_4d(b, c, h + p, w + q) * mask_4d(m, c, p, q);
    out_4d(b, m, h, w) = acc;
  }
#undef out_4d
#undef in_4d
#undef mask_4d
}

__host__ void GPUInterface::conv_forward_gpu_prolog(const float* host_output, const float* host_input,
                                                    const float* host_mask, float** device_output_ptr,
                                                    float** device_input_ptr, float** device_mask_ptr,
                                                    const int Batch, const int Map_out, const int Channel,
                                                    const int Height, const int Width, const int K) {
  (void)host_output;
  const size_t in_n = (size_t)Batch * Channel * Height * Width;
  const size_t out_n = (size_t)Batch * Map_out * (Height - K + 1) * (Width - K + 1);
  const size_t mask_n = (size_t)Map_out * Channel * K * K;
  cudaMalloc((void**)device_input_ptr, in_n * sizeof(float));
  cudaMalloc((void**)device_output_ptr, out_n * sizeof(float));
  cudaMalloc((void**)device_mask_ptr, mask_n * sizeof(float));  // allocated, never filled
  cudaMemcpy(*device_input_ptr, host_input, in_n * sizeof(float), cudaMemcpyHostToDevice);
  cudaMemcpyToSymbol(Mc, host_mask, mask_n * sizeof(float));
}

__host__ void GPUInterface::conv_forward_gpu(float* device_output, const float* device_input,
                                             const float* device_mask, const int Batch, const int Map_out,
                                             const int Channel, const int Height, const int Width, const int K) {
  (void)device_mask;
  // Batch on grid.y: at most 65535 images, the course's largest batch is 10000.
  conv_forward_kernel<<<dim3(Map_out, Batch), 256>>>(device_output, device_input, Batch, Map_out, Channel, Height,
                                                     Width, K);
}

__host__ void GPUInterface::conv_forward_gpu_epilog(float* host_output, float* device_output, float* device_input,
                                                    float* device_mask, const int Batch, const int Map_out,
                                                    const int Channel, const int Height, const int Width,
                                                    const int K) {
  (void)Channel;
  cudaMemcpy(host_output, device_output, (size_t)Batch * Map_out * (Height - K + 1) * (Width - K + 1) * sizeof(float),
             cudaMemcpyDeviceToHost);
  cudaFree(device_output);
  cudaFree(device_input);
  cudaFree(device_mask);
}

__host__ void GPUInterface::get_device_properties() {}
