// nvcc -ptx -arch=compute_90 -std=c++20 tiled.cu -o tiled.ptx
// (and with -lineinfo -o tiled-lineinfo.ptx, -G -o tiled-debug.ptx: the parser's .loc and debug-section cases)
// A shared-memory tiled 1-D convolution (lab 03): the block stages its input tile in __shared__
// memory, waits at __syncthreads, then every thread reads its window from the tile.

constexpr int TILE = 128;
constexpr int K = 7;

__global__ void tiled_conv_kernel(float* out, const float* in, const float* mask, int W) {
  __shared__ float tile[TILE + K - 1];
  const int base = blockIdx.x * TILE;
  for (int i = threadIdx.x; i < TILE + K - 1; i += blockDim.x)
    tile[i] = base + i < W ? in[base + i] : 0.0f;
  __syncthreads();
  const int w = base + threadIdx.x;
  if (threadIdx.x >= TILE || w >= W - K + 1) return;
  float acc = 0.0f;
  for (int q = 0; q < K; ++q) acc += tile[threadIdx.x + q] * mask[q];
  out[w] = acc;
}
