// register_tiling.cuh — the 11-register-tiling instructor solution's entry points, forward(),
// prepare() and check_shape(), and its row-tile kernel: its kernel.cu wraps them in the lab API,
// and 13-capstone's solution uses them too.
//
// Three kernels (forward() at the end picks one per shape):
//   * conv1's family (K 7, C 1, M <= 4, W_out <= 320): the constant-weight tile of
//     constant_weights.cuh (4 maps x 2 rows x 4 pixels a thread, every weight an operand from the
//     constant bank; prepare() copies the mask there in the prolog). It beat this file's row tile
//     on conv1: 0.541 against 0.699 ms, batch 10000, H100 (standalone driver);
//   * conv2's family (K 7, M > 4): the column tile of column_tiling.cuh (2 maps x 17 rows of one
//     output column a thread, persistent double-buffered blocks). On conv2 it beat this row tile
//     (with 4 maps a thread: 0.2015 against 0.227 ms, batch 1000, H100; with 2 maps: 0.174 ms);
//   * every other shape, and conv1 when prepare() did not see its mask: the row tile below.
//
// Direct convolution (no unrolled matrix) with two levels of reuse:
//   * shared memory: a block copies the input rows it needs (a strip of `rows` output rows needs
//     rows + K - 1 input rows, every channel) and its maps' weights into __shared__ once;
//   * registers: each thread computes RM maps x RP consecutive pixels of one output row. For each
//     (c, p) it copies the RP + K - 1 input values of its row segment from the tile into registers
//     once, then does RM * RP * K multiply-adds from registers, with the weights of one (c, p, q)
//     read as float4 broadcasts (every thread of the block reads the same RM weights).
//
// Why it pays: per (c, p) a thread issues (RP + K - 1) / 4 float4 reads of the input and RM * K / 4
// float4 reads of weights for RM * RP * K FMAs. conv2 (RM 16, RP 4, K 7): 3 + 28 = 31 shared reads
// for 448 FMAs (the compiled loop body is 504 instructions, 448 of them FFMA). A one-output-per-
// thread kernel reads two values from shared memory per FMA.
//
// Thread -> output: the block covers output rows h0 .. h0 + rows - 1 of image b and maps
// m0 .. m0 + RM - 1. Thread t takes row r = t / segs and segment s = t % segs, the pixels
// w0 = s*RP .. w0 + RP - 1. Consecutive threads take consecutive segments, so a warp's output
// stores cover consecutive addresses (float4 or float2 stores where the row width allows).
//
// Shared memory, dynamic (C and K are run-time values in general):
//   tile [C][rows + K - 1][stride]   stride = segs*RP + K - 1 rounded up to 4 floats, so that the
//                                    last segment's reads stay inside the row and float4 reads of
//                                    a row segment (w0 = s*RP, RP a multiple of 4) are aligned;
//                                    cells past the input's edge are 0 (they only feed outputs
//                                    past the edge, never stored)
//   w_s  [C*K*K][RM]                 the RM maps of one (c, p, q) side by side
//
//   shape              kernel <K, RM, RP>   threads  rows  shared per block           registers
//   conv1 (M 4, C 1)   <7, 4, 8>              160      16   tile 22 x 88 + 196 x 4     68
//                                                          = 7,744 + 784 B
//   conv2 (M 16, C 4)  <7, 16, 4>             160      17   tile 4 x 23 x 44 + 196 x 16  96 (4 blocks/SM)
//                                                          = 16,192 + 12,544 B
//   other K            <run time, RM, 4>      <= 256        RM = 4, 8 or 16 by M: the same layout,
//                                                          the q loop at run time
//   (the conv2 row is history: forward() now sends K 7, M > 4 to column_tiling.cuh, and no <7, 16, 4>
//   is instantiated; the row-tile analysis in the handout still uses it. The conv1 row runs only
//   when prepare() did not load conv1's mask into the constant bank: constant_weights.cuh)
// conv1 needs 5 strips of 16 rows per image (80 rows, 10 segments of 8 pixels: 160 threads, no
// spare lane); conv2 2 strips of 17 rows (34 rows, 9 segments of 4 pixels: 153 of 160 threads).
// The staging uses cp.async (copy_async below) so that its global loads overlap one another.
#pragma once

#include <algorithm>
#include <stdexcept>
#include <string>

#include "labkit/conv.h"
#include "labkit/conv_buffers.h"
#include "labkit/conv_limits.h"
#include "labkit/cuda_check.h"

#include "column_tiling.cuh"     // conv2's kernel
#include "constant_weights.cuh"  // conv1's kernel

namespace register_tiling {

constexpr int kMaxSharedBytes = 48 * 1024;  // what a block may use without an opt-in
constexpr int kMaxThreads = 512;            // default block-size bound of launch<> (__launch_bounds__)

constexpr int round_up(int x, int to) { return (x + to - 1) / to * to; }

// The staging copies. cp.async moves 4 bytes from global to shared memory without a register in
// between, so a thread issues all its copies back to back and waits once (wait_async); a plain
// `dst = src` loop waits for each global load before its shared store, and the latency of the
// staging, not the FMAs, would set the pace. valid == false writes 0 and reads nothing.
__device__ __forceinline__ void copy_async(float* dst, const float* src, bool valid) {
  const unsigned shared_address = static_cast<unsigned>(__cvta_generic_to_shared(dst));
  asm volatile("cp.async.ca.shared.global [%0], [%1], 4, %2;\n"
               ::"r"(shared_address), "l"(src), "r"(valid ? 4 : 0)
               : "memory");
}
__device__ __forceinline__ void wait_async() { asm volatile("cp.async.wait_all;\n" ::: "memory"); }

// KC > 0: K known at compile time, so a thread's row segment (RP + K - 1 values) lives in registers
// and the q, map and pixel loops of a (c, p) step unroll (the c and p loops stay rolled: unrolling p
// too made both layers slower on an H100). KC == 0: any K, the q loop runs at run time and
// reads RP values of the tile per q (the fallback for shapes that are not graded).
template <int KC, int RM, int RP, int MAX_THREADS, int MIN_BLOCKS>
__global__ void __launch_bounds__(MAX_THREADS, MIN_BLOCKS)
    conv_register_tiled_kernel(float* __restrict__ output, const float* __restrict__ input,
                               const float* __restrict__ mask, const int M, const int C, const int H,
                               const int W, const int k, const int rows, const int segs,
                               const int stride) {
  static_assert(RM % 4 == 0, "weights are read as float4");
  static_assert(KC == 0 || RP % 4 == 0, "row segments are read as float4");
  const int K = KC > 0 ? KC : k;
  const int H_out = H - K + 1, W_out = W - K + 1, HW = H_out * W_out;
  const int tile_rows = rows + K - 1, CKK = C * K * K;
  extern __shared__ __align__(16) float smem[];
  float* tile = smem;                             // [C][tile_rows][stride]
  float* w_s = smem + C * tile_rows * stride;     // [C*K*K][RM]; stride % 4 == 0 keeps it aligned

  const int b = blockIdx.z, m0 = blockIdx.y * RM, h0 = blockIdx.x * rows;
  const int tid = threadIdx.x, lane = tid % 32, warp = tid / 32, warps = blockDim.x / 32;

  // 1. The input strip: one tile row per warp at a time, lanes along the row (coalesced).
  const float* in_b = input + b * C * H * W;
  for (int t = warp; t < C * tile_rows; t += warps) {
    const int c = t / tile_rows, h = h0 + t % tile_rows;
    const float* src = in_b + (c * H + min(h, H - 1)) * W;  // a valid row, read only when h < H
    float* dst = tile + t * stride;
    for (int col = lane; col < stride; col += 32)
      copy_async(dst + col, src + min(col, W - 1), h < H && col < W);
  }
  // 2. The weights of maps m0 .. m0 + RM - 1, transposed to [c][p][q][map]; maps past M are 0.
  for (int i = tid; i < CKK * RM; i += blockDim.x) {
    const int kk = i / RM, g = i % RM;
    copy_async(w_s + i, mask + min(m0 + g, M - 1) * CKK + kk, m0 + g < M);
  }
  wait_async();     // this thread's copies have landed
  __syncthreads();  // the only barrier: from here on threads read shared memory only

  const int r = tid / segs, w0 = (tid % segs) * RP, h = h0 + r;
  if (r >= rows || h >= H_out) return;  // the last warp's spare threads, the last strip's spare rows

  float acc[RM][RP] = {};
#pragma unroll 1
  for (int c = 0; c < C; ++c) {
#pragma unroll 1
    for (int p = 0; p < K; ++p) {
      const float* seg = tile + (c * tile_rows + r + p) * stride + w0;  // input row h + p, column w0
      const float* wts = w_s + (c * K + p) * K * RM;                      // weights of (c, p, q = 0)
      if constexpr (KC > 0) {
        // The row segment, once per (c, p): XN >= RP + K - 1 values, aligned float4 reads.
        constexpr int XN = round_up(RP + KC - 1, 4);
        float x[XN];
#pragma unroll
        for (int u = 0; u < XN; u += 4) {
          const float4 v = *reinterpret_cast<const float4*>(seg + u);
          x[u] = v.x, x[u + 1] = v.y, x[u + 2] = v.z, x[u + 3] = v.w;
        }
#pragma unroll
        for (int q = 0; q < KC; ++q) {
          float wv[RM];
#pragma unroll
          for (int i = 0; i < RM; i += 4) {
            const float4 v = *reinterpret_cast<const float4*>(wts + q * RM + i);  // a broadcast
            wv[i] = v.x, wv[i + 1] = v.y, wv[i + 2] = v.z, wv[i + 3] = v.w;
          }
#pragma unroll
          for (int i = 0; i < RM; ++i) {
#pragma unroll
            for (int j = 0; j < RP; ++j) acc[i][j] += wv[i] * x[j + q];  // pixel w0 + j, column w0 + j + q
          }
        }
      } else {
        for (int q = 0; q < K; ++q) {
          float x[RP], wv[RM];
#pragma unroll
          for (int j = 0; j < RP; ++j) x[j] = seg[j + q];
#pragma unroll
          for (int i = 0; i < RM; i += 4) {
            const float4 v = *reinterpret_cast<const float4*>(wts + q * RM + i);
            wv[i] = v.x, wv[i + 1] = v.y, wv[i + 2] = v.z, wv[i + 3] = v.w;
          }
#pragma unroll
          for (int i = 0; i < RM; ++i) {
#pragma unroll
            for (int j = 0; j < RP; ++j) acc[i][j] += wv[i] * x[j];
          }
        }
      }
    }
  }

  // 3. The stores: RP consecutive pixels per map. Vector stores need the address aligned: w0 is a
  // multiple of RP, so a row width (and plane size) that is a multiple of 4 (or 2) is enough. The
  // test is made once for the whole tile, not once per map: each branch is straight-line code.
  const int maps = min(RM, M - m0);     // maps past M - 1 are not written
  const bool whole = w0 + RP <= W_out;  // false only for the last segment of a ragged row
  float* out = output + ((b * M + m0) * H_out + h) * W_out + w0;  // map m0 + i is i * HW further
  if (whole && RP % 4 == 0 && W_out % 4 == 0) {
#pragma unroll
    for (int i = 0; i < RM; ++i) {
#pragma unroll
      for (int j = 0; j < RP; j += 4)
        if (i < maps)
          *reinterpret_cast<float4*>(out + i * HW + j) =
              make_float4(acc[i][j], acc[i][j + 1], acc[i][j + 2], acc[i][j + 3]);
    }
  } else if (whole && RP % 2 == 0 && W_out % 2 == 0) {
#pragma unroll
    for (int i = 0; i < RM; ++i) {
#pragma unroll
      for (int j = 0; j < RP; j += 2)
        if (i < maps) *reinterpret_cast<float2*>(out + i * HW + j) = make_float2(acc[i][j], acc[i][j + 1]);
    }
  } else {
#pragma unroll
    for (int i = 0; i < RM; ++i) {
#pragma unroll
      for (int j = 0; j < RP; ++j)
        if (i < maps && w0 + j < W_out) out[i * HW + j] = acc[i][j];
    }
  }
}

// The block's shape for one launch: rows per block and the shared bytes they need.
struct Plan {
  int segs = 0, rows = 0, strips = 0, stride = 0, threads = 0;
  std::size_t bytes = 0;
};

inline std::size_t shared_bytes(const labkit::ConvShape& s, int rows, int stride, int rm) {
  return (std::size_t(s.C) * (rows + s.K - 1) * stride + std::size_t(s.C) * s.K * s.K * rm) * sizeof(float);
}

// Rows per block: as many as `target` threads allow, split evenly over the strips of the plane
// (80 rows in strips of 16, not 25 + 25 + 25 + 5), fewer if the tile would not fit.
inline Plan make_plan(const labkit::ConvShape& s, int rm, int rp, int target) {
  Plan pl;
  pl.segs = (s.W_out() + rp - 1) / rp;
  pl.stride = round_up(pl.segs * rp + s.K - 1, 4);
  if (round_up(pl.segs, 32) > target)  // one output row must fit a block
    throw std::invalid_argument("11-register-tiling: " + labkit::to_string(s) +
                                " has output rows wider than " + std::to_string(target / 32 * 32 * rp) +
                                " pixels (" + std::to_string(rp) + " per thread, one row per block at most)");
  for (int most = std::max(1, std::min(s.H_out(), target / pl.segs)); most >= 1; --most) {
    pl.strips = (s.H_out() + most - 1) / most;
    pl.rows = (s.H_out() + pl.strips - 1) / pl.strips;
    pl.bytes = shared_bytes(s, pl.rows, pl.stride, rm);
    if (pl.bytes <= kMaxSharedBytes) break;
  }
  if (pl.bytes > kMaxSharedBytes)
    throw std::invalid_argument("11-register-tiling: " + labkit::to_string(s) + " needs " +
                                std::to_string(pl.bytes) + " bytes of shared memory for one output row" +
                                " (C = " + std::to_string(s.C) + " channels of " + std::to_string(s.K) +
                                " input rows plus " + std::to_string(rm) +
                                " maps of weights); the limit is " + std::to_string(kMaxSharedBytes));
  pl.threads = round_up(pl.rows * pl.segs, 32);
  return pl;
}

template <int KC, int RM, int RP, int MAX_THREADS = kMaxThreads, int MIN_BLOCKS = 1>
void launch(float* output, const float* input, const float* mask, const labkit::ConvShape& s) {
  const Plan pl = make_plan(s, RM, RP, MAX_THREADS);
  const dim3 grid(pl.strips, (s.M + RM - 1) / RM, s.B);
  conv_register_tiled_kernel<KC, RM, RP, MAX_THREADS, MIN_BLOCKS><<<grid, pl.threads, pl.bytes>>>(
      output, input, mask, s.M, s.C, s.H, s.W, s.K, pl.rows, pl.segs, pl.stride);
  LABKIT_CUDA_CHECK_LAUNCH();
}

inline void check_shape(const labkit::ConvShape& s) {
  labkit::require_grid_limits(s, "11-register-tiling", /*check_maps=*/false);  // images in grid.z
  labkit::require_int_indexing(s, "11-register-tiling");
}

// The prolog's part (not timed): conv1's family keeps its weights in the constant bank.
inline void prepare(const float* host_mask, const float* device_mask, const labkit::ConvShape& shape) {
  constant_weights::load_weights(host_mask, device_mask, shape);
}

// The forward pass: the kernel that fits `shape`, launched on the default stream.
inline void forward(float* device_output, const float* device_input, const float* device_mask,
                    const labkit::ConvShape& shape) {
  check_shape(shape);
  if (column_tiling::takes(shape)) {  // conv2's family (K 7, M > 4): the column tile
    column_tiling::forward(device_output, device_input, device_mask, shape);
  } else if (constant_weights::ready(device_mask, shape)) {  // conv1's family, weights loaded
    constant_weights::forward(device_output, device_input, shape);
  } else if (shape.K == 7 && shape.M <= 4) {
    launch<7, 4, 8, 160, 1>(device_output, device_input, device_mask, shape);  // all maps, 8 pixels
  } else if (shape.M <= 4) {
    launch<0, 4, 4, 256>(device_output, device_input, device_mask, shape);
  } else if (shape.M <= 8) {
    launch<0, 8, 4, 256>(device_output, device_input, device_mask, shape);
  } else {
    launch<0, 16, 4, 256>(device_output, device_input, device_mask, shape);
  }
}

}  // namespace register_tiling
