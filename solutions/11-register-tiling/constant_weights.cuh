// constant_weights.cuh — conv1's kernel in the 11-register-tiling instructor solution: a register
// tile whose weights come from the constant bank, as lab 02 taught, so that the loop has no weight
// loads. register_tiling.cuh, beside this file, includes it. Its forward() sends conv1's shape
// family here: K = 7, C = 1, M <= 4.
//
// Contract:
//   * load_weights(host_mask, device_mask, shape) runs in the prolog, which is not timed. It copies
//     the mask into the __constant__ array and remembers which device mask it copied (the pointer
//     and the shape). The kit's mask does not change between the prolog and the timed calls
//     (docs/grading.md, "Fresh data in every timed call").
//   * ready(device_mask, shape) says whether the constant array holds this mask. When it does not,
//     forward() falls back to the shared-memory row tile, so the result is always right.
//
// Why it pays on conv1. In the row tile (`<7, 4, 8>`, register_tiling.cuh), a (c, p) step issues 7
// float4 weight reads from shared memory next to 4 input reads and 224 FFMAs. Here every (p, q) is
// unrolled. Each weight's address is then a compile-time offset into the constant bank, the same
// for every thread. The compiler loads the weights into uniform registers (ULDC) and each FFMA reads
// one as an operand. A thread computes 4 maps x 2 rows x 4 pixels: each input row it reads feeds
// both of its output rows (mask rows p and p - 1), so 8 row reads serve 2 rows where 1-row threads
// need 14, and a weight held in a uniform register serves 8 FFMAs. 32 accumulators, 48 registers;
// blocks of 16 rows x 20 segments (8 row pairs, 160 threads) run 8 to an SM, and their 40 warps
// hide the memory latency of a layer that writes 1 GB at batch 10000.
//
//   per thread               FFMA  LDS.128 (input)  registers
//   conv1, 1 row x 4 px       784        21            32
//   conv1, 2 rows x 4 px     1568        24            48     (this kernel)
//
// Measured (standalone driver, batch 10000, CUDA events, median of 20, L2 flushed, NVIDIA H100 80GB
// HBM3): the row tile 0.6985 ms; 1 row x 4 pixels a thread 0.556 ms as first written for 86 x 86
// only, 0.562 ms with run-time sizes; 2 rows x 4 pixels 0.528-0.531 ms against 0.563-0.564 ms for
// 1 row in the same runs (two runs). 1 row x 8 pixels a thread (48 registers) ran 0.684 ms and
// 1 x 16 (96 registers) 0.976 ms: wider segments read more shared memory per FFMA, not less.
// conv2 was tried too, as 16 maps x 2 pixels with every weight from the constant bank: 6.2 ms. It
// needs 1331 ULDCs for 2652 FFMAs, since each weight feeds only 2 FFMAs. As 4 maps x 17 pixels, with
// the map group taken from blockIdx, it ran 0.36 ms at batch 1000 against the column tile's 0.20,
// stalled on instruction fetch.
#pragma once

#include <cstdint>

#include <cuda_runtime.h>

#include "labkit/conv.h"
#include "labkit/cuda_check.h"

namespace constant_weights {

constexpr int kK = 7, kMaps = 4, kRP = 4;  // mask side, maps, pixels of a thread's row segment
constexpr int kRows = 16, kPairs = kRows / 2;  // output rows of a block; a thread takes 2 of them
// Segments of a row at most (W_out <= 320): a block is kPairs x segments <= 640 threads, so that
// __launch_bounds__(640, 2) holds conv1's kernel to 48 registers (8 blocks of its 160 threads an SM;
// left to itself, ptxas took 56). The run-time-size kernels keep (640, 1): at 48 they spill.
constexpr int kMaxSegments = 80;

__constant__ float weights[kMaps * kK * kK];  // [map][p][q]; maps past M are 0

// Segments of kRP pixels in an output row, and the tile's row stride in floats: at least segs * 4
// + 8 (the last segment's three float4 reads stay in the row), a multiple of 4 (aligned float4s).
__host__ __device__ constexpr int segments(int W_out) { return (W_out + kRP - 1) / kRP; }
__host__ __device__ constexpr int tile_stride(int segs) { return (segs * kRP + 8 + 3) / 4 * 4; }

// VEC floats (1 or 2) from global to shared memory with cp.async: no register in between, so a
// thread issues all its copies before it waits.
template <int VEC>
__device__ __forceinline__ void copy_async(float* dst, const float* src) {
  const unsigned to = static_cast<unsigned>(__cvta_generic_to_shared(dst));
  asm volatile("cp.async.ca.shared.global [%0], [%1], %2;\n" ::"r"(to), "l"(src), "n"(VEC * 4) : "memory");
}

// The shapes this kernel computes: conv1's family, with output rows no wider than a block allows.
inline bool takes(const labkit::ConvShape& s) {
  return s.K == kK && s.C == 1 && s.M <= kMaps && segments(s.W_out()) <= kMaxSegments;
}

// Which device mask the constant array holds (set by load_weights, read by ready).
struct Loaded {
  const float* device_mask = nullptr;
  labkit::ConvShape shape{};
};
inline Loaded& loaded() {
  static Loaded l;
  return l;
}

inline void load_weights(const float* host_mask, const float* device_mask, const labkit::ConvShape& s) {
  if (!takes(s)) return;
  float w[kMaps * kK * kK] = {};
  for (int i = 0; i < s.M * kK * kK; ++i) w[i] = host_mask[i];
  LABKIT_CUDA_CHECK(cudaMemcpyToSymbol(weights, w, sizeof w));
  loaded() = {device_mask, s};
}

inline bool ready(const float* device_mask, const labkit::ConvShape& s) {
  const Loaded& l = loaded();
  return takes(s) && l.device_mask == device_mask && l.shape.M == s.M && l.shape.C == s.C && l.shape.K == s.K;
}

// Block (strip, image): output rows h0 .. h0 + kRows - 1 of all maps; thread t takes rows r and
// r + 1 (r = 2 * (t / segs)) and the pixels w0 = (t % segs) * 4 .. w0 + 3. The tile holds input
// rows h0 .. h0 + kRows + 5, `stride` floats apart (stride >= segs * 4 + 8, a multiple of 4: the
// last segment's float4 reads stay in the row). Columns past the input's edge and rows past its
// bottom are never written; they only feed pixels past W_out - 1 or a row r + 1 = H_out, which are
// not stored.
// VEC: floats a staging copy moves, 2 where rows start 8-byte aligned (even W), else 1. HC, WC, MC:
// the input's size and the maps when known at compile time (conv1's 86 x 86, 4 maps), 0 otherwise.
// Known sizes turn the index arithmetic into constants: 0.562 against 0.648 ms for the
// run-time-size kernel on conv1 (batch 10000, H100). Known maps and an even H_out make every store
// unconditional, so the compiler issues row r's stores as soon as its last FFMA is done, while row
// r + 1's run, and keeps every store a float4 (with M a run-time value it split one into four
// scalar stores): 0.541 against 0.557 ms (standalone driver, batch 10000, H100; the first 2-row
// prototype, with no run-time sizes at all, 0.529 ms).
template <int VEC, int HC = 0, int WC = 0, int MC = 0>
__global__ void __launch_bounds__(kPairs * kMaxSegments, WC > 0 ? 2 : 1)
    conv_constant_weights_kernel(float* __restrict__ output, const float* __restrict__ input, const int m_arg,
                                 const int h_arg, const int w_arg, const int segs_arg, const int stride_arg) {
  constexpr int XN = 12;  // the row segment: RP + K - 1 = 10 values, read as 3 float4s
  extern __shared__ __align__(16) float tile[];  // [kRows + kK - 1][stride]
  const int H = HC ? HC : h_arg, W = WC ? WC : w_arg, M = MC ? MC : m_arg;
  const int segs = WC ? segments(WC - kK + 1) : segs_arg;
  const int stride = WC ? tile_stride(segs) : stride_arg;
  const int H_out = H - kK + 1, W_out = W - kK + 1;
  const int b = blockIdx.y, h0 = blockIdx.x * kRows, tid = threadIdx.x;
  // Staging teams of `lanes` threads: whole warps, or the whole block when it is smaller than one.
  // Threads past the last whole team (a block of 168 has 8) copy nothing.
  const int lanes = min(32, int(blockDim.x)), teams = blockDim.x / lanes;
  const int lane = tid % lanes, team = tid / lanes;

  // 1. The input rows, VEC floats a cp.async (conv1's row is 344 bytes: 8-byte aligned, not 16).
  const int rows_in = min(kRows + kK - 1, H - h0);
  if constexpr (WC > 0) {  // a known row length: the block's copies in one sequence, no idle lane
    constexpr int chunks = WC / VEC;
    for (int i = tid; i < rows_in * chunks; i += blockDim.x) {
      const int r = i / chunks, col = (i - r * chunks) * VEC;
      copy_async<VEC>(tile + r * stride + col, input + (size_t(b) * H + h0 + r) * W + col);
    }
  } else {  // a team a row at a time
    for (int r = team; r < rows_in && team < teams; r += teams) {
      const float* src = input + (size_t(b) * H + h0 + r) * W;
      for (int col = lane * VEC; col < W; col += lanes * VEC)
        copy_async<VEC>(tile + r * stride + col, src + col);
    }
  }
  asm volatile("cp.async.wait_all;\n" ::: "memory");
  __syncthreads();

  const int pair = tid / segs, r = 2 * pair, w0 = (tid - pair * segs) * kRP, h = h0 + r;
  // With known sizes and whole strips (conv1: 80 = 5 x 16 rows), the launch (kPairs x segs threads,
  // one block a strip) leaves no thread outside, so there is nothing to test.
  constexpr bool whole_strips = HC > 0 && WC > 0 && (HC - kK + 1) % kRows == 0;
  if (!whole_strips && (pair >= kPairs || h >= H_out)) return;

  // 2. 4 maps x 2 rows x 4 pixels. Input row h + t (t = 0 .. 7) is mask row p = t of output row h
  // and p = t - 1 of row h + 1: its 10 inputs of the segment once into registers, then up to 2 x 7
  // x 4 x 4 FFMAs whose weights are compile-time offsets into `weights` (t is unrolled, so the
  // tests on t cost nothing).
  // Row h's output address, made once before the loop (ptxas still spills 8 bytes at 48 registers
  // here, where the prototype did not; the cause was not found).
  float* const out_h = output + (size_t(b) * M * H_out + h) * W_out + w0;  // map i is i * HW further
  float acc[2][kMaps][kRP] = {};  // [row r, r + 1][map][pixel]
#pragma unroll
  for (int t = 0; t <= kK; ++t) {
    float x[XN];
#pragma unroll
    for (int u = 0; u < XN; u += 4) {
      const float4 v = *reinterpret_cast<const float4*>(tile + (r + t) * stride + w0 + u);
      x[u] = v.x, x[u + 1] = v.y, x[u + 2] = v.z, x[u + 3] = v.w;
    }
#pragma unroll
    for (int q = 0; q < kK; ++q)
#pragma unroll
      for (int i = 0; i < kMaps; ++i)
#pragma unroll
        for (int j = 0; j < kRP; ++j) {
          if (t < kK) acc[0][i][j] += weights[(i * kK + t) * kK + q] * x[j + q];
          if (t > 0) acc[1][i][j] += weights[(i * kK + t - 1) * kK + q] * x[j + q];
        }
  }

  // 3. The stores, row h and (if inside) row h + 1: a float4 per map where the row width allows
  // it, else pixel by pixel.
  const int HW = H_out * W_out;
  // h is even (h0 and r are): with an even H_out known at compile time, row h + 1 is inside too.
  constexpr bool both_rows = HC > 0 && (HC - kK + 1) % 2 == 0;
#pragma unroll
  for (int k = 0; k < 2; ++k) {
    if (!both_rows && h + k >= H_out) break;
    float* out = out_h + k * W_out;
    if (W_out % 4 == 0) {
#pragma unroll
      for (int i = 0; i < kMaps; ++i)
        if (i < M)
          *reinterpret_cast<float4*>(out + i * HW) = make_float4(acc[k][i][0], acc[k][i][1], acc[k][i][2], acc[k][i][3]);
    } else {
#pragma unroll
      for (int i = 0; i < kMaps; ++i)
#pragma unroll
        for (int j = 0; j < kRP; ++j)
          if (i < M && w0 + j < W_out) out[i * HW + j] = acc[k][i][j];
    }
  }
}

// Needs ready(device_mask, s): the weights come from the constant array, not from a mask pointer.
inline void forward(float* output, const float* input, const labkit::ConvShape& s) {
  const int segs = segments(s.W_out()), stride = tile_stride(segs);
  const std::size_t bytes = std::size_t(kRows + kK - 1) * stride * sizeof(float);
  const dim3 grid((s.H_out() + kRows - 1) / kRows, s.B);
  const bool even = s.W % 2 == 0 && reinterpret_cast<std::uintptr_t>(input) % 8 == 0;
  const bool conv1 = s.H == 86 && s.W == 86 && s.M == kMaps;
  const auto kernel = conv1 && even ? conv_constant_weights_kernel<2, 86, 86, kMaps>
                      : even        ? conv_constant_weights_kernel<2>
                                    : conv_constant_weights_kernel<1>;
  if (bytes > 48 * 1024)
    LABKIT_CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, int(bytes)));
  kernel<<<grid, kPairs * segs, bytes>>>(output, input, s.M, s.H, s.W, segs, stride);
  LABKIT_CUDA_CHECK_LAUNCH();
}

}  // namespace constant_weights
