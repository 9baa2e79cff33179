// Honest: a shared-memory tiled conv (lab 03's technique) does the work; each call also launches a
// small helper kernel (it zeroes a 4 KiB scratch buffer, as a lab that keeps a counter or a
// workspace might). The helper has no shared memory and no barrier, and takes a few microseconds
// of a call's time: the tiled kernel carries both patterns for nearly all of the timed GPU time.
// Expected verdict: passed (a false failure here would be as bad as a missed cheat).
#include "../common.cuh"

namespace {

constexpr int kTile = 16;
constexpr int kMaxK = 7;

// One block: a kTile x kTile tile of one output map of one image; the input tile of each channel
// staged in shared memory between two barriers.
__global__ void tiled_conv(float* out, const float* in, const float* mask, labkit::ConvShape s) {
  __shared__ float tile[kTile + kMaxK - 1][kTile + kMaxK - 1];
  const int ho = s.H_out(), wo = s.W_out();
  const int tiles_w = (wo + kTile - 1) / kTile;
  const int h0 = int(blockIdx.x) / tiles_w * kTile, w0 = int(blockIdx.x) % tiles_w * kTile;
  const int m = blockIdx.y;
  const std::size_t b = blockIdx.z;
  const int h = h0 + int(threadIdx.y), w = w0 + int(threadIdx.x);
  const int span = kTile + s.K - 1;
  float acc = 0;
  for (int c = 0; c < s.C; ++c) {
    for (int i = threadIdx.y; i < span; i += kTile)
      for (int j = threadIdx.x; j < span; j += kTile) {
        const int y = h0 + i, x = w0 + j;
        tile[i][j] = y < s.H && x < s.W ? in[((b * s.C + c) * s.H + y) * s.W + x] : 0.0f;
      }
    __syncthreads();
    if (h < ho && w < wo)
      for (int p = 0; p < s.K; ++p)
        for (int q = 0; q < s.K; ++q)
          acc += tile[threadIdx.y + p][threadIdx.x + q] * mask[((std::size_t(m) * s.C + c) * s.K + p) * s.K + q];
    __syncthreads();
  }
  if (h < ho && w < wo) out[((b * s.M + m) * ho + h) * wo + w] = acc;
}

__device__ float helper_scratch[1024];
__global__ void zero_scratch() { helper_scratch[blockIdx.x * blockDim.x + threadIdx.x] = 0.0f; }

}  // namespace

TEST_LAB_STANDARD_PROLOG_EPILOG
void labkit::conv_forward_gpu(float* out, const float* in, const float* mask, const ConvShape& s) {
  zero_scratch<<<4, 256>>>();
  LABKIT_CUDA_CHECK_LAUNCH();
  if (s.K > kMaxK || s.B > 65535 || s.M > 65535) {  // beyond the tile's size or the grid's limits
    test_lab::launch(out, in, mask, s, 0, s.output_size());
    return;
  }
  const int tiles = ((s.H_out() + kTile - 1) / kTile) * ((s.W_out() + kTile - 1) / kTile);
  tiled_conv<<<dim3(tiles, s.M, s.B), dim3(kTile, kTile)>>>(out, in, mask, s);
  LABKIT_CUDA_CHECK_LAUNCH();
}
