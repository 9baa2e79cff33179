// Cheat: the kernel that does all the timed work holds lab 12's tensor-core code, in a branch it
// never takes (K < 0 never happens, but the compiler cannot know). The PTX patterns are in the
// kernel that ran for 100% of the timed GPU time, so the evidence of the kernels that ran is met;
// only a count of what executed sees no tensor-core math. Expected verdict, where Nsight Compute
// can read the GPU's counters: missing-evidence ("Executed counters").
#include "../common.cuh"
#include "../one_mma.cuh"

__device__ float branch_scratch[256 + 128];

__global__ void conv_with_dead_branch(float* out, const float* in, const float* mask, labkit::ConvShape s,
                                      std::size_t total) {
  if (s.K < 0) {  // never taken
    one_mma(branch_scratch, branch_scratch, branch_scratch + 128, threadIdx.x % 32);
    return;
  }
  test_lab::conv_elements(out, in, mask, s, 0, total);
}

TEST_LAB_STANDARD_PROLOG_EPILOG
void labkit::conv_forward_gpu(float* out, const float* in, const float* mask, const ConvShape& s) {
  conv_with_dead_branch<<<1024, 256>>>(out, in, mask, s, s.output_size());
  LABKIT_CUDA_CHECK_LAUNCH();
}
