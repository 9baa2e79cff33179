// Lab 01 done halfway: __restrict__ pointers and `#pragma unroll 7` on a loop whose bound K is
// only known at run time. The compiler unrolls each loop by 7 and keeps a remainder loop, so the
// kernel holds 49 multiply-adds in straight-line code, yet no kernel is specialized for K = 7:
// the loop counters, bound checks and run-time address arithmetic stay. Correct.
// Expected verdict: missing-evidence (lab 01's patterns ask for the 49 inside a kernel
// instantiated with K = 7).
#include "../common.cuh"

namespace {

__global__ void conv_runtime_k(float* __restrict__ out, const float* __restrict__ in, const float* __restrict__ mask,
                               int B, int M, int C, int H, int W, int K) {
  const int H_out = H - K + 1, W_out = W - K + 1;
  const long long n = 1LL * B * M * H_out * W_out;
  for (long long i = blockIdx.x * 1LL * blockDim.x + threadIdx.x; i < n; i += 1LL * gridDim.x * blockDim.x) {
    const int w = int(i % W_out), h = int(i / W_out % H_out), m = int(i / (1LL * W_out * H_out) % M);
    const int b = int(i / (1LL * W_out * H_out * M));
    float acc = 0.0f;
    for (int c = 0; c < C; ++c) {
#pragma unroll 7
      for (int p = 0; p < K; ++p) {
#pragma unroll 7
        for (int q = 0; q < K; ++q)
          acc += in[((1LL * b * C + c) * H + h + p) * W + w + q] * mask[((1LL * m * C + c) * K + p) * K + q];
      }
    }
    out[i] = acc;
  }
}

}  // namespace

TEST_LAB_STANDARD_PROLOG_EPILOG
void labkit::conv_forward_gpu(float* out, const float* in, const float* mask, const ConvShape& s) {
  conv_runtime_k<<<1024, 256>>>(out, in, mask, s.B, s.M, s.C, s.H, s.W, s.K);
  LABKIT_CUDA_CHECK(cudaGetLastError());
}
