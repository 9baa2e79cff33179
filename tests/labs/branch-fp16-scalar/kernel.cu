// Cheat, under the course contract: branch-fp16 with a scalar __hfma on __half in the branch the
// timed kernel never takes (K < 0), beside a plain fp32 conv that does the work. 09's course
// pattern (any half arithmetic, lab.json course_evidence) is in the kernel that ran for all of the
// timed GPU time; only a count of executed half-precision FMAs sees none. Graded with
// --contract course. Expected verdict, where Nsight Compute can read the GPU's counters:
// missing-evidence ("Executed counters").
#include <cuda_fp16.h>

#include "../common.cuh"

__device__ __half branch_scratch[64];

__global__ void conv_with_dead_branch(float* out, const float* in, const float* mask, labkit::ConvShape s,
                                      std::size_t total) {
  if (s.K < 0) {  // never taken
    const unsigned t = threadIdx.x % 32;
    branch_scratch[t] = __hfma(branch_scratch[t], branch_scratch[t + 32], branch_scratch[t]);
    return;
  }
  test_lab::conv_elements(out, in, mask, s, 0, total);
}

TEST_LAB_STANDARD_PROLOG_EPILOG
void labkit::conv_forward_gpu(float* out, const float* in, const float* mask, const ConvShape& s) {
  conv_with_dead_branch<<<1024, 256>>>(out, in, mask, s, s.output_size());
  LABKIT_CUDA_CHECK_LAUNCH();
}
