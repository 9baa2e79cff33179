// Cheat: the kernel that does all the timed work holds lab 12's tensor-core code, in a branch it
// never takes (K < 0 never happens, but the compiler cannot know). The PTX patterns are in the
// kernel that ran for 100% of the timed GPU time, so the evidence of the kernels that ran is met;
// only a count of what executed sees no tensor-core math. Expected verdict, where Nsight Compute
// can read the GPU's counters: missing-evidence ("Executed counters").
#include "../common.cuh"

// One m16n8k8 TF32 MMA per warp on scratch (as token-mma's).
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

__device__ float branch_scratch[256 + 128];

__global__ void conv_with_dead_branch(float* out, const float* in, const float* mask, labkit::ConvShape s,
                                      std::size_t total) {
  if (s.K < 0) {  // never taken
    one_mma(branch_scratch, branch_scratch, branch_scratch + 128, threadIdx.x % 32);
    return;
  }
  const test_lab::PlainTerm term;
  const int ho = s.H_out(), wo = s.W_out();
  for (std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; i < total; i += std::size_t(gridDim.x) * blockDim.x) {
    const int w = int(i % wo), h = int(i / wo % ho), m = int(i / (std::size_t(wo) * ho) % s.M);
    const std::size_t b = i / (std::size_t(wo) * ho * s.M);
    float acc = 0;
    for (int c = 0; c < s.C; ++c)
      for (int p = 0; p < s.K; ++p)
        for (int q = 0; q < s.K; ++q) acc += term(in, mask, s, b, m, c, h, w, p, q);
    out[i] = acc;
  }
}

TEST_LAB_STANDARD_PROLOG_EPILOG
void labkit::conv_forward_gpu(float* out, const float* in, const float* mask, const ConvShape& s) {
  conv_with_dead_branch<<<1024, 256>>>(out, in, mask, s, s.output_size());
  LABKIT_CUDA_CHECK_LAUNCH();
}
