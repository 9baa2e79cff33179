// A course submission of the streams milestone (Layer Time: prolog + op + epilog), the whole layer
// in the prolog as course forums advise: the batch in 4 parts, each copied in, convolved and
// copied out into host_output on its own stream (host_output is const in the course's prolog: the
// cast is the course's own idiom). conv_forward_gpu does nothing; the epilog copies the device
// output to host_output once more, as the course's skeleton epilog does, and frees.
// Expected: passed under both contracts, with the streams evidence (the prolog's work is part of
// the timed layer; the prolog and the epilog get the same host_output; nothing poisons the device
// output between them).
#include <cuda_runtime.h>

#include "gpu-new-forward.h"

#define STREAMS 4

__global__ void conv_part(float* output, const float* input, const float* mask, int images, int Map_out,
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

__host__ void GPUInterface::conv_forward_gpu_prolog(const float* host_output, const float* host_input,
                                                    const float* host_mask, float** device_output_ptr,
                                                    float** device_input_ptr, float** device_mask_ptr,
                                                    const int Batch, const int Map_out, const int Channel,
                                                    const int Height, const int Width, const int K) {
  const size_t in_image = (size_t)Channel * Height * Width;
  const size_t out_image = (size_t)Map_out * (Height - K + 1) * (Width - K + 1);
  const size_t mask_n = (size_t)Map_out * Channel * K * K;
  cudaMalloc((void**)device_input_ptr, Batch * in_image * sizeof(float));
  cudaMalloc((void**)device_output_ptr, Batch * out_image * sizeof(float));
  cudaMalloc((void**)device_mask_ptr, mask_n * sizeof(float));
  cudaMemcpy(*device_mask_ptr, host_mask, mask_n * sizeof(float), cudaMemcpyHostToDevice);
  cudaStream_t stream[STREAMS];
  for (int s = 0; s < STREAMS; ++s) cudaStreamCreate(&stream[s]);
  float* out_host = const_cast<float*>(host_output);
  for (int s = 0; s < STREAMS; ++s) {
    const int b0 = Batch * s / STREAMS, b1 = Batch * (s + 1) / STREAMS;  // every image, any B
    if (b1 == b0) continue;
    cudaMemcpyAsync(*device_input_ptr + b0 * in_image, host_input + b0 * in_image, (b1 - b0) * in_image * sizeof(float),
                    cudaMemcpyHostToDevice, stream[s]);
    conv_part<<<512, 256, 0, stream[s]>>>(*device_output_ptr + b0 * out_image, *device_input_ptr + b0 * in_image,
                                          *device_mask_ptr, b1 - b0, Map_out, Channel, Height, Width, K);
    cudaMemcpyAsync(out_host + b0 * out_image, *device_output_ptr + b0 * out_image, (b1 - b0) * out_image * sizeof(float),
                    cudaMemcpyDeviceToHost, stream[s]);
  }
  for (int s = 0; s < STREAMS; ++s) {
    cudaStreamSynchronize(stream[s]);
    cudaStreamDestroy(stream[s]);
  }
}

__host__ void GPUInterface::conv_forward_gpu(float*, const float*, const float*, const int, const int, const int,
                                             const int, const int, const int) {}

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
