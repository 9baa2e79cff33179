// Lab 12's evidence dodged on Hopper: the tf32 MMA and its rounding exist only in code built for
// the portable targets, and the code a Hopper runs (sm_90a, lab.json "arch_specific") is the plain
// fp32 conv. Where the build has sm_90, the evidence reads compute_90a PTX, the code that runs
// there. Expected: missing-evidence for both patterns.
#include "../common.cuh"

// Never launched; only its PTX matters.
__global__ void portable_only_mma(float* out, const float* a, const float* b) {
#if defined(__CUDA_ARCH__) && !defined(__CUDA_ARCH_FEAT_SM90_ALL)
  unsigned r[6];
  for (int i = 0; i < 4; ++i) asm("cvt.rna.tf32.f32 %0, %1;" : "=r"(r[i]) : "f"(a[i]));
  for (int i = 0; i < 2; ++i) asm("cvt.rna.tf32.f32 %0, %1;" : "=r"(r[4 + i]) : "f"(b[i]));
  float d[4] = {};
  asm("mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, "
      "{%0, %1, %2, %3};"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
      : "r"(r[0]), "r"(r[1]), "r"(r[2]), "r"(r[3]), "r"(r[4]), "r"(r[5]));
  for (int i = 0; i < 4; ++i) out[i] = d[i];
#else
  (void)out, (void)a, (void)b;
#endif
}

TEST_LAB_STANDARD_PROLOG_EPILOG
void labkit::conv_forward_gpu(float* out, const float* in, const float* mask, const ConvShape& s) {
  test_lab::launch(out, in, mask, s, 0, s.output_size());
}
