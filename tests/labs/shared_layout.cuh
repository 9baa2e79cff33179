// shared_layout.cuh — lab 14's kernel (labs/14-shared-layout: a 16 x 8 output patch a block, a warp
// of 8 rows x 4 map groups, a register window row per (c, p)) with the tile's layout a template
// parameter, for the test labs that grade one layout each (layout-conflicted, layout-swizzle). Not
// a lab: this folder has no kernel.cu. A test lab defines its Layout {static Layout make(int rows,
// int cols); __device__ int at(int c, int r, int col) const; int plane;} and calls
// shared_layout::forward<Layout>() from conv_forward_gpu.
#pragma once

#include <stdexcept>
#include <string>

#include "labkit/conv.h"
#include "labkit/conv_limits.h"
#include "labkit/cuda_check.h"

namespace shared_layout {

constexpr int kRows = 8;     // tile rows one warp reads at once: lane % 8
constexpr int kGroups = 4;   // map groups of a warp: lane / 8
constexpr int kWarps = 2;    // warps of a block, stacked
constexpr int RP = 8;        // output columns per thread
constexpr int kPatchRows = kRows * kWarps;
constexpr int kThreads = 32 * kWarps;
constexpr int kMaxSharedBytes = 48 * 1024;

// One block: a kPatchRows x RP patch of image b's output planes, for the MB = 4 * MG maps of group
// blockIdx.y. K is a template parameter so that the window row x[] and the accumulators stay in
// registers (every loop over them unrolled).
template <class Layout, int K, int MG>
__global__ void __launch_bounds__(kThreads)
    conv_layout_kernel(float* __restrict__ output, const float* __restrict__ input,
                       const float* __restrict__ mask, const int M, const int C, const int H,
                       const int W, const int tiles_w, const Layout layout) {
  constexpr int MB = kGroups * MG;          // maps of the block
  constexpr int TR = kPatchRows + K - 1;    // tile rows, halo included
  constexpr int TC = RP + K - 1;            // tile columns, halo included
  extern __shared__ float smem[];
  float* w_s = smem;                        // [C*K*K][MB]: the block's weights, maps side by side
  float* tile = smem + C * K * K * MB;      // the input patch, as `layout` places it
  const int H_out = H - K + 1, W_out = W - K + 1;
  const int b = blockIdx.z;
  const int m0 = blockIdx.y * MB;
  const int h0 = (blockIdx.x / tiles_w) * kPatchRows;
  const int w0 = (blockIdx.x % tiles_w) * RP;

  const int CKK = C * K * K;
  for (int i = threadIdx.x; i < CKK * MB; i += kThreads) {
    const int mb = i % MB, ckk = i / MB;
    w_s[i] = (m0 + mb < M) ? mask[std::size_t(m0 + mb) * CKK + ckk] : 0.0f;
  }
  const float* in_b = input + std::size_t(b) * C * H * W;
  for (int i = threadIdx.x; i < C * TR * TC; i += kThreads) {
    const int col = i % TC, r = (i / TC) % TR, c = i / (TC * TR);
    const int h = h0 + r, w = w0 + col;
    tile[layout.at(c, r, col)] = (h < H && w < W) ? in_b[(std::size_t(c) * H + h) * W + w] : 0.0f;
  }
  __syncthreads();  // the whole tile and every weight are in place before anyone reads them

  const int lane = threadIdx.x % 32;
  const int row = (threadIdx.x / 32) * kRows + lane % kRows;  // the thread's output row in the patch
  const int grp = lane / kRows;                               // and its map group
  float acc[MG][RP] = {};
  for (int c = 0; c < C; ++c) {
#pragma unroll
    for (int p = 0; p < K; ++p) {
      float x[RP + K - 1];  // the window row: the same 8 rows x this j across the warp
#pragma unroll
      for (int j = 0; j < RP + K - 1; ++j) x[j] = tile[layout.at(c, row + p, j)];
      const float* wp = w_s + (c * K + p) * K * MB + grp * MG;
#pragma unroll
      for (int q = 0; q < K; ++q) {
#pragma unroll
        for (int g = 0; g < MG; ++g) {
          const float wv = wp[q * MB + g];
#pragma unroll
          for (int j = 0; j < RP; ++j) acc[g][j] = fmaf(x[j + q], wv, acc[g][j]);
        }
      }
    }
  }

  const int h = h0 + row;
  if (h >= H_out) return;  // after the barrier: nothing is shared past this point
#pragma unroll
  for (int g = 0; g < MG; ++g) {
    const int m = m0 + grp * MG + g;
    if (m >= M) continue;
    float* out = output + ((std::size_t(b) * M + m) * H_out + h) * W_out + w0;
#pragma unroll
    for (int j = 0; j < RP; ++j)
      if (w0 + j < W_out) out[j] = acc[g][j];
  }
}

template <class Layout, int K, int MG>
void launch(float* output, const float* input, const float* mask, const labkit::ConvShape& s) {
  constexpr int MB = kGroups * MG;
  const Layout layout = Layout::make(kPatchRows + K - 1, RP + K - 1);
  const std::size_t bytes = (std::size_t(s.C) * K * K * MB + std::size_t(s.C) * layout.plane) * sizeof(float);
  if (bytes > kMaxSharedBytes) {
    throw std::invalid_argument("test lab (shared_layout.cuh): " + labkit::to_string(s) + " needs " +
                                std::to_string(bytes) +
                                " bytes of shared memory per block (C = " + std::to_string(s.C) +
                                " channels of the tile and of " + std::to_string(MB) +
                                " maps' weights); the limit is " + std::to_string(kMaxSharedBytes));
  }
  const int tiles_w = (s.W_out() + RP - 1) / RP;
  const int tiles_h = (s.H_out() + kPatchRows - 1) / kPatchRows;
  const dim3 grid(tiles_w * tiles_h, (s.M + MB - 1) / MB, s.B);
  conv_layout_kernel<Layout, K, MG><<<grid, kThreads, bytes>>>(output, input, mask, s.M, s.C, s.H, s.W, tiles_w,
                                                                layout);
  LABKIT_CUDA_CHECK_LAUNCH();
}

// The map group from M (4, 8 or 16 maps a block), for one K.
template <class Layout, int K>
void launch_k(float* output, const float* input, const float* mask, const labkit::ConvShape& s) {
  if (s.M <= 4) {
    launch<Layout, K, 1>(output, input, mask, s);
  } else if (s.M <= 8) {
    launch<Layout, K, 2>(output, input, mask, s);
  } else {
    launch<Layout, K, 4>(output, input, mask, s);  // M > 16: several groups along grid.y
  }
}

template <class Layout>
void forward(float* output, const float* input, const float* mask, const labkit::ConvShape& s) {
  labkit::require_grid_limits(s, "test lab (shared_layout.cuh)", /*check_maps=*/false);
  labkit::require_int_indexing(s, "test lab (shared_layout.cuh)");
  switch (s.K) {
    case 1: launch_k<Layout, 1>(output, input, mask, s); break;
    case 3: launch_k<Layout, 3>(output, input, mask, s); break;
    case 5: launch_k<Layout, 5>(output, input, mask, s); break;
    case 7: launch_k<Layout, 7>(output, input, mask, s); break;
    default:
      throw std::invalid_argument("test lab (shared_layout.cuh): " + labkit::to_string(s) + ": K must be 1, 3, 5 or 7");
  }
}

}  // namespace shared_layout
