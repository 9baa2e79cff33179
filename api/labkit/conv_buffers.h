// labkit/conv_buffers.h — the standard prolog and epilog of a conv lab, for labs to call.
//
// Contract
//   * standard_prolog: allocates device_output, device_input and device_mask for `shape`
//     (output_size, input_size and mask_size floats) and copies the host input and mask to the
//     device, synchronously. The output is left unwritten: producing it is the forward pass's job.
//   * standard_epilog: copies the device output to host_output, synchronously, then frees the
//     three device buffers.
//   * Both throw labkit::CudaError on any CUDA failure (labkit/cuda_check.h).
//   * Each device buffer carries guard bytes after its end (labkit/guard_regions.h): the kit
//     finds a write past the end of the output, the input or the mask after every call.
// Most labs' prolog and epilog are exactly these, as in the baseline; a lab that needs more (a
// __constant__ copy, a workspace, streams) calls them and adds its own steps.
#pragma once

#include <cuda_runtime.h>

#include "labkit/conv.h"
#include "labkit/cuda_check.h"
#include "labkit/guard_regions.h"

namespace labkit {

inline void standard_prolog(const float* host_input, const float* host_mask, float** device_output,
                            float** device_input, float** device_mask, const ConvShape& shape) {
  const std::size_t output_bytes = shape.output_size() * sizeof(float);
  const std::size_t input_bytes = shape.input_size() * sizeof(float);
  const std::size_t mask_bytes = shape.mask_size() * sizeof(float);
  auto allocate = [](float** p, std::size_t bytes) {
    LABKIT_CUDA_CHECK(cudaMalloc(reinterpret_cast<void**>(p), bytes + guards::kGuardBytes));
    LABKIT_CUDA_CHECK(cudaMemset(reinterpret_cast<char*>(*p) + bytes, guards::kGuardByte, guards::kGuardBytes));
    guards::add(*p, bytes);
  };
  allocate(device_output, output_bytes);
  allocate(device_input, input_bytes);
  allocate(device_mask, mask_bytes);
  LABKIT_CUDA_CHECK(cudaMemcpy(*device_input, host_input, input_bytes, cudaMemcpyHostToDevice));
  LABKIT_CUDA_CHECK(cudaMemcpy(*device_mask, host_mask, mask_bytes, cudaMemcpyHostToDevice));
}

inline void standard_epilog(float* host_output, float* device_output, float* device_input,
                            float* device_mask, const ConvShape& shape) {
  LABKIT_CUDA_CHECK(cudaMemcpy(host_output, device_output, shape.output_size() * sizeof(float),
                               cudaMemcpyDeviceToHost));
  for (const float* p : {device_output, device_input, device_mask}) guards::remove(p);
  LABKIT_CUDA_CHECK(cudaFree(device_output));
  LABKIT_CUDA_CHECK(cudaFree(device_input));
  LABKIT_CUDA_CHECK(cudaFree(device_mask));
}

}  // namespace labkit
