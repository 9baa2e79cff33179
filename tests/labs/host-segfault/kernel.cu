// Bad: the prolog writes through a null host pointer. Expected verdict: crashed (SIGSEGV).
#include "../common.cuh"

void labkit::conv_forward_gpu_prolog(const float*, const float* host_input, const float* host_mask,
                                     float** device_output, float** device_input, float** device_mask,
                                     const ConvShape& shape) {
  volatile float* nowhere = nullptr;
  *nowhere = 1.0f;
  labkit::standard_prolog(host_input, host_mask, device_output, device_input, device_mask, shape);
}
void labkit::conv_forward_gpu(float* out, const float* in, const float* mask, const ConvShape& s) {
  test_lab::launch(out, in, mask, s, 0, s.output_size());
}
void labkit::conv_forward_gpu_epilog(float* host_output, float* device_output, float* device_input,
                                     float* device_mask, const ConvShape& shape) {
  labkit::standard_epilog(host_output, device_output, device_input, device_mask, shape);
}
