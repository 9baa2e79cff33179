// Bad: correct output, but it scribbles on its input afterwards. Expected verdict: input-modified.
#include "../common.cuh"

TEST_LAB_STANDARD_PROLOG_EPILOG
void labkit::conv_forward_gpu(float* out, const float* in, const float* mask, const ConvShape& s) {
  test_lab::launch(out, in, mask, s, 0, s.output_size());
  LABKIT_CUDA_CHECK(cudaMemset(const_cast<float*>(in), 0, sizeof(float)));
}
