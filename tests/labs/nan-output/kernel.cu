// Bad: correct, then one NaN in the middle of the output. Expected verdict: incorrect (NaN).
#include <cmath>

#include "../common.cuh"

__global__ void spoil(float* out, std::size_t i) { out[i] = nanf(""); }

TEST_LAB_STANDARD_PROLOG_EPILOG
void labkit::conv_forward_gpu(float* out, const float* in, const float* mask, const ConvShape& s) {
  test_lab::launch(out, in, mask, s, 0, s.output_size());
  spoil<<<1, 1>>>(out, s.output_size() / 2);
  LABKIT_CUDA_CHECK_LAUNCH();
}
