// Bad: the prolog allocates the device input but never copies the host input into it (a streams
// pipeline whose copies were left out). Expected: incorrect, "input not copied", not "input
// modified": the input did not change during the call, it was never there.
#include "../common.cuh"

void labkit::conv_forward_gpu_prolog(const float*, const float*, const float* host_mask,
                                     float** device_output, float** device_input, float** device_mask,
                                     const ConvShape& s) {
  LABKIT_CUDA_CHECK(cudaMalloc(device_output, s.output_size() * sizeof(float)));
  LABKIT_CUDA_CHECK(cudaMalloc(device_input, s.input_size() * sizeof(float)));
  LABKIT_CUDA_CHECK(cudaMalloc(device_mask, s.mask_size() * sizeof(float)));
  LABKIT_CUDA_CHECK(cudaMemset(*device_input, 0, s.input_size() * sizeof(float)));
  LABKIT_CUDA_CHECK(cudaMemcpy(*device_mask, host_mask, s.mask_size() * sizeof(float), cudaMemcpyHostToDevice));
}

void labkit::conv_forward_gpu(float* out, const float* in, const float* mask, const ConvShape& s) {
  test_lab::launch(out, in, mask, s, 0, s.output_size());
}

void labkit::conv_forward_gpu_epilog(float* host_output, float* device_output, float* device_input,
                                     float* device_mask, const ConvShape& s) {
  labkit::standard_epilog(host_output, device_output, device_input, device_mask, s);
}
