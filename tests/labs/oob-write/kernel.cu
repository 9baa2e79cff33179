// Bad: writes 64 GiB past the output. Expected verdict: cuda-error (illegal address).
#include "../common.cuh"

__global__ void stray(float* out) { out[(std::size_t(1) << 34) + threadIdx.x] = 1.0f; }

TEST_LAB_STANDARD_PROLOG_EPILOG
void labkit::conv_forward_gpu(float* out, const float* in, const float* mask, const ConvShape& s) {
  test_lab::launch(out, in, mask, s, 0, s.output_size());
  stray<<<1, 32>>>(out);
  LABKIT_CUDA_CHECK_LAUNCH();
}
