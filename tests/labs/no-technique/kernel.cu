// Correct but without the technique lab.json asks for. Expected: missing-evidence on the GPU
// (correctness share only), and the evidence suite reports both patterns missing.
#include "../common.cuh"

TEST_LAB_STANDARD_PROLOG_EPILOG
void labkit::conv_forward_gpu(float* out, const float* in, const float* mask, const ConvShape& s) {
  test_lab::launch(out, in, mask, s, 0, s.output_size());
}
