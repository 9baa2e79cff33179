// nvcc -ptx -arch=compute_90 -std=c++20 plain.cu -o plain.ptx
// A naive global-memory convolution: no technique, the negative control for every evidence test.
// The noinline helper gives the PTX a .func beside the .entry, for parse_ptx's tests.

__device__ __noinline__ float dot_row(const float* in, const float* mask, int K) {
  float acc = 0.0f;
  for (int q = 0; q < K; ++q) acc += in[q] * mask[q];
  return acc;
}

__global__ void plain_conv_kernel(float* out, const float* in, const float* mask, int W, int K) {
  const int w = blockIdx.x * blockDim.x + threadIdx.x;
  const int W_out = W - K + 1;
  if (w >= W_out) return;
  float acc = 0.0f;
  for (int p = 0; p < K; ++p) acc += dot_row(in + p * W + w, mask + p * K, K);
  out[w] = acc;
}
