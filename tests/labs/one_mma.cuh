// one_mma.cuh — one m16n8k8 TF32 MMA per warp, for the test labs that carry lab 12's evidence
// without doing the conv with it (token-mma, dead-mma, branch-mma). Not a lab: this folder has no
// kernel.cu.
#pragma once

// The operands rounded to TF32 (cvt.rna) and multiplied on the tensor cores: a[lane * 4 + 0..3]
// and b[lane * 2 + 0..1] in, out[lane * 4 + 0..3] the accumulators.
__device__ inline void one_mma(float* out, const float* a, const float* b, unsigned lane) {
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
