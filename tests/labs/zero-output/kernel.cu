// Bad: writes zeros instead of the convolution. Expected verdict: incorrect (all zeros).
#include "../common.cuh"

TEST_LAB_STANDARD_PROLOG_EPILOG
void labkit::conv_forward_gpu(float* out, const float*, const float*, const ConvShape& s) {
  LABKIT_CUDA_CHECK(cudaMemset(out, 0, s.output_size() * sizeof(float)));
}
