// Cheat: a correct plain conv does all the timed work; a kernel that is never launched holds
// 12-tensor-cores's evidence (mma ... .tf32 and cvt.rna.tf32.f32). The PTX, searched as a whole, shows the technique, and a static check
// gave full evidence credit (issue 37). The judge counts a pattern only in the kernels that ran in
// the timed calls: expected verdict missing-evidence ("which never ran in a timed call").
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

__global__ void dead_mma(float* out, const float* a, const float* b) { one_mma(out, a, b, threadIdx.x % 32); }

TEST_LAB_STANDARD_PROLOG_EPILOG
void labkit::conv_forward_gpu(float* out, const float* in, const float* mask, const ConvShape& s) {
  test_lab::launch(out, in, mask, s, 0, s.output_size());
}
