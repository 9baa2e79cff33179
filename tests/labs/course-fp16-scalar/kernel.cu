// The course's FP16 milestone in the form a student report used: inputs and weights cast to __half,
// each product a scalar __hmul on __half (mul.f16 in PTX), summed in float. No __half2 anywhere:
// the course asks for FP16 arithmetic, the lab (09) for paired arithmetic.
// Expected (evidence suite, with 09's patterns copied into this lab.json; test_lab_spec checks the
// copy): missing-evidence under the general contract (no f16x2), evidence found under the course
// contract (lab.json course_evidence: scalar half arithmetic counts).
#include <cuda_fp16.h>

#include "../common.cuh"

struct ScalarHalfTerm {
  __device__ float operator()(const float* in, const float* mask, const labkit::ConvShape& s,
                              std::size_t b, int m, int c, int h, int w, int p, int q) const {
    const __half x = __float2half(in[((b * s.C + c) * s.H + h + p) * s.W + w + q]);
    const __half k = __float2half(mask[((std::size_t(m) * s.C + c) * s.K + p) * s.K + q]);
    return __half2float(__hmul(x, k));
  }
};

TEST_LAB_STANDARD_PROLOG_EPILOG
void labkit::conv_forward_gpu(float* out, const float* in, const float* mask, const ConvShape& s) {
  test_lab::conv_kernel<<<1024, 256>>>(out, in, mask, s, 0, s.output_size(), ScalarHalfTerm{});
  LABKIT_CUDA_CHECK_LAUNCH();
}
