// Cheat: early-exit. The first prolog calls exit(0): the process ends "successfully" before any
// output is checked.
// On a naive grader that goes by exit status (`meson test` counts a lab executable that exits 0 as
// a passed test; a Gradescope script mapping passed tests to points) this is full marks; exit(0)
// also runs the atexit handlers and flushes stdio, so it looks like a clean finish.
// Expected verdict: protocol-error (the harness exits before answering the prolog request).
// 0 points.
#include <cstdlib>

#include "../common.cuh"

void labkit::conv_forward_gpu_prolog(const float*, const float*, const float*, float**, float**, float**,
                                     const ConvShape&) {
  std::exit(0);
}
void labkit::conv_forward_gpu(float* out, const float* in, const float* mask, const ConvShape& s) {
  test_lab::launch(out, in, mask, s, 0, s.output_size());
}
void labkit::conv_forward_gpu_epilog(float* host_output, float* device_output, float* device_input,
                                     float* device_mask, const ConvShape& shape) {
  labkit::standard_epilog(host_output, device_output, device_input, device_mask, shape);
}
