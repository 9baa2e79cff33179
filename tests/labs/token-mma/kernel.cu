// Cheat: every call of conv_forward_gpu launches a real tensor-core kernel (one warp, one
// m16n8k8 TF32 MMA on 256 floats of scratch) next to the plain fp32 conv that does all the work.
// A check of "which kernels ran" alone is satisfied: the MMA kernel runs in every timed call. It
// takes a few microseconds of the call's milliseconds, and the judge wants the kernels carrying
// lab 12's patterns to take at least half of the timed GPU time: expected verdict
// missing-evidence ("of timed GPU time; needs 50%").
#include "../common.cuh"
#include "../one_mma.cuh"

__device__ float token_scratch[256 + 128];
__global__ void token_mma() { one_mma(token_scratch, token_scratch, token_scratch + 128, threadIdx.x % 32); }

TEST_LAB_STANDARD_PROLOG_EPILOG
void labkit::conv_forward_gpu(float* out, const float* in, const float* mask, const ConvShape& s) {
  token_mma<<<1, 32>>>();
  LABKIT_CUDA_CHECK_LAUNCH();
  test_lab::launch(out, in, mask, s, 0, s.output_size());
}
