// Cheat: every call of conv_forward_gpu launches a real tensor-core kernel (one warp, one
// m16n8k8 TF32 MMA on 256 floats of scratch) next to the plain fp32 conv that does all the work.
// A check of "which kernels ran" alone is satisfied: the MMA kernel runs in every timed call. It
// takes a few microseconds of the call's milliseconds, and the judge wants the kernels carrying
// lab 12's patterns to take at least half of the timed GPU time: expected verdict
// missing-evidence ("of timed GPU time; needs 50%").
#include "../common.cuh"

// One m16n8k8 TF32 MMA per warp: the operands rounded to TF32 (cvt.rna) and multiplied on the
// tensor cores.
__device__ void one_mma(float* out, const float* a, const float* b, unsigned lane) {
  unsigned ra[4], rb[2];
  float c[4] = {0, 0, 0, 0};
  for (int i = 0; i < 4; ++i) asm("cvt.rna.tf32.f32 %0, %1;" : "=r"(ra[i]) : "f"(a[lane * 4 + i]));
  for (int i = 0; i < 2; ++i) asm("cvt.rna.tf32.f32 %0, %1;" : "=r"(rb[i]) : "f"(b[lane * 2 + i]));
  asm volatile("mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, "
               "{%0, %1, %2, %3};"
               : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
               : "r"(ra[0]), "r"(ra[1]), "r"(ra[2]), "r"(ra[3]), "r"(rb[0]), "r"(rb[1]));
  for (int i = 0; i < 4; ++i) out[lane * 4 + i] = c[i];
}

__device__ float token_scratch[256 + 128];
__global__ void token_mma() { one_mma(token_scratch, token_scratch, token_scratch + 128, threadIdx.x % 32); }

TEST_LAB_STANDARD_PROLOG_EPILOG
void labkit::conv_forward_gpu(float* out, const float* in, const float* mask, const ConvShape& s) {
  token_mma<<<1, 32>>>();
  LABKIT_CUDA_CHECK_LAUNCH();
  test_lab::launch(out, in, mask, s, 0, s.output_size());
}
