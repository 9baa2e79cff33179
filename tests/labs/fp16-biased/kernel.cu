// Bad for the network, though every element passes the fp16 tolerance: the exact sum minus 80% of
// the element's fp16 allowance, gamma_k * sum|x*w| (docs/grading.md, k = C*K*K + 2, u = 2^-11).
// Rounding errors that all lean one way are what a long low-precision sum can produce; here they
// are as large as the tolerance lets them be, so the network's decisions move.
// Expected: incorrect, the "network accuracy" case fails (accuracy lost).
#include "../common.cuh"

__global__ void biased_kernel(float* out, const float* in, const float* mask, labkit::ConvShape s) {
  const std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x;
  if (i >= s.output_size()) return;
  const int W_out = s.W_out(), H_out = s.H_out();
  const int w = static_cast<int>(i % W_out), h = static_cast<int>(i / W_out % H_out);
  const int m = static_cast<int>(i / (std::size_t(W_out) * H_out) % s.M);
  const std::size_t b = i / (std::size_t(W_out) * H_out * s.M);
  double sum = 0, scale = 0;
  for (int c = 0; c < s.C; ++c)
    for (int p = 0; p < s.K; ++p)
      for (int q = 0; q < s.K; ++q) {
        const double t = double(in[((b * s.C + c) * s.H + h + p) * s.W + w + q]) *
                         mask[((std::size_t(m) * s.C + c) * s.K + p) * s.K + q];
        sum += t;
        scale += fabs(t);
      }
  const double ku = (s.C * s.K * s.K + 2) / 2048.0;
  out[i] = static_cast<float>(sum - 0.8 * ku / (1 - ku) * scale);
}

TEST_LAB_STANDARD_PROLOG_EPILOG
void labkit::conv_forward_gpu(float* out, const float* in, const float* mask, const ConvShape& s) {
  biased_kernel<<<static_cast<unsigned>((s.output_size() + 255) / 256), 256>>>(out, in, mask, s);
  LABKIT_CUDA_CHECK_LAUNCH();
}
