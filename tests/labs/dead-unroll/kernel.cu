// Cheat: a correct plain conv does all the timed work; a kernel that is never launched holds
// 01-restrict-unroll's evidence (__restrict__ read-only loads, 49 multiply-adds in a K = 7 instance). The PTX, searched as a whole, shows the technique, and a static check
// gave full evidence credit (issue 37). The judge counts a pattern only in the kernels that ran in
// the timed calls: expected verdict missing-evidence ("which never ran in a timed call").
#include "../common.cuh"


// Instantiated with K = 7 (the display name lab 01's pattern filters on), never launched.
template <int K>
__global__ void dead_unrolled(float* __restrict__ out, const float* __restrict__ in, const float* __restrict__ mask) {
  float acc = 0;
#pragma unroll
  for (int p = 0; p < K; ++p)
#pragma unroll
    for (int q = 0; q < K; ++q) acc += __ldg(&in[threadIdx.x + p * 64 + q]) * __ldg(&mask[p * K + q]);
  out[threadIdx.x] = acc;
}
template __global__ void dead_unrolled<7>(float* __restrict__, const float* __restrict__, const float* __restrict__);

TEST_LAB_STANDARD_PROLOG_EPILOG
void labkit::conv_forward_gpu(float* out, const float* in, const float* mask, const ConvShape& s) {
  test_lab::launch(out, in, mask, s, 0, s.output_size());
}
