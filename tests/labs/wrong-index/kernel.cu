// Bad: reads the mask transposed (p and q swapped), a classic indexing slip. Expected: incorrect
// (wrong values), with the first mismatches listed as (b, m, h, w).
#include "../common.cuh"

struct TransposedMask {
  __device__ float operator()(const float* in, const float* mask, const labkit::ConvShape& s,
                              std::size_t b, int m, int c, int h, int w, int p, int q) const {
    return in[((b * s.C + c) * s.H + h + p) * s.W + w + q] *
           mask[((std::size_t(m) * s.C + c) * s.K + q) * s.K + p];
  }
};

TEST_LAB_STANDARD_PROLOG_EPILOG
void labkit::conv_forward_gpu(float* out, const float* in, const float* mask, const ConvShape& s) {
  test_lab::conv_kernel<<<1024, 256>>>(out, in, mask, s, 0, s.output_size(), TransposedMask{});
  LABKIT_CUDA_CHECK_LAUNCH();
}
