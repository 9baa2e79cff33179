// A course submission as the course writes it (ECE408's GPUInterface, gpu-new-forward.h), in two
// files: this one holds the three phases, conv_kernel.cu the kernel. The mask is copied to
// __constant__ memory in the prolog and *device_mask_ptr is left null: the kernel never reads a
// device mask. Expected: passed under both contracts ("general" and "course"): the output is
// right, and the kit judges the output, not the lab's buffers.
#include <cstdio>

#include "conv_kernel.cuh"
#include "gpu-new-forward.h"

__host__ void GPUInterface::conv_forward_gpu_prolog(const float* host_output, const float* host_input,
                                                    const float* host_mask, float** device_output_ptr,
                                                    float** device_input_ptr, float** device_mask_ptr,
                                                    const int Batch, const int Map_out, const int Channel,
                                                    const int Height, const int Width, const int K) {
  (void)host_output;
  const size_t in_bytes = size_t(Batch) * Channel * Height * Width * sizeof(float);
  const size_t out_bytes = size_t(Batch) * Map_out * (Height - K + 1) * (Width - K + 1) * sizeof(float);
  cudaMalloc((void**)device_input_ptr, in_bytes);
  cudaMalloc((void**)device_output_ptr, out_bytes);
  cudaMemcpy(*device_input_ptr, host_input, in_bytes, cudaMemcpyHostToDevice);
  upload_mask(host_mask, Map_out * Channel * K * K);
  *device_mask_ptr = nullptr;
}

__host__ void GPUInterface::conv_forward_gpu(float* device_output, const float* device_input,
                                             const float* device_mask, const int Batch, const int Map_out,
                                             const int Channel, const int Height, const int Width, const int K) {
  (void)device_mask;
  launch_conv(device_output, device_input, Batch, Map_out, Channel, Height, Width, K);
}

__host__ void GPUInterface::conv_forward_gpu_epilog(float* host_output, float* device_output, float* device_input,
                                                    float* device_mask, const int Batch, const int Map_out,
                                                    const int Channel, const int Height, const int Width,
                                                    const int K) {
  (void)Channel;
  const size_t out_bytes = size_t(Batch) * Map_out * (Height - K + 1) * (Width - K + 1) * sizeof(float);
  cudaMemcpy(host_output, device_output, out_bytes, cudaMemcpyDeviceToHost);
  cudaFree(device_output);
  cudaFree(device_input);
  cudaFree(device_mask);  // null: cudaFree(nullptr) does nothing
}

__host__ void GPUInterface::get_device_properties() {
  int count = 0;
  cudaGetDeviceCount(&count);
  for (int d = 0; d < count; ++d) {
    cudaDeviceProp prop;
    cudaGetDeviceProperties(&prop, d);
    std::printf("Device %d name: %s, compute capability %d.%d, %d SMs\n", d, prop.name, prop.major, prop.minor,
                prop.multiProcessorCount);
  }
}
