// Cheat: a correct plain conv does all the timed work; a kernel that is never launched holds
// 08-tree-reduction's evidence (partial sums exchanged through shuffles). The PTX, searched as a whole, shows the technique, and a static check
// gave full evidence credit (issue 37). The judge counts a pattern only in the kernels that ran in
// the timed calls: expected verdict missing-evidence ("which never ran in a timed call").
#include "../common.cuh"


__global__ void dead_shuffle(float* out, const float* in) {
  float v = in[blockIdx.x * blockDim.x + threadIdx.x];
  for (int offset = 16; offset > 0; offset >>= 1) v += __shfl_down_sync(0xffffffffu, v, offset);
  if (threadIdx.x % 32 == 0) out[blockIdx.x] = v;
}

TEST_LAB_STANDARD_PROLOG_EPILOG
void labkit::conv_forward_gpu(float* out, const float* in, const float* mask, const ConvShape& s) {
  test_lab::launch(out, in, mask, s, 0, s.output_size());
}
