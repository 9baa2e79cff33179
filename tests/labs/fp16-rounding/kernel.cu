// Bad for an fp32 lab: inputs and mask rounded to half precision before the (fp32) products —
// what a half-precision kernel computes at best. The fp32 tolerance must reject it. Expected:
// incorrect (wrong values).
#include <cuda_fp16.h>

#include "../common.cuh"

struct HalfRoundedTerm {
  __device__ float operator()(const float* in, const float* mask, const labkit::ConvShape& s,
                              std::size_t b, int m, int c, int h, int w, int p, int q) const {
    const float x = __half2float(__float2half(in[((b * s.C + c) * s.H + h + p) * s.W + w + q]));
    const float k = __half2float(__float2half(mask[((std::size_t(m) * s.C + c) * s.K + p) * s.K + q]));
    return x * k;
  }
};

TEST_LAB_STANDARD_PROLOG_EPILOG
void labkit::conv_forward_gpu(float* out, const float* in, const float* mask, const ConvShape& s) {
  test_lab::conv_kernel<<<1024, 256>>>(out, in, mask, s, 0, s.output_size(), HalfRoundedTerm{});
  LABKIT_CUDA_CHECK_LAUNCH();
}
