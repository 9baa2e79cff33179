// Bad: computes only the first half of the output. Expected verdict: incorrect (never written).
#include "../common.cuh"

TEST_LAB_STANDARD_PROLOG_EPILOG
void labkit::conv_forward_gpu(float* out, const float* in, const float* mask, const ConvShape& s) {
  test_lab::launch(out, in, mask, s, 0, s.output_size() / 2);
}
