// nvcc -ptx -arch=compute_90 -std=c++20 restrict.cu -o restrict.ptx
// The plain kernel with __restrict__ pointers and a fixed-size unrolled loop (lab 01): the
// compiler may then read the inputs through the non-coherent (read-only) path.

constexpr int K = 7;

__global__ void restrict_conv_kernel(float* __restrict__ out, const float* __restrict__ in,
                                     const float* __restrict__ mask, int W) {
  const int w = blockIdx.x * blockDim.x + threadIdx.x;
  if (w >= W - K + 1) return;
  float acc = 0.0f;
#pragma unroll
  for (int q = 0; q < K; ++q) acc += in[w + q] * mask[q];
  out[w] = acc;
}
