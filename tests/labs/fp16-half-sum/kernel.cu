// Bad for the network, though every element passes the fp16 tolerance: inputs, mask, products
// and the whole sum of C*K*K terms in half precision (__hmul, __hadd), as a student report did;
// only the result is float. Each element's error stays within the fp16 allowance, but the
// roundings of a long half sum lean the same way and move the network's decisions.
// Expected: incorrect, the "network accuracy" case fails (accuracy lost).
#include <cuda_fp16.h>

#include "../common.cuh"

__global__ void half_sum_kernel(float* out, const float* in, const float* mask, labkit::ConvShape s) {
  const std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x;
  if (i >= s.output_size()) return;
  const int W_out = s.W_out(), H_out = s.H_out();
  const int w = static_cast<int>(i % W_out), h = static_cast<int>(i / W_out % H_out);
  const int m = static_cast<int>(i / (std::size_t(W_out) * H_out) % s.M);
  const std::size_t b = i / (std::size_t(W_out) * H_out * s.M);
  __half acc = __float2half(0.0f);
  for (int c = 0; c < s.C; ++c)
    for (int p = 0; p < s.K; ++p)
      for (int q = 0; q < s.K; ++q) {
        const __half x = __float2half(in[((b * s.C + c) * s.H + h + p) * s.W + w + q]);
        const __half k = __float2half(mask[((std::size_t(m) * s.C + c) * s.K + p) * s.K + q]);
        acc = __hadd(acc, __hmul(x, k));
      }
  out[i] = __half2float(acc);
}

TEST_LAB_STANDARD_PROLOG_EPILOG
void labkit::conv_forward_gpu(float* out, const float* in, const float* mask, const ConvShape& s) {
  half_sum_kernel<<<static_cast<unsigned>((s.output_size() + 255) / 256), 256>>>(out, in, mask, s);
  LABKIT_CUDA_CHECK_LAUNCH();
}
