// Bad: oob-own-buffer. A correct conv that computes into an output buffer of its own (cudaMalloc'd
// in the prolog, exactly the output's size), writes 16 KiB (4096 floats) past that buffer's end,
// and copies its right output into the kit's output at the end of each call.
// The kit's guard regions sit only after the buffers of standard_prolog, so a normal grade sees no
// changed guard, no CUDA error (cudaMalloc rounds up: the overrun lands in padding) and a right
// output: it passed, 1.00/2.00 as the plain conv it is (issue 37). In a real program the overrun
// corrupts whatever the allocator put after the buffer.
// Expected verdict: out-of-bounds from the memory check of every grade (compute-sanitizer memcheck:
// "Invalid __global__ write" at this file's store_overhang line), without any flag. 0 points.
#include "../common.cuh"

namespace {

float* own_output = nullptr;  // the lab's own buffer, output_size floats

// The overhang of the last tile: 4096 floats from `past_end` on.
__global__ void store_overhang(float* past_end) {
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < 4096; i += gridDim.x * blockDim.x) past_end[i] = 1.0f + i;
}

}  // namespace

void labkit::conv_forward_gpu_prolog(const float*, const float* host_input, const float* host_mask,
                                     float** device_output, float** device_input, float** device_mask,
                                     const ConvShape& s) {
  labkit::standard_prolog(host_input, host_mask, device_output, device_input, device_mask, s);
  LABKIT_CUDA_CHECK(cudaMalloc(&own_output, s.output_size() * sizeof(float)));
}

void labkit::conv_forward_gpu(float* out, const float* in, const float* mask, const ConvShape& s) {
  test_lab::launch(own_output, in, mask, s, 0, s.output_size());
  store_overhang<<<16, 256>>>(own_output + s.output_size());
  LABKIT_CUDA_CHECK_LAUNCH();
  LABKIT_CUDA_CHECK(cudaMemcpyAsync(out, own_output, s.output_size() * sizeof(float), cudaMemcpyDeviceToDevice));
}

void labkit::conv_forward_gpu_epilog(float* host_output, float* device_output, float* device_input,
                                     float* device_mask, const ConvShape& s) {
  labkit::standard_epilog(host_output, device_output, device_input, device_mask, s);
  LABKIT_CUDA_CHECK(cudaFree(own_output));
  own_output = nullptr;
}
