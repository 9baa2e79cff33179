// Cheat: a correct plain conv does all the timed work; a kernel that is never launched holds
// 09-fp16's evidence (paired half-precision multiply-adds). The PTX, searched as a whole, shows the technique, and a static check
// gave full evidence credit (issue 37). The judge counts a pattern only in the kernels that ran in
// the timed calls: expected verdict missing-evidence ("which never ran in a timed call").
#include "../common.cuh"
#include <cuda_fp16.h>


__global__ void dead_half2(__half2* out, const __half2* a, const __half2* b) {
  out[threadIdx.x] = __hfma2(a[threadIdx.x], b[threadIdx.x], out[threadIdx.x]);
}

TEST_LAB_STANDARD_PROLOG_EPILOG
void labkit::conv_forward_gpu(float* out, const float* in, const float* mask, const ConvShape& s) {
  test_lab::launch(out, in, mask, s, 0, s.output_size());
}
