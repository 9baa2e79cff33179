// A course submission of the FP16 milestone with device buffers of its own type: the mask and the
// output live on the device as __half, half the bytes of the kit's float layout (the input stays
// float32: an Op Time lab's input is where the kit writes each timed call's fresh input). The
// products are of half-rounded values, summed in float, stored as half; the epilog widens the
// halves to float on the host.
// Expected: passed under both contracts (fp16 tolerance): the kit poisons, reads and digests the
// lab's buffers only as far as they reach, and seals a half-size output as fp16.
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <vector>

#include "gpu-new-forward.h"

__global__ void conv_half(__half* output, const float* input, const __half* mask, int Batch, int Map_out,
                          int Channel, int Height, int Width, int K) {
  const int H_out = Height - K + 1, W_out = Width - K + 1;
  const size_t total = (size_t)Batch * Map_out * H_out * W_out;
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < total; i += (size_t)gridDim.x * blockDim.x) {
    const int w = (int)(i % W_out), h = (int)(i / W_out % H_out), m = (int)(i / ((size_t)W_out * H_out) % Map_out);
    const size_t b = i / ((size_t)W_out * H_out * Map_out);
    float acc = 0.0f;
    for (int c = 0; c < Channel; ++c)
      for (int p = 0; p < K; ++p)
        for (int q = 0; q < K; ++q) {
          const __half x = __float2half(input[((b * Channel + c) * Height + h + p) * Width + w + q]);
          acc += __half2float(x) * __half2float(mask[((m * Channel + c) * K + p) * K + q]);
        }
    output[i] = __float2half(acc);
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
  cudaMalloc((void**)device_output_ptr, out_n * sizeof(__half));
  cudaMalloc((void**)device_mask_ptr, mask_n * sizeof(__half));
  cudaMemcpy(*device_input_ptr, host_input, in_n * sizeof(float), cudaMemcpyHostToDevice);
  std::vector<__half> mask_half(mask_n);
  for (size_t i = 0; i < mask_n; ++i) mask_half[i] = __float2half(host_mask[i]);
  cudaMemcpy(*device_mask_ptr, mask_half.data(), mask_n * sizeof(__half), cudaMemcpyHostToDevice);
}

__host__ void GPUInterface::conv_forward_gpu(float* device_output, const float* device_input,
                                             const float* device_mask, const int Batch, const int Map_out,
                                             const int Channel, const int Height, const int Width, const int K) {
  conv_half<<<1024, 256>>>(reinterpret_cast<__half*>(device_output), device_input,
                           reinterpret_cast<const __half*>(device_mask), Batch, Map_out, Channel, Height, Width, K);
}

__host__ void GPUInterface::conv_forward_gpu_epilog(float* host_output, float* device_output, float* device_input,
                                                    float* device_mask, const int Batch, const int Map_out,
                                                    const int, const int Height, const int Width, const int K) {
  const size_t out_n = (size_t)Batch * Map_out * (Height - K + 1) * (Width - K + 1);
  std::vector<__half> out_half(out_n);
  cudaMemcpy(out_half.data(), device_output, out_n * sizeof(__half), cudaMemcpyDeviceToHost);
  for (size_t i = 0; i < out_n; ++i) host_output[i] = __half2float(out_half[i]);
  cudaFree(device_output);
  cudaFree(device_input);
  cudaFree(device_mask);
}

__host__ void GPUInterface::get_device_properties() {}
