// Bad for 03-tiling, in the way students most often get it wrong: a per-channel shared tile with
// the barrier after the load but none after the compute, so the next channel's load overwrites
// cells that slower threads of the block are still reading (a write-after-read race). The output
// is usually right, so correctness checks can pass; `labkit grade --sanitize` (racecheck) must
// report the race at this file's lines. Expected under --sanitize: sanitizer-error.
#include "../common.cuh"

namespace {

constexpr int TILE = 16;

__global__ void racy_tiled(float* out, const float* in, const float* mask, labkit::ConvShape s) {
  extern __shared__ float tile[];  // one channel's (TILE + K - 1)^2 patch
  const int TW = TILE + s.K - 1, ho = s.H_out(), wo = s.W_out();
  const int tiles_w = (wo + TILE - 1) / TILE;
  const int h0 = blockIdx.x / tiles_w * TILE, w0 = blockIdx.x % tiles_w * TILE;
  const int m = blockIdx.y, b = blockIdx.z;
  const int tx = threadIdx.x, ty = threadIdx.y;
  float acc = 0;
  for (int c = 0; c < s.C; ++c) {
    for (int i = ty * TILE + tx; i < TW * TW; i += TILE * TILE) {
      const int h = h0 + i / TW, w = w0 + i % TW;
      tile[i] = h < s.H && w < s.W ? in[((std::size_t(b) * s.C + c) * s.H + h) * s.W + w] : 0.0f;
    }
    __syncthreads();  // the tile is complete before anyone reads it
    for (int p = 0; p < s.K; ++p)
      for (int q = 0; q < s.K; ++q)
        acc += tile[(ty + p) * TW + tx + q] * mask[((std::size_t(m) * s.C + c) * s.K + p) * s.K + q];
    // Missing here: __syncthreads() before the next channel's load overwrites the tile.
  }
  const int h = h0 + ty, w = w0 + tx;
  if (h < ho && w < wo) out[((std::size_t(b) * s.M + m) * ho + h) * wo + w] = acc;
}

}  // namespace

TEST_LAB_STANDARD_PROLOG_EPILOG
void labkit::conv_forward_gpu(float* out, const float* in, const float* mask, const ConvShape& s) {
  const int tiles = ((s.H_out() + TILE - 1) / TILE) * ((s.W_out() + TILE - 1) / TILE);
  const std::size_t bytes = std::size_t(TILE + s.K - 1) * (TILE + s.K - 1) * sizeof(float);
  racy_tiled<<<dim3(tiles, s.M, s.B), dim3(TILE, TILE), bytes>>>(out, in, mask, s);
  LABKIT_CUDA_CHECK_LAUNCH();
}
