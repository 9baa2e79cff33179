// nvcc -ptx -arch=compute_90 -std=c++20 half2.cu -o half2.ptx
// FP16 arithmetic on __half2 pairs (lab 09): two multiply-adds per instruction.
#include <cuda_fp16.h>

__global__ void half2_conv_kernel(__half2* out, const __half2* in, const __half2* mask, int W,
                                  int K) {
  const int w = blockIdx.x * blockDim.x + threadIdx.x;
  if (w >= W - K + 1) return;
  __half2 acc = __float2half2_rn(0.0f);
  for (int q = 0; q < K; ++q) acc = __hfma2(in[w + q], mask[q], acc);
  out[w] = acc;
}
