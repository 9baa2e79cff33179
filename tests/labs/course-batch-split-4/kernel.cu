// A course submission that splits the batch in 4 equal parts, one stream each, computing Batch / 4
// images a part: right at the course's batches (100, 1000, 10000), while the images past
// 4 * (Batch / 4) are never computed (B = 1 and 2: none at all).
// Expected: "general": incorrect ("not written"; the message says every failing case has B not a
// multiple of 4); "course": passed, the fixtures' odd batches listed as warnings.
#include <cuda_runtime.h>

#include "gpu-new-forward.h"

#define PARTS 4
static cudaStream_t streams[PARTS];

__global__ void conv_images(float* output, const float* input, const float* mask, int images, int Map_out,
                            int Channel, int Height, int Width, int K) {
  const int H_out = Height - K + 1, W_out = Width - K + 1;
  const size_t total = (size_t)images * Map_out * H_out * W_out;
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < total; i += (size_t)gridDim.x * blockDim.x) {
    const int w = (int)(i % W_out), h = (int)(i / W_out % H_out), m = (int)(i / ((size_t)W_out * H_out) % Map_out);
    const size_t b = i / ((size_t)W_out * H_out * Map_out);
    float acc = 0.0f;
    for (int c = 0; c < Channel; ++c)
      for (int p = 0; p < K; ++p)
        for (int q = 0; q < K; ++q)
          acc += input[((b * Channel + c) * Height + h + p) * Width + w + q] * mask[((m * Channel + c) * K + p) * K + q];
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
  for (int s = 0; s < PARTS; ++s) cudaStreamCreate(&streams[s]);
}

__host__ void GPUInterface::conv_forward_gpu(float* device_output, const float* device_input,
                                             const float* device_mask, const int Batch, const int Map_out,
                                             const int Channel, const int Height, const int Width, const int K) {
  const int part = Batch / PARTS;  // assumes Batch % 4 == 0
  const size_t in_image = (size_t)Channel * Height * Width;
  const size_t out_image = (size_t)Map_out * (Height - K + 1) * (Width - K + 1);
  if (part == 0) return;
  for (int s = 0; s < PARTS; ++s)
    conv_images<<<256, 256, 0, streams[s]>>>(device_output + s * part * out_image, device_input + s * part * in_image,
                                             device_mask, part, Map_out, Channel, Height, Width, K);
}

__host__ void GPUInterface::conv_forward_gpu_epilog(float* host_output, float* device_output, float* device_input,
                                                    float* device_mask, const int Batch, const int Map_out,
                                                    const int, const int Height, const int Width, const int K) {
  for (int s = 0; s < PARTS; ++s) cudaStreamSynchronize(streams[s]);
  cudaMemcpy(host_output, device_output, (size_t)Batch * Map_out * (Height - K + 1) * (Width - K + 1) * sizeof(float),
             cudaMemcpyDeviceToHost);
  for (int s = 0; s < PARTS; ++s) cudaStreamDestroy(streams[s]);
  cudaFree(device_output);
  cudaFree(device_input);
  cudaFree(device_mask);
}

__host__ void GPUInterface::get_device_properties() {}
