// 03-tiling — instructor solution.
//
// One block computes a TILE x TILE patch of the output plane of one image, for a group of MG
// output maps. It first copies into shared memory everything that patch needs:
//   tile    [C][TW][TW]    the input patch with its halo (TW = TILE + K - 1), every channel;
//   mask_s  [C*K*K][MG]    the group's mask weights, the MG maps of one (c, p, q) side by side.
// After one __syncthreads() every product reads shared memory only. Each input value loaded from
// global memory is then used by up to K*K threads and MG maps instead of being fetched again from
// L1/L2 for every (m, p, q) as in the baseline.
//
// Loop order: a thread keeps MG accumulators (one per map of its group) in registers and walks
// c, p, q once; each tile value it reads is multiplied by the MG weights of that (c, p, q). So one
// shared load of the input feeds MG multiply-adds, and the weights are a broadcast (all threads of
// a warp read the same address).
//
// Shared memory is dynamic: its size depends on C and K, known only at run time
// (conv2: 4 * 22 * 22 + 196 * 16 floats = 20,288 bytes). Out-of-plane halo cells are filled with 0:
// they only feed outputs past the edge, which are never written.
#include <stdexcept>
#include <string>

#include "labkit/conv.h"
#include "labkit/conv_buffers.h"
#include "labkit/conv_limits.h"
#include "labkit/cuda_check.h"

namespace {

// TILE is a macro rather than a constexpr int so that `labkit sweep` can rebuild this file with
// other values (-DTILE=8); the default stays 16.
#ifndef TILE
#define TILE 16  // output patch side: TILE x TILE threads per block (labkit sweep 03-tiling --param TILE=8,16,32)
#endif
constexpr int kMaxSharedBytes = 48 * 1024;  // what any block may use without an opt-in

template <int MG>
__global__ void conv_tiled_kernel(float* output, const float* input, const float* mask,
                                  const int M, const int C, const int H, const int W, const int K,
                                  const int tiles_w) {
  extern __shared__ float smem[];
  const int TW = TILE + K - 1;  // input patch side, halo included
  const int H_out = H - K + 1;
  const int W_out = W - K + 1;
  float* tile = smem;                   // [C][TW][TW]
  float* mask_s = smem + C * TW * TW;   // [C*K*K][MG]

#define out_4d(i3, i2, i1, i0) output[(i3) * (M * H_out * W_out) + (i2) * (H_out * W_out) + (i1) * (W_out) + (i0)]
#define in_4d(i3, i2, i1, i0) input[(i3) * (C * H * W) + (i2) * (H * W) + (i1) * (W) + (i0)]
#define tile_3d(i2, i1, i0) tile[((i2) * TW + (i1)) * TW + (i0)]

  const int b = blockIdx.z;
  const int m0 = blockIdx.y * MG;  // first map of this block's group
  const int h0 = (blockIdx.x / tiles_w) * TILE;
  const int w0 = (blockIdx.x % tiles_w) * TILE;
  const int tid = threadIdx.y * TILE + threadIdx.x;

  // 1. The input patch, all channels: consecutive threads take consecutive columns (coalesced).
  for (int i = tid; i < C * TW * TW; i += TILE * TILE) {
    const int c = i / (TW * TW), r = (i / TW) % TW, col = i % TW;
    const int h = h0 + r, w = w0 + col;
    tile[i] = (h < H && w < W) ? in_4d(b, c, h, w) : 0.0f;
  }
  // 2. The group's weights, transposed so the MG maps of one (c, p, q) are adjacent.
  const int CKK = C * K * K;
  for (int i = tid; i < CKK * MG; i += TILE * TILE) {
    const int g = i % MG, ckk = i / MG;
    mask_s[i] = (m0 + g < M) ? mask[(m0 + g) * CKK + ckk] : 0.0f;
  }
  __syncthreads();  // every patch and weight value is in place before anyone reads them

  const int ty = threadIdx.y, tx = threadIdx.x;
  float acc[MG];
#pragma unroll
  for (int g = 0; g < MG; ++g) acc[g] = 0.0f;
  for (int c = 0; c < C; ++c) {
    for (int p = 0; p < K; ++p) {
      for (int q = 0; q < K; ++q) {
        const float x = tile_3d(c, ty + p, tx + q);
        const float* wgt = &mask_s[((c * K + p) * K + q) * MG];
#pragma unroll
        for (int g = 0; g < MG; ++g) acc[g] += x * wgt[g];
      }
    }
  }

  const int h = h0 + ty, w = w0 + tx;
  if (h < H_out && w < W_out) {
#pragma unroll
    for (int g = 0; g < MG; ++g) {
      if (m0 + g < M) out_4d(b, m0 + g, h, w) = acc[g];
    }
  }

#undef out_4d
#undef in_4d
#undef tile_3d
}

std::size_t shared_bytes(const labkit::ConvShape& s, int mg) {
  const std::size_t tw = TILE + s.K - 1;
  return (std::size_t(s.C) * tw * tw + std::size_t(s.C) * s.K * s.K * mg) * sizeof(float);
}

template <int MG>
void launch(float* output, const float* input, const float* mask, const labkit::ConvShape& s) {
  const int tiles_w = (s.W_out() + TILE - 1) / TILE;
  const int tiles_h = (s.H_out() + TILE - 1) / TILE;
  const std::size_t bytes = shared_bytes(s, MG);
  if (bytes > kMaxSharedBytes) {
    throw std::invalid_argument("03-tiling: " + labkit::to_string(s) + " needs " +
                                std::to_string(bytes) + " bytes of shared memory per block (C = " +
                                std::to_string(s.C) + " channels of a " + std::to_string(TILE + s.K - 1) +
                                "^2 patch plus the weights); the limit is " +
                                std::to_string(kMaxSharedBytes));
  }
  const dim3 block(TILE, TILE, 1);
  const dim3 grid(tiles_w * tiles_h, (s.M + MG - 1) / MG, s.B);
  conv_tiled_kernel<MG><<<grid, block, bytes>>>(output, input, mask, s.M, s.C, s.H, s.W, s.K, tiles_w);
  LABKIT_CUDA_CHECK_LAUNCH();
}

void check_shape(const labkit::ConvShape& s) {
  labkit::require_grid_limits(s, "03-tiling", /*check_maps=*/false);
  labkit::require_int_indexing(s, "03-tiling");
}

}  // namespace

void labkit::conv_forward_gpu_prolog(const float* host_output, const float* host_input,
                                     const float* host_mask, float** device_output,
                                     float** device_input, float** device_mask,
                                     const ConvShape& shape) {
  (void)host_output;
  check_shape(shape);
  standard_prolog(host_input, host_mask, device_output, device_input, device_mask, shape);
}

void labkit::conv_forward_gpu(float* device_output, const float* device_input,
                              const float* device_mask, const ConvShape& shape) {
  check_shape(shape);
  // The map group: as many maps as fit the accumulators, without computing many empty ones.
  if (shape.M <= 4) {
    launch<4>(device_output, device_input, device_mask, shape);
  } else if (shape.M <= 8) {
    launch<8>(device_output, device_input, device_mask, shape);
  } else {
    launch<16>(device_output, device_input, device_mask, shape);  // M > 16: several groups
  }
}

void labkit::conv_forward_gpu_epilog(float* host_output, float* device_output, float* device_input,
                                     float* device_mask, const ConvShape& shape) {
  standard_epilog(host_output, device_output, device_input, device_mask, shape);
}
