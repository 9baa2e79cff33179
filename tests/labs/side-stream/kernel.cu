// Bad: computes the right answer on a non-blocking stream and returns at once, so the CUDA events
// on the default stream time nothing. Expected verdict: hidden-work.
#include "../common.cuh"

TEST_LAB_STANDARD_PROLOG_EPILOG
void labkit::conv_forward_gpu(float* out, const float* in, const float* mask, const ConvShape& s) {
  static cudaStream_t side = [] {
    cudaStream_t st;
    LABKIT_CUDA_CHECK(cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking));
    return st;
  }();
  test_lab::launch(out, in, mask, s, 0, s.output_size(), side);
}
