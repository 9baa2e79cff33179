// Bad: correct at every fixture (all of them small batches), but at the capstone's grading batch
// it computes the first half of the images and writes zeros for the rest: finite values, twice as
// fast, and invisible to every check made at another batch. Only the timed calls' own checks, on
// fresh inputs at the grading batch, can see it. Expected verdict: incorrect.
#include "../common.cuh"

TEST_LAB_STANDARD_PROLOG_EPILOG
void labkit::conv_forward_gpu(float* out, const float* in, const float* mask, const ConvShape& s) {
  if (s.B < 5000) {
    test_lab::launch(out, in, mask, s, 0, s.output_size());
    return;
  }
  const std::size_t half = s.output_size() / 2;
  test_lab::launch(out, in, mask, s, 0, half);
  LABKIT_CUDA_CHECK(cudaMemsetAsync(out + half, 0, (s.output_size() - half) * sizeof(float)));
}
