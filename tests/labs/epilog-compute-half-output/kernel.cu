// Cheat: epilog-compute-half-output. The kit accepts device buffers of a lab's own type (an fp16
// lab's output is half the bytes), so this lab hands the kit a half-size device output that
// conv_forward_gpu (the timed Op Time) never writes, and runs the real conv in the untimed epilog,
// into a float buffer of its own, before copying it to the host. On a grader that seals only
// float outputs (or skips the seal for buffers it cannot read as floats) the op takes microseconds.
// Expected verdict: hidden-work, 0 points. A device output of at least 2 and fewer than 4 bytes
// an element is sealed as fp16: the digest of its halves, taken when conv_forward_gpu returns,
// must equal the digest of the floats the epilog delivers; here it holds the kit's poison.
#include "../common.cuh"

void labkit::conv_forward_gpu_prolog(const float*, const float* host_input, const float* host_mask,
                                     float** device_output, float** device_input, float** device_mask,
                                     const ConvShape& s) {
  LABKIT_CUDA_CHECK(cudaMalloc(device_output, s.output_size() * 2));  // "fp16": half the bytes
  LABKIT_CUDA_CHECK(cudaMalloc(device_input, s.input_size() * sizeof(float)));
  LABKIT_CUDA_CHECK(cudaMalloc(device_mask, s.mask_size() * sizeof(float)));
  LABKIT_CUDA_CHECK(cudaMemcpy(*device_input, host_input, s.input_size() * sizeof(float), cudaMemcpyHostToDevice));
  LABKIT_CUDA_CHECK(cudaMemcpy(*device_mask, host_mask, s.mask_size() * sizeof(float), cudaMemcpyHostToDevice));
}

void labkit::conv_forward_gpu(float*, const float*, const float*, const ConvShape&) {}

void labkit::conv_forward_gpu_epilog(float* host_output, float* device_output, float* device_input,
                                     float* device_mask, const ConvShape& s) {
  float* full = nullptr;
  LABKIT_CUDA_CHECK(cudaMalloc(&full, s.output_size() * sizeof(float)));
  test_lab::launch(full, device_input, device_mask, s, 0, s.output_size());
  LABKIT_CUDA_CHECK(cudaMemcpy(host_output, full, s.output_size() * sizeof(float), cudaMemcpyDeviceToHost));
  for (float* p : {full, device_output, device_input, device_mask}) LABKIT_CUDA_CHECK(cudaFree(p));
}
