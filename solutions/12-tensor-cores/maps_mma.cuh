// maps_mma.cuh — the 12-tensor-cores solution's kernel for layers with many maps (conv2, M = 16):
// maps in the MMA's m dimension, output pixels in n. tensor_cores.cuh picks it when M > 8 and
// conv_rows_mma.cuh (pixels in m, maps in n) for the layers with few maps (conv1, M = 4).
//
// The conv as an implicit GEMM, output[m][col] = sum_r A[m][r] * X[r][col] (lab 06), with the
// products on tensor cores: mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32, one warp-wide
// instruction that multiplies a 16 x 8 tile of A (16 maps x 8 reduction rows) by an 8 x 8 tile of
// X (8 rows x 8 output pixels) and adds the 16 x 8 product into fp32 accumulators.
// Operands are TF32 (fp32's exponent, 10 mantissa bits): cvt.rna.tf32.f32 rounds each weight
// when the block stages A and each input value once, in the shared tile, when it arrives there.
// Products of two TF32 values are exact in fp32 and the sums stay fp32.
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
//     only. So a thread walks its column of input rows once, r = 0 .. J+K-2, and issues every
//     MMA (j = r - p, p) that row feeds: J + K - 1 shared loads feed J * K MMAs, instead of two
//     per MMA, and only the current row's two values are live.
//   * A's fragment for (k group s, row p) is the same for every j: it is built once per block,
//     already in fragment order, A_s[s][p][lane] = (a0, a1, a2, a3), one 16-byte load per lane.
// Per k group s and per warp: 2 * (J + K - 1) 4-byte loads of X and K 16-byte loads of A feed
// J * K MMAs (conv2: 46 + 28 wavefronts for 119 MMAs).
//
// Padding. The (c, q) pairs are C*K (conv2: 28) in ceil(C*K/8) k groups (32 slots); the spare
// slots get A = 0 and B = 0. A last group of at most 4 pairs (conv2: 28 = 3 * 8 + 4) is paired
// instead: its slot k < 4 is pair k at an even mask row 2P and slot k + 4 the same pair at row
// 2P + 1, so it needs (K + 1) / 2 MMAs per output row, not K (conv2: 25 MMAs per output row and
// 16 maps x 8 pixels instead of 28, 11% fewer). Maps past M are rows of zeros in A, never stored. The block's
// input tile is zero past the image's edge, so pixels past H_out or W_out compute garbage from
// zeros and are never stored either.
//
// Output. Each thread owns, per output row j, maps g and g + 8 at columns 2t and 2t + 1: two
// consecutive floats, one float2 store when W_out is even (aligned, since w is even). A warp's
// store covers 8 maps x 32 contiguous bytes.
//
// Latency. A tile's global loads take microseconds and, at 150 registers per thread, only two
// blocks share an SM: a block that loaded its tile, waited and then multiplied left the tensor
// cores idle most of the time. So each block loops over work items (grid = as many blocks as fit
// on the GPU) and copies the next item's tile with cp.async into a second buffer while its warps
// multiply the current one; the copy brings raw fp32, and each thread rounds the elements it
// copied to tf32 in place before the barrier that publishes the tile.
//
// Instruction count. Two changes cut the first version's instructions by 37%, from 8.5 to 5.3 per
// MMA (ncu on an H200; conv2 at batch 10000: 0.958 ms in the report -> 0.705 ms, tensor pipe 31% ->
// 43.5%): rounding each tile element once instead of at each of its uses (on sm_90 cvt.rna.tf32.f32
// is a range test, an add, a mask and a select, and the MMA loop had one per load), and paying the
// tile copy's index divisions once per (row, column) position rather than once per element.
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
// Not volatile: the MMA has no effect beyond its outputs, so the compiler may move the next
// row's shared loads above it.
__device__ __forceinline__ void mma_tf32(float (&d)[4], const float4& a, float b0, float b1) {
  asm(
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
// Consecutive threads take consecutive x (coalesced); nothing waits here. The loop is over the
// tile's (row, column) positions with the channels inside it, so the divisions by the tile's
// width (constants: a multiply and a shift) are paid once per position, not once per element.
// Offsets are int: check_shape() requires the input to have fewer than INT_MAX elements.
template <class Cfg>
__device__ void fetch_tile(float* tile, const float* input, int item, int C, int H, int W, int bands,
                           int column_blocks) {
  const int cb = item % column_blocks, band = item / column_blocks % bands, b = item / column_blocks / bands;
  const int h0 = band * Cfg::J, w0 = cb * 8 * Cfg::WX, plane = H * W;
  const float* image = input + b * C * plane;
  for (int rx = threadIdx.x; rx < Cfg::rows * Cfg::cols; rx += Cfg::threads) {
    const int y = h0 + rx / Cfg::cols, x = w0 + rx % Cfg::cols;
    const bool inside = y < H && x < W;
    const float* src = inside ? image + y * W + x : image;  // nothing is read when outside
    for (int c = 0; c < C; ++c)
      copy_async(tile + c * Cfg::channel_stride + rx, inside ? src + c * plane : src, inside);
  }
}

// Rounds to tf32, in place, the elements of `tile` that this thread's fetch_tile copied: after
// cp.async.wait_group they are visible to this thread, and the barrier that follows publishes
// the rounded values to the block. Once per element here, instead of once per use in the MMA
// loop: on sm_90 cvt.rna.tf32.f32 is several instructions (a range check, an add, a mask).
template <class Cfg>
__device__ void round_tile(float* tile, int C) {
  for (int rx = threadIdx.x; rx < Cfg::rows * Cfg::cols; rx += Cfg::threads)
    for (int c = 0; c < C; ++c) {
      float& v = tile[c * Cfg::channel_stride + rx];
      v = to_tf32(v);
    }
}

// How the reduction's (c, q) pairs fall into k groups (see "Padding" at the top).
struct Reduction {
  int CK;       // C * K pairs
  int full;     // k groups of 8 pairs
  int rest;     // pairs of the last, partial group
  bool paired;  // that group takes its pairs at two mask rows (rest <= 4)
};

// acc[j] += every MMA of the work item for output row j (j < JJ) at tile column x (the
// lane's pixel n = g): input row r of the tile feeds output row j = r - p through mask row p, so
// the loop walks the rows once, loading each row's two values (slots t and t + 4) and issuing
// every MMA that uses them. Only A's fragments and two values of X are live, beside acc.
template <class Cfg, int JJ>
__device__ __forceinline__ void multiply(float (&acc)[JJ][4], const float4* A_s, const float* tile, int x,
                                         const Reduction& red, int lane) {
  constexpr int K = Cfg::K, V = JJ + K - 1;
  const int t = lane % 4;
  const float* origin = tile + x;  // tile row 0 of column x, channel 0
  // A k group of 8 (c, q) pairs: every mask row p.
  auto pairs_group = [&](int s) {
    // Slots past C*K have A = 0; their B is 0 too (not whatever a NaN input would make it).
    const int k0 = 8 * s + t, k1 = k0 + 4;
    const bool use0 = k0 < red.CK, use1 = k1 < red.CK;
    const float* col0 = origin + (use0 ? (k0 / K) * Cfg::channel_stride + k0 % K : 0);
    const float* col1 = origin + (use1 ? (k1 / K) * Cfg::channel_stride + k1 % K : 0);
    float4 a[K];
#pragma unroll
    for (int p = 0; p < K; ++p) a[p] = A_s[(s * K + p) * 32 + lane];
#pragma unroll
    for (int r = 0; r < V; ++r) {
      const float b0 = use0 ? col0[r * Cfg::cols] : 0.0f;
      const float b1 = use1 ? col1[r * Cfg::cols] : 0.0f;
#pragma unroll
      for (int p = 0; p < K; ++p) {
        const int j = r - p;  // output row h0 + j
        if (j >= 0 && j < JJ) mma_tf32(acc[j], a[p], b0, b1);
      }
    }
  };
  // The paired last group: slot t is pair 8s + t at mask row 2P, slot t + 4 the same pair one
  // row further down (2P + 1), so b1 of input row r is b0 of row r + 1 and input row r feeds
  // output row j = r - 2P: (K + 1) / 2 MMAs a row instead of K.
  auto paired_group = [&](int s) {
    constexpr int KP = (K + 1) / 2;
    const int k = 8 * s + t;
    const bool use = t < red.rest;
    const float* col = origin + (use ? (k / K) * Cfg::channel_stride + k % K : 0);
    float4 a[KP];
#pragma unroll
    for (int P = 0; P < KP; ++P) a[P] = A_s[(s * K + P) * 32 + lane];
    float below = use ? col[0] : 0.0f;
#pragma unroll
    for (int r = 0; r < V; ++r) {
      const float b0 = below;
      below = use && r + 1 < V ? col[(r + 1) * Cfg::cols] : 0.0f;  // past row V - 1 only mask row K (A = 0) reads it
#pragma unroll
      for (int P = 0; P < KP; ++P) {
        const int j = r - 2 * P;
        if (j >= 0 && j < JJ) mma_tf32(acc[j], a[P], b0, below);
      }
    }
  };
#pragma unroll 1
  for (int s = 0; s < red.full; ++s) pairs_group(s);
  if (red.paired) paired_group(red.full);
  else if (red.rest > 0) pairs_group(red.full);
}

// Maps g (half 0) or g + 8 (half 1) at columns w, w + 1 of one output row: one float2 store when
// W_out is even (w is even, so the address is 8-byte aligned).
__device__ __forceinline__ void store_pair(float* out, const float (&d)[4], int half, int w, int W_out) {
  if (W_out % 2 == 0) {
    if (w < W_out) *reinterpret_cast<float2*>(out) = make_float2(d[2 * half], d[2 * half + 1]);
  } else {
    if (w < W_out) out[0] = d[2 * half];
    if (w + 1 < W_out) out[1] = d[2 * half + 1];
  }
}

// grid = (blocks that loop over the work items, map tiles of 16); Cfg::threads threads.
// A work item is one image's J output rows x 8 * WX output columns. Each block stages A once,
// then walks its items with two tile buffers: the next item's copy is in flight while the
// warps multiply the current one.
// TC_MAPS_ROWS (J on conv2) and TC_MAPS_BLOCKS (the blocks per SM that __launch_bounds__
// budgets registers for). Measured on an NVIDIA H200, ncu, conv2 at batch 10000:
//   J = 17, 2 blocks (150 registers)                          0.705 ms, tensor pipe 43.7%
//   J = 17, 3 blocks (128 registers, 32 bytes of spills)      0.914-0.966 ms (won at batch 1000)
//   J = 8 / 10 / 12, 4 blocks (86 / 90 / 96 registers)       0.800 / 0.883 / 0.876 ms
//   each warp its own 14-column tiles, no barrier after A,
//   units taken from an atomic counter (4 warps a block)      1.09 ms, tensor pipe 27.9%
// More warps did not help, nor did removing the barrier that a quarter of the stall samples sit
// on: the shared 46-column tile, read by five warps, is what the faster versions have in common.
// On an NVIDIA H100 the kept tiling takes 0.951-0.960 ms (tensor pipe 33.3%, at the same 1.80
// GHz), and a third tile buffer (two items' copies in flight) measured 0.955-0.980 ms there.
// Then, on an H200 (ncu, conv2 at batch 10000, each variant twice, interleaved):
//   before the paired group                                   0.701 / 0.707 ms
//   the paired last group (kept: 11% fewer MMAs)              0.674 - 0.679 ms
//   ... with the tile copied as whole 16-byte rows             0.724 ms
//   ... p outer, j inner (all rows' B first, 17 MMAs between
//       two on one accumulator instead of 7)                   0.719 / 0.752 ms
//   ... a fifth warp on conv2's last 2 columns at 4 row
//       groups (no wasted column; 14% fewer MMAs)              0.793 ms (with 16-byte rows)
//   ... rounding in the MMA loop (2 instructions a value)      0.80 ms
// The warps are latency-bound (ncu: 2.4 warps a scheduler, top stalls fixed-latency "wait",
// barrier, long scoreboard; issue slots 25-30% busy): fewer MMAs for every warp helps a little,
// fewer for one warp or fewer instructions do not.
#ifndef TC_MAPS_ROWS
#define TC_MAPS_ROWS 17  // J of the conv2 tiling (output rows per work item)
#endif
#ifndef TC_MAPS_BLOCKS
#define TC_MAPS_BLOCKS (TC_MAPS_ROWS <= 12 ? 4 : 2)
#endif
template <class Cfg>
__global__ void __launch_bounds__(Cfg::threads, TC_MAPS_BLOCKS)
    tc_conv_kernel(float* __restrict__ output, const float* __restrict__ input,
                   const float* __restrict__ mask, const int M, const int C, const int H, const int W,
                   const int bands, const int column_blocks, const int items) {
  constexpr int K = Cfg::K, J = Cfg::J;
  extern __shared__ __align__(16) float smem[];
  const int groups = Cfg::groups(C), CK = C * K;
  // The last k group, when it has at most 4 (c, q) pairs, takes each pair at two mask rows.
  const int full = CK / 8, rest = CK % 8;
  const bool paired = rest > 0 && rest <= 4;
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
  // A paired last group (see "Padding" at the top) holds, for P = p < (K + 1) / 2, slot k < 4 =
  // pair 8s + k at mask row 2P and slot k + 4 = the same pair at mask row 2P + 1.
  for (int i = tid; i < groups * K * 32; i += Cfg::threads) {
    const int l = i % 32, p = i / 32 % K, s = i / 32 / K;
    float a[4];
#pragma unroll
    for (int e = 0; e < 4; ++e) {  // (a0, a1, a2, a3) = (row g, g + 8) x (slot t, t + 4)
      const int m = m0 + l / 4 + 8 * (e % 2);
      int kk = 8 * s + l % 4 + 4 * (e / 2), row = p;  // the pair and its mask row
      if (paired && s == full) kk = 8 * s + l % 4, row = 2 * p + e / 2;
      const bool used = paired && s == full ? l % 4 < rest && row < K : kk < CK;
      a[e] = m < M && used ? to_tf32(mask[((m * C + kk / K) * K + row) * K + kk % K]) : 0.0f;
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
    float* tile = tiles + buffer * tile_floats;
    round_tile<Cfg>(tile, C);
    __syncthreads();  // everyone's copies of this tile (and A_s) are complete and rounded

    const int cb = item % column_blocks, band = item / column_blocks % bands, b = item / column_blocks / bands;
    const int h0 = band * J;
    const Reduction red{C * K, full, rest, paired};
    const std::size_t map8 = std::size_t(8) * H_out * W_out;  // map m + 8 is this much further
    float acc[J][4] = {};
    multiply<Cfg, J>(acc, A_s, tile, warp * 8 + g, red, lane);
    // d0, d1: map m0 + g, columns 2t, 2t + 1; d2, d3: map m0 + g + 8.
    const int w = cb * 8 * Cfg::WX + warp * 8 + 2 * t;
    float* out = output + ((std::size_t(b) * M + m0 + g) * H_out + h0) * W_out + w;
#pragma unroll
    for (int j = 0; j < J; ++j, out += W_out) {
      if (h0 + j >= H_out) break;
      if (m0 + g < M) store_pair(out, acc[j], 0, w, W_out);
      if (m0 + g + 8 < M) store_pair(out + map8, acc[j], 1, w, W_out);
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
      else if (shape.W_out() >= 24) launch<Config<7, TC_MAPS_ROWS, 5>>(o, in, w, shape);
      else launch<Config<7, 8, 4>>(o, in, w, shape);
      break;
  }
}

}  // namespace maps_mma
