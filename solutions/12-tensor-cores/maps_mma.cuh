// maps_mma.cuh — the 12-tensor-cores solution's kernel for layers with many maps (conv2, M = 16):
// maps in the MMA's m dimension, output pixels in n. tensor_cores.cuh picks it when M > 8 and
// conv_rows_mma.cuh (pixels in m, maps in n) for the layers with few maps (conv1, M = 4).
//
// The conv as an implicit GEMM, output[m][col] = sum_r A[m][r] * X[r][col] (lab 06), with the
// products on tensor cores: mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32, one warp-wide
// instruction that multiplies a 16 x 8 tile of A (16 maps x 8 reduction rows) by an 8 x 8 tile of
// X (8 rows x 8 output pixels) and adds the 16 x 8 product into fp32 accumulators.
// Operands are TF32 (fp32's exponent, 10 mantissa bits): cvt.rna.tf32.f32 rounds each weight
// when the block stages A and each input value when a thread loads it from the tile into its
// registers. Products of two TF32 values are exact in fp32 and the sums stay fp32.
//
// Fragments of m16n8k8 (.tf32), PTX ISA "Matrix Fragments for mma.m16n8k8". A warp's lane is
// g * 4 + t: g = lane / 4 (the "groupID", 0..7), t = lane % 4 ("threadID_in_group", 0..3).
//   A, 16 x 8 (maps x k):   a0 = A[g][t]  a1 = A[g + 8][t]  a2 = A[g][t + 4]  a3 = A[g + 8][t + 4]
//   B,  8 x 8 (k x pixels): b0 = B[t][g]  b1 = B[t + 4][g]
//   D, 16 x 8 (maps x pixels): d0 = D[g][2t]  d1 = D[g][2t + 1]  d2 = D[g + 8][2t]  d3 = D[g + 8][2t + 1]
//
// How the reduction is laid out. Which 8 of the C*K*K reduction rows an MMA takes is ours to
// choose (A and B only have to agree), and the choice decides how often X is gathered:
//   * an MMA's 8 k slots are 8 pairs (c, q) (channel, mask column), its 8 pixels n are 8
//     consecutive output columns w + n of one output row h, and the mask row p is a loop:
//       B[k][n] = in[c][h + p][w + n + q]
//   * a warp owns 8 columns x J output rows (J accumulators of 4 floats per thread), and the
//     MMA for output row h0 + j and mask row p reads input row h0 + j + p: it depends on j + p
//     only. So a thread loads its column of input rows once, v[0 .. J+K-2], and MMA (j, p)
//     takes v[j + p]: J + K - 1 shared loads feed J * K MMAs, instead of two per MMA.
//   * A's fragment for (k group s, row p) is the same for every j: it is built once per block,
//     already in fragment order, A_s[s][p][lane] = (a0, a1, a2, a3), one 16-byte load per lane.
// Per k group s and per warp: 2 * (J + K - 1) 4-byte loads of X and K 16-byte loads of A feed
// J * K MMAs (conv2: 46 + 28 wavefronts for 119 MMAs).
//
// Padding. The (c, q) pairs are C*K (conv2: 28) in ceil(C*K/8) k groups (32 slots); the spare
// slots get A = 0 and B = 0. Maps past M are rows of zeros in A, never stored. The block's
// input tile is zero past the image's edge, so pixels past H_out or W_out compute garbage from
// zeros and are never stored either.
//
// Output. Each thread owns, per output row j, maps g and g + 8 at columns 2t and 2t + 1: two
// consecutive floats, one float2 store when W_out is even (aligned, since w is even). A warp's
// store covers 8 maps x 32 contiguous bytes.
//
// Latency. A tile's global loads take microseconds and, at ~155 registers per thread, only two
// blocks share an SM: a block that loaded its tile, waited and then multiplied left the tensor
// cores idle most of the time. So each block loops over work items (grid = as many blocks as fit
// on the GPU) and copies the next item's tile with cp.async into a second buffer while its warps
// multiply the current one; the copy brings raw fp32, rounded to tf32 as it is loaded into v.
//
// Why not for conv1 (M = 4, C = 1): 4 maps fill a quarter of the 16 rows of A and 7 (c, q) pairs
// 7 of 8 k slots, so 78% of its MMA work would multiply zeros (measured: 1.605 ms at batch 10000
// on an H100, against 0.60 ms for conv_rows_mma.cuh's pixels-in-m layout).
//
// Block: WX warps side by side (8 * WX output columns) x J output rows, one image, 16 maps.
//   config        J   WX  threads  one tile of X (C x (J+K-1) x (8WX+K-1))   A fragments
//   conv2 (K 7)   17   5    160    4 x 23 x 46 floats, 16.8 KiB (x 2 buffers)  4 x 7 x 512 B = 14 KiB
//   conv1 (K 7)   16   5    160    1 x 22 x 46 floats,  4.0 KiB (x 2 buffers)  1 x 7 x 512 B = 3.5 KiB
//   other K       8    4    128    C x (K+7) x (K+31)
#pragma once

#include <algorithm>
#include <climits>
#include <stdexcept>
#include <string>

#include "labkit/conv.h"
#include "labkit/conv_buffers.h"
#include "labkit/conv_limits.h"
#include "labkit/cuda_check.h"

namespace maps_mma {

constexpr int kMaxSharedBytes = 48 * 1024;  // what a block may use without an opt-in
constexpr int kMapsPerTile = 16;           // the m of m16n8k8

// fp32 -> tf32, rounded to nearest (ties away); the result is an fp32 bit pattern whose low 13
// bits are zero, which is what mma's .tf32 operands expect.
__device__ __forceinline__ float to_tf32(float x) {
  unsigned r;
  asm("cvt.rna.tf32.f32 %0, %1;" : "=r"(r) : "f"(x));
  return __uint_as_float(r);
}

// d += A (16 x 8) * B (8 x 8), fragments as in the table at the top.
__device__ __forceinline__ void mma_tf32(float (&d)[4], const float4& a, float b0, float b1) {
  asm volatile(
      "mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 "
      "{%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
      : "r"(__float_as_uint(a.x)), "r"(__float_as_uint(a.y)), "r"(__float_as_uint(a.z)),
        "r"(__float_as_uint(a.w)), "r"(__float_as_uint(b0)), "r"(__float_as_uint(b1)));
}

template <int K_, int J_, int WX_>
struct Config {
  static constexpr int K = K_, J = J_, WX = WX_;
  static constexpr int threads = 32 * WX;
  static constexpr int rows = J + K - 1;         // input rows of the tile
  static constexpr int cols = 8 * WX + K - 1;    // input columns of the tile
  // A channel's stride in the tile: >= rows * cols and 16 more than a multiple of 32 floats, so
  // that a warp's load, whose 4 k slots may straddle two channels, hits 32 different banks.
  static constexpr int channel_stride = (rows * cols + 15) / 32 * 32 + 16;
  __host__ __device__ static int groups(int C) { return (C * K + 7) / 8; }  // k groups of 8 (c, q) slots
  static std::size_t shared_bytes(int C) {
    return std::size_t(groups(C)) * K * 32 * sizeof(float4) + 2 * std::size_t(C) * channel_stride * sizeof(float);
  }
};

// Copies 4 bytes global -> shared without passing through registers (the copy is in flight
// while the warp computes); src_bytes = 0 writes a zero instead (outside the image).
__device__ __forceinline__ void copy_async(float* dst, const float* src, bool inside) {
  const unsigned d = static_cast<unsigned>(__cvta_generic_to_shared(dst));
  asm volatile("cp.async.ca.shared.global [%0], [%1], 4, %2;" ::"r"(d), "l"(src), "r"(inside ? 4 : 0));
}

// The input tile of work item `item` = ((b * bands + band) * column_blocks + cb), copied into
// `tile`: element (c, r, x) is input[b][c][h0 + r][w0 + x], zero outside the image.
// Consecutive threads take consecutive x (coalesced); nothing waits here.
template <class Cfg>
__device__ void fetch_tile(float* tile, const float* input, int item, int C, int H, int W, int bands,
                           int column_blocks) {
  const int cb = item % column_blocks, band = item / column_blocks % bands, b = item / column_blocks / bands;
  const int h0 = band * Cfg::J, w0 = cb * 8 * Cfg::WX;
  const int n = C * Cfg::rows * Cfg::cols;
  for (int i = threadIdx.x; i < n; i += Cfg::threads) {
    const int c = i / (Cfg::rows * Cfg::cols), rx = i % (Cfg::rows * Cfg::cols);
    const int y = h0 + rx / Cfg::cols, x = w0 + rx % Cfg::cols;
    const bool inside = y < H && x < W;
    copy_async(tile + c * Cfg::channel_stride + rx,
               input + (inside ? ((std::size_t(b) * C + c) * H + y) * W + x : 0), inside);
  }
}

// grid = (blocks that loop over the work items, map tiles of 16); Cfg::threads threads.
// A work item is one image's J output rows x 8 * WX output columns. Each block stages A once,
// then walks its items with two tile buffers: the next item's copy is in flight while the
// warps multiply the current one.
template <class Cfg>
__global__ void __launch_bounds__(Cfg::threads)
    tc_conv_kernel(float* __restrict__ output, const float* __restrict__ input,
                   const float* __restrict__ mask, const int M, const int C, const int H, const int W,
                   const int bands, const int column_blocks, const int items) {
  constexpr int K = Cfg::K, J = Cfg::J, V = J + K - 1;
  extern __shared__ __align__(16) float smem[];
  const int groups = Cfg::groups(C), CK = C * K;
  float4* A_s = reinterpret_cast<float4*>(smem);      // [groups][K][32 lanes]: A's fragments
  float* tiles = smem + groups * K * 32 * 4;          // 2 x [C][channel_stride]: input tiles
  const int tile_floats = C * Cfg::channel_stride;

  const int H_out = H - K + 1, W_out = W - K + 1, m0 = blockIdx.y * kMapsPerTile;
  const int tid = threadIdx.x, lane = tid % 32, warp = tid / 32;
  const int g = lane / 4, t = lane % 4;

  int item = blockIdx.x;
  if (item < items) fetch_tile<Cfg>(tiles, input, item, C, H, W, bands, column_blocks);
  asm volatile("cp.async.commit_group;");

  // A's fragments for every (k group s, mask row p, lane): slot k of group s is the pair
  // (c, q) = divmod(8s + k, K); the weight of map m is mask[m][c][p][q], 0 past M or C*K.
  for (int i = tid; i < groups * K * 32; i += Cfg::threads) {
    const int l = i % 32, p = i / 32 % K, s = i / 32 / K;
    float a[4];
#pragma unroll
    for (int e = 0; e < 4; ++e) {  // (a0, a1, a2, a3) = (row g, g + 8) x (slot t, t + 4)
      const int m = m0 + l / 4 + 8 * (e % 2), kk = 8 * s + l % 4 + 4 * (e / 2);
      a[e] = m < M && kk < CK ? to_tf32(mask[((m * C + kk / K) * K + p) * K + kk % K]) : 0.0f;
    }
    A_s[i] = make_float4(a[0], a[1], a[2], a[3]);
  }

  for (int buffer = 0; item < items; item += gridDim.x, buffer ^= 1) {
    // Start the next item's copy into the other buffer, then wait for this item's copy only.
    const int next = item + gridDim.x;
    if (next < items)
      fetch_tile<Cfg>(tiles + (buffer ^ 1) * tile_floats, input, next, C, H, W, bands, column_blocks);
    asm volatile("cp.async.commit_group;");
    asm volatile("cp.async.wait_group 1;" ::: "memory");
    __syncthreads();  // everyone's copies of this tile (and A_s) are complete
    const float* tile = tiles + buffer * tile_floats;

    float acc[J][4] = {};
    const int x_thread = warp * 8 + g;  // this thread's pixel column n = g, in tile coordinates
    for (int s = 0; s < groups; ++s) {
      // The thread's two k slots, t and t + 4: its column of input rows for each, v[0 .. V-1],
      // rounded to tf32 here (the copy brought raw fp32).
      float v0[V], v1[V];
      const int k0 = 8 * s + t, k1 = k0 + 4;
      const float* col0 = tile + (k0 / K) * Cfg::channel_stride + x_thread + k0 % K;
      const float* col1 = tile + (k1 / K) * Cfg::channel_stride + x_thread + k1 % K;
#pragma unroll
      for (int r = 0; r < V; ++r) {
        v0[r] = k0 < CK ? to_tf32(col0[r * Cfg::cols]) : 0.0f;
        v1[r] = k1 < CK ? to_tf32(col1[r * Cfg::cols]) : 0.0f;
      }
#pragma unroll
      for (int p = 0; p < K; ++p) {
        const float4 a = A_s[(s * K + p) * 32 + lane];
#pragma unroll
        for (int j = 0; j < J; ++j) mma_tf32(acc[j], a, v0[j + p], v1[j + p]);  // output row h0 + j
      }
    }

    // d0, d1: map m0 + g, columns 2t, 2t + 1; d2, d3: map m0 + g + 8.
    const int cb = item % column_blocks, band = item / column_blocks % bands, b = item / column_blocks / bands;
    const int h0 = band * J, w = cb * 8 * Cfg::WX + warp * 8 + 2 * t;
    const bool pairs = W_out % 2 == 0;  // then w even means an 8-byte aligned float2
#pragma unroll
    for (int j = 0; j < J; ++j) {
      const int h = h0 + j;
      if (h >= H_out) break;
#pragma unroll
      for (int half = 0; half < 2; ++half) {
        const int m = m0 + g + 8 * half;
        if (m >= M) continue;
        float* out = output + ((std::size_t(b) * M + m) * H_out + h) * W_out + w;
        if (pairs) {
          if (w < W_out) *reinterpret_cast<float2*>(out) = make_float2(acc[j][2 * half], acc[j][2 * half + 1]);
        } else {
          if (w < W_out) out[0] = acc[j][2 * half];
          if (w + 1 < W_out) out[1] = acc[j][2 * half + 1];
        }
      }
    }
    __syncthreads();  // done reading this buffer before the next iteration's copy refills it
  }
  asm volatile("cp.async.wait_all;" ::: "memory");
}

template <class Cfg>
void launch(float* output, const float* input, const float* mask, const labkit::ConvShape& s) {
  const std::size_t bytes = Cfg::shared_bytes(s.C);
  if (bytes > kMaxSharedBytes) {
    throw std::invalid_argument("12-tensor-cores: " + labkit::to_string(s) + " needs " + std::to_string(bytes) +
                                " bytes of shared memory per block (A's fragments and two tiles of " +
                                std::to_string(s.C) + " channels); the limit is " + std::to_string(kMaxSharedBytes));
  }
  // Enough blocks to fill every SM as far as registers and shared memory allow, each looping.
  static int slots = 0;  // blocks per SM x SMs: a property of the device and the config
  if (slots == 0) {
    int device = 0, sms = 0, per_sm = 0;
    LABKIT_CUDA_CHECK(cudaGetDevice(&device));
    LABKIT_CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
    LABKIT_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, tc_conv_kernel<Cfg>, Cfg::threads,
                                                                    Cfg::shared_bytes(4)));
    slots = std::max(1, per_sm) * sms;
  }
  const int column_blocks = (s.W_out() + 8 * Cfg::WX - 1) / (8 * Cfg::WX);
  const int bands = (s.H_out() + Cfg::J - 1) / Cfg::J;
  const int map_tiles = (s.M + kMapsPerTile - 1) / kMapsPerTile;
  const long long items = (long long)s.B * bands * column_blocks;
  if (items > INT_MAX)
    throw std::invalid_argument("12-tensor-cores: too many tiles for int indexing: " + labkit::to_string(s));
  const dim3 grid(unsigned(std::min<long long>(items, std::max(1, slots / map_tiles))), map_tiles, 1);
  tc_conv_kernel<Cfg><<<grid, Cfg::threads, bytes>>>(output, input, mask, s.M, s.C, s.H, s.W, bands,
                                                     column_blocks, int(items));
  LABKIT_CUDA_CHECK_LAUNCH();
}

inline void check_shape(const labkit::ConvShape& s) {
  labkit::require_grid_limits(s, "12-tensor-cores");  // images in grid.z
  labkit::require_int_indexing(s, "12-tensor-cores");
  if (s.K > 7) {
    throw std::invalid_argument("12-tensor-cores: masks up to 7 x 7 only (the kernel is unrolled per K), got " +
                                labkit::to_string(s));
  }
}

// The forward pass: the kernel that fits `shape`, launched on the default stream.
inline void forward(float* device_output, const float* device_input, const float* device_mask,
                    const labkit::ConvShape& shape) {
  check_shape(shape);
  float* o = device_output;
  const float* in = device_input;
  const float* w = device_mask;
  switch (shape.K) {
    case 1: launch<Config<1, 8, 4>>(o, in, w, shape); break;
    case 2: launch<Config<2, 8, 4>>(o, in, w, shape); break;
    case 3: launch<Config<3, 8, 4>>(o, in, w, shape); break;
    case 4: launch<Config<4, 8, 4>>(o, in, w, shape); break;
    case 5: launch<Config<5, 8, 4>>(o, in, w, shape); break;
    case 6: launch<Config<6, 8, 4>>(o, in, w, shape); break;
    default:  // K = 7: the grading shapes get their own tiles (the table at the top)
      if (shape.M <= 8 && shape.W_out() >= 40) launch<Config<7, 16, 5>>(o, in, w, shape);
      else if (shape.W_out() >= 24) launch<Config<7, 17, 5>>(o, in, w, shape);
      else launch<Config<7, 8, 4>>(o, in, w, shape);
      break;
  }
}

}  // namespace maps_mma
