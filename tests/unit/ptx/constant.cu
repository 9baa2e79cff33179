// nvcc -ptx -arch=compute_90 -std=c++20 constant.cu -o constant.ptx
// The mask in __constant__ memory (lab 02): reads of it become ld.const.

constexpr int MAX_MASK = 7 * 7 * 4;
__constant__ float const_mask[MAX_MASK];

__global__ void const_conv_kernel(float* out, const float* in, int W, int K) {
  const int w = blockIdx.x * blockDim.x + threadIdx.x;
  const int W_out = W - K + 1;
  if (w >= W_out) return;
  float acc = 0.0f;
  for (int p = 0; p < K; ++p)
    for (int q = 0; q < K; ++q) acc += in[p * W + w + q] * const_mask[p * K + q];
  out[w] = acc;
}
