// Cheat: a correct plain conv does all the timed work; a kernel that is never launched holds
// 03-tiling (and 05, 06: the same patterns)'s evidence (shared-memory loads and a barrier). The PTX, searched as a whole, shows the technique, and a static check
// gave full evidence credit (issue 37). The judge counts a pattern only in the kernels that ran in
// the timed calls: expected verdict missing-evidence ("which never ran in a timed call").
#include "../common.cuh"


__global__ void dead_tiled(float* out, const float* in) {
  __shared__ float tile[256];
  tile[threadIdx.x] = in[threadIdx.x];
  __syncthreads();
  out[threadIdx.x] = tile[255 - threadIdx.x];
}

TEST_LAB_STANDARD_PROLOG_EPILOG
void labkit::conv_forward_gpu(float* out, const float* in, const float* mask, const ConvShape& s) {
  test_lab::launch(out, in, mask, s, 0, s.output_size());
}
