// Cheat: epilog-compute. conv_forward_gpu (the timed Op Time) does nothing; the untimed epilog
// runs the real conv just before it copies the output back. On a grader that checks only what the
// epilog delivers, every output is right and the op takes microseconds: a huge speedup.
// Expected verdict: hidden-work, 0 points. The kit takes a digest of the device output the moment
// conv_forward_gpu returns (inside the timed request); the output the epilog delivers later does
// not match it. Correctness cases (whole calls) pass: only the timed calls reveal it.
#include "../common.cuh"

void labkit::conv_forward_gpu_prolog(const float*, const float* host_input, const float* host_mask,
                                     float** device_output, float** device_input, float** device_mask,
                                     const ConvShape& shape) {
  labkit::standard_prolog(host_input, host_mask, device_output, device_input, device_mask, shape);
}

void labkit::conv_forward_gpu(float*, const float*, const float*, const ConvShape&) {}

void labkit::conv_forward_gpu_epilog(float* host_output, float* device_output, float* device_input,
                                     float* device_mask, const ConvShape& shape) {
  test_lab::launch(device_output, device_input, device_mask, shape, 0, shape.output_size());
  labkit::standard_epilog(host_output, device_output, device_input, device_mask, shape);
}
