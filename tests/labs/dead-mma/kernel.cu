// Cheat: a correct plain conv does all the timed work; a kernel that is never launched holds
// 12-tensor-cores's evidence (mma ... .tf32 and cvt.rna.tf32.f32). The PTX, searched as a whole, shows the technique, and a static check
// gave full evidence credit (issue 37). The judge counts a pattern only in the kernels that ran in
// the timed calls: expected verdict missing-evidence ("which never ran in a timed call").
#include "../common.cuh"
#include "../one_mma.cuh"

__global__ void dead_mma(float* out, const float* a, const float* b) { one_mma(out, a, b, threadIdx.x % 32); }

TEST_LAB_STANDARD_PROLOG_EPILOG
void labkit::conv_forward_gpu(float* out, const float* in, const float* mask, const ConvShape& s) {
  test_lab::launch(out, in, mask, s, 0, s.output_size());
}
