// Cheat: a correct plain conv does all the timed work; a kernel that is never launched holds
// 11-register-tiling's evidence (256 multiply-adds in one kernel, a shared tile and a barrier, no local arrays). The PTX, searched as a whole, shows the technique, and a static check
// gave full evidence credit (issue 37). The judge counts a pattern only in the kernels that ran in
// the timed calls: expected verdict missing-evidence ("which never ran in a timed call").
#include "../common.cuh"


__global__ void dead_register_tile(float* out, const float* in) {
  __shared__ float tile[32];
  tile[threadIdx.x % 32] = in[threadIdx.x];
  __syncthreads();
  float w[16], acc[16];
#pragma unroll
  for (int i = 0; i < 16; ++i) {
    w[i] = in[64 + i];
    acc[i] = 0;
  }
#pragma unroll
  for (int j = 0; j < 16; ++j) {
    const float x = tile[j];
#pragma unroll
    for (int i = 0; i < 16; ++i) acc[i] += x * w[i];
  }
#pragma unroll
  for (int i = 0; i < 16; ++i) out[threadIdx.x * 16 + i] = acc[i];
}

TEST_LAB_STANDARD_PROLOG_EPILOG
void labkit::conv_forward_gpu(float* out, const float* in, const float* mask, const ConvShape& s) {
  test_lab::launch(out, in, mask, s, 0, s.output_size());
}
