// column_tiling.cuh — the conv2 kernel of the 11-register-tiling instructor solution (K = 7 and
// more than 4 maps: conv2 is M 16, C 4, 40 x 40 -> 34 x 34). register_tiling.cuh, beside this file,
// includes it and sends those shapes here; conv1 and every other shape keep its row tiles.
//
// Direct convolution (no unrolled matrix) with two levels of reuse, as the row tile, but:
//   * shared memory: a block copies its input tiles (every channel) and its maps' weights into
//     __shared__ with cp.async, the next tile while it computes the current one (double buffer);
//   * registers: each thread computes RM = 2 maps x RH = 17 consecutive pixels of one output COLUMN.
//     For each (c, q) it reads the RH + K - 1 inputs of column w + q into registers once (float4
//     reads), then does 2 * RH * K = 238 FMAs, the 2 weights of a (c, q, p) read as one float2.
// Why it beat the row tile (<7, 16, 4>) on conv2 (the handout's "How the solution works" has the
// counts):
//   * no wasted FMA: 34 = 2 x 17, so two strips of 17 rows cover a column exactly, where row
//     segments of 4 pixels computed 36 of the 34 columns (and left 7 of 160 threads idle);
//   * fewer shared loads per FMA: with 4 maps a thread (the first version), 13 float4 reads (7 of
//     weights, 6 of inputs) per 476 FMAs against 31 per 448; the compiled loop is 95% FFMA;
//   * full-line stores: lanes hold consecutive columns, so every store instruction of a warp
//     writes whole 128-byte lines (the row tile's float2 stores left 36 of 34 columns a row);
//   * persistent blocks: weights staged once a block, and no SM idles while a wave of blocks waits
//     for its copies;
//   * two teams a block: one block of 768 threads an SM, as 2 teams of 384 (12 warps) with their
//     own buffers and barrier. With one team of 896 threads, every warp of the SM waited at the
//     same barrier for the slowest one (`barrier` was 1.45 of the 8.9 cycles between a warp's
//     issues); with two, one team's warps issue while the other's wait.
// Why 2 maps, not 4: 4 maps x 17 rows need 122 registers, so only 16 warps fit an SM, and the
// schedulers issued in 67% of cycles (ncu, batch 1000, H100). 2 maps need 72-78: 24-28 warps. The
// handout's "How the solution works" lists the team sizes and tiles measured.
//
// Work unit = (image, strip of RH output rows, chunk of CW columns; CW = W_out unless too wide), for
// the MB = RM * G maps of the block (conv2: G = 8 groups of 2 maps): L = G * CW lanes, lane (group,
// column) = (l / CW, l % CW). All units' lanes form one sequence; team t of block x takes an equal
// share of it, T (its threads) at a time: a range. A range may start or end inside a unit (T = 384
// is 1.41 of conv2's 272-lane units): every thread works, and every team as much.
//
// Shared memory (dynamic): w_s [C][K (q)][K (p)][MB], then for each team two buffers of S slots (S:
// the most units T lanes can touch), one unit's tile a slot:
//   slot [C][CWt = CW + K - 1 columns][XS], column-major: (c * CWt + col) * XS + row holds input
//   (b, c, h0 + row, c0 + col), 0 past the edge. XS = RH + K - 1 rounded up to an ODD number of
//   float4s (28 for conv2): a quarter-warp's 8 lanes read 8 columns 28 floats apart, 8 different
//   bank quads: no bank conflict.
//
//   layer  kernel <K, RM, RH>   threads x blocks an SM   registers   shared memory a block
//   conv2  <7, 2, 17>            2 x 384 x 1              77         12.5 KB weights + 2 x 2 x 3 x 17.9 KB
//
// Tuning macro (kernel.cu sets the same default; `labkit sweep` overrides it with -D):
//   RT_STREAM_STORES  1: outputs stored with st.global.cs (evict first), 0: plain   (1)
#pragma once

#include <algorithm>
#include <climits>
#include <cstddef>
#include <stdexcept>
#include <string>

#include "labkit/conv.h"
#include "labkit/conv_buffers.h"
#include "labkit/conv_limits.h"
#include "labkit/cuda_check.h"

#ifndef RT_STREAM_STORES
#define RT_STREAM_STORES 1
#endif

// #pragma unroll / unroll 1 in the device pass only: the host compiler also reads the __host__
// __device__ helpers below (for the emulation) and warns about a pragma it does not know.
#ifdef __CUDA_ARCH__
#define RT_UNROLL _Pragma("unroll")
#define RT_ROLLED _Pragma("unroll 1")
#else
#define RT_UNROLL
#define RT_ROLLED
#endif

namespace column_tiling {

constexpr int kMaxMapsPerBlock = 16;  // G * RM <= 16: conv2's maps, one block's weights

__host__ __device__ constexpr int ceil_div(int a, int b) { return (a + b - 1) / b; }
__host__ __device__ constexpr int round_up(int x, int to) { return ceil_div(x, to) * to; }
// A tile's column stride: `rows` floats rounded up to an odd number of float4s (see above).
__host__ __device__ constexpr int column_stride(int rows) {
  const int xs = round_up(rows, 4);
  return (xs / 4) % 2 == 1 ? xs : xs + 4;
}

// n / d for 0 <= n < 2^31 by a divisor known only at run time, as (n * m) >> shift: two or three
// instructions instead of the ~20 of an integer division. m = ceil(2^shift / d), shift = 31 +
// ceil(log2 d), made on the host; exact because m's rounding adds n * (m - 2^shift / d) / 2^shift
// < n / 2^(31 + ceil(log2 d)) < 1 / d to n / d, too little to reach the next integer.
struct FastDiv {
  int d = 1, shift = 31;
  unsigned m = 1u << 31;
  FastDiv() = default;
  explicit FastDiv(int divisor) : d(divisor) {
    while ((1LL << (shift - 31)) < d) ++shift;
    m = unsigned(((1ULL << shift) + d - 1) / d);
  }
  __host__ __device__ int div(int n) const { return int((unsigned long long)unsigned(n) * m >> shift); }
};

// Everything the kernel needs to know about a launch; made on the host by make_geometry().
struct Geometry {
  int M, C, H, W, K, H_out, W_out;
  int RH;         // output rows of a strip (of a thread)
  int G, MB;      // map groups of RM maps a block; MB = G * RM maps a block
  int CW, NCC;    // output columns of a unit, chunks of a row (NCC * CW >= W_out)
  int NS;         // strips of an image
  int L;          // lanes (threads) of a unit: G * CW
  int T, S;       // threads of a block; tile slots (the most units one range can touch)
  int units;      // B * NS * NCC
  int lanes;      // units * L
  int share;      // lanes of one block (set by launch(): ceil(lanes / gridDim.x))
  int CWt, XS;    // tile columns CW + K - 1, column stride
  int CG;         // groups of 32 tile columns (a staging task)
  FastDiv by_L, by_CW, by_NCC, by_NS_NCC, by_CG, by_C_CG;
  __host__ __device__ int slot_floats() const { return C * CWt * XS; }
  __host__ __device__ int weight_floats() const { return MB * C * K * K; }
  // Where the tiles start: after the weights, on a 16-byte boundary (they are read as float4s; with
  // 2 maps a group, MB * C * K * K need not be a multiple of 4: M 9, C 3 gives 1470).
  __host__ __device__ int tiles_offset() const { return round_up(weight_floats(), 4); }
};

// Unit u = (image, strip, chunk), chunks fastest.
struct Unit { int b, h0, c0; };  // image, first output row, first output column
__host__ __device__ inline Unit unit_origin(const Geometry& g, int u) {
  const int b = g.by_NS_NCC.div(u), r = u - b * g.NS * g.NCC, strip = g.by_NCC.div(r);
  return {b, strip * g.RH, (r - strip * g.NCC) * g.CW};
}
// Lane l is (group, column) = (l % L / CW, l % L % CW) of unit l / L: consecutive lanes (threads)
// take consecutive columns.
struct Lane { int unit, group, col; };
__host__ __device__ inline Lane lane_of(const Geometry& g, int l) {
  const int u = g.by_L.div(l), r = l - u * g.L, group = g.by_CW.div(r);
  return {u, group, r - group * g.CW};
}

// cp.async copies 4 bytes from global to shared memory without a register in between: a thread
// issues its copies back to back and waits once. valid == false writes 0 and reads nothing. On the
// host (a test can run these helpers on the CPU, thread by thread) it is a plain copy.
__host__ __device__ __forceinline__ void copy_async(float* dst, const float* src, bool valid) {
#ifdef __CUDA_ARCH__
  const unsigned shared_address = static_cast<unsigned>(__cvta_generic_to_shared(dst));
  asm volatile("cp.async.ca.shared.global [%0], [%1], 4, %2;\n" ::"r"(shared_address), "l"(src),
               "r"(valid ? 4 : 0)
               : "memory");
#else
  *dst = valid ? *src : 0.0f;
#endif
}
__device__ __forceinline__ void commit_copies() { asm volatile("cp.async.commit_group;\n" ::: "memory"); }
// Wait for all but the newest group: the range about to be computed has landed, the prefetch not.
__device__ __forceinline__ void wait_older_copies() { asm volatile("cp.async.wait_group 1;\n" ::: "memory"); }

// Four floats of shared memory (16-byte aligned) into registers r[0..3]: one LDS.128.
__host__ __device__ __forceinline__ void load4(float* r, const float* s) {
  const float4 v = *reinterpret_cast<const float4*>(s);
  r[0] = v.x, r[1] = v.y, r[2] = v.z, r[3] = v.w;
}
// Two floats (8-byte aligned): one LDS.64.
__host__ __device__ __forceinline__ void load2(float* r, const float* s) {
  const float2 v = *reinterpret_cast<const float2*>(s);
  r[0] = v.x, r[1] = v.y;
}

__host__ __device__ __forceinline__ void store_output(float* p, float v) {
#if defined(__CUDA_ARCH__) && RT_STREAM_STORES
  __stcs(p, v);  // written once, not read again here: let it leave L2 before the input does
#else
  *p = v;
#endif
}

// The block's weights, maps m0 .. m0 + MB - 1, as w_s[((c * K + q) * K + p) * MB + i]; 0 past M.
__host__ __device__ inline void stage_weights(const Geometry& g, float* w_s, const float* mask, int m0,
                                              int tid, int threads) {
  const int KK = g.K * g.K;
  for (int i = tid; i < g.weight_floats(); i += threads) {
    const int m = m0 + i % g.MB, r = i / g.MB;  // r = (c * K + q) * K + p: once a block
    const int p = r % g.K, q = r / g.K % g.K, c = r / KK;
    copy_async(w_s + i, mask + (min(m, g.M - 1) * g.C + c) * KK + p * g.K + q, m < g.M);
  }
}

// The tiles of the range of lanes `begin` .. `end` - 1 (units first .. last, slot s = unit - first).
// Task = (slot, channel, group of 32 columns); a warp takes tasks warp, warp + warps, ...; lane l
// copies column 32 * group + l, all TR = RH + K - 1 rows: each copy instruction of the warp reads
// 32 consecutive floats of one input row.
template <int TR>
__host__ __device__ inline void stage_tiles(const Geometry& g, float* buf, const float* input, int begin, int end,
                                            int warp, int warps, int lane) {
  const int rows = TR, first = g.by_L.div(begin);
  const int tasks = (g.by_L.div(end - 1) + 1 - first) * g.C * g.CG;
  for (int t = warp; t < tasks; t += warps) {
    const int s = g.by_C_CG.div(t), cc = t - s * g.C * g.CG, c = g.by_CG.div(cc);
    const int col = (cc - c * g.CG) * 32 + lane;
    if (col >= g.CWt) continue;
    const Unit o = unit_origin(g, first + s);
    const int x = o.c0 + col, inside = min(rows, g.H - o.h0);  // rows inside the input (>= 1)
    const float* src = input + ((o.b * g.C + c) * g.H + o.h0) * g.W + min(x, g.W - 1);
    float* dst = buf + s * g.slot_floats() + (c * g.CWt + col) * g.XS;
    if (x < g.W && inside == rows) {  // the network's layers: always
      RT_UNROLL
      for (int r = 0; r < rows; ++r, src += g.W) copy_async(dst + r, src, true);
    } else {
      for (int r = 0; r < rows; ++r) copy_async(dst + r, src + min(r, inside - 1) * g.W, x < g.W && r < inside);
    }
  }
}

// The register tile: acc[i][j] += sum over c, q, p of mask(m + i, c, p, q) * in(h0 + j + p, w + q).
// col: the thread's column in its slot (channel 0); wts: w_s + group * RM.
// Loop order: c rolled, q unrolled (a step = one input column of one channel: RH + K - 1 inputs
// read once); inside a step p, the maps i and the rows j unrolled, so x[] and acc[][] are registers.
// FC, FMB, FCWT: channels, maps a block and tile columns when known at compile time (0: from g),
// so that the weight and column strides are immediate offsets, not registers reloaded every step.
// Standalone driver, conv2, batch 10000, H100: 1.535 ms with c and q rolled and the strides from g;
// 1.514 ms with the strides fixed; 1.509 with q unrolled; 1.489 with both (same run).
template <int K, int RM, int RH, int FC = 0, int FMB = 0, int FCWT = 0>
__host__ __device__ __forceinline__ void accumulate(float (&acc)[RM][RH], const Geometry& g, const float* col,
                                                    const float* wts) {
  constexpr int XS = column_stride(RH + K - 1);  // g.XS: the stride follows from RH and K
  const int C = FC ? FC : g.C, MB = FMB ? FMB : g.MB, CWt = FCWT ? FCWT : g.CWt;
  const float* xs = col;  // column w + q of channel c, row 0
  const float* ws = wts;  // weights of (c, q, p = 0)
  RT_ROLLED
  for (int c = 0; c < C; ++c, xs += (CWt - K) * XS) {
    RT_UNROLL
    for (int q = 0; q < K; ++q, xs += XS, ws += K * MB) {
      constexpr int XN = round_up(RH + K - 1, 4);
      float x[XN];
      RT_UNROLL
      for (int u = 0; u < XN; u += 4) load4(x + u, xs + u);
      RT_UNROLL
      for (int p = 0; p < K; ++p) {
        float w[RM];
        if constexpr (RM == 2) {
          load2(w, ws + p * MB);
        } else {
          RT_UNROLL
          for (int i = 0; i < RM; i += 4) load4(w + i, ws + p * MB + i);
        }
        RT_UNROLL
        for (int i = 0; i < RM; ++i) {
          RT_UNROLL
          for (int j = 0; j < RH; ++j) acc[i][j] += w[i] * x[j + p];  // input row h0 + j + p
        }
      }
    }
  }
}

// Map m + i, row h0 + j, column c0 + w. Lanes hold consecutive columns: a store instruction of a
// warp writes one or two runs of consecutive floats.
template <int RM, int RH>
__host__ __device__ __forceinline__ void store_tile(const float (&acc)[RM][RH], const Geometry& g, float* output,
                                                    const Unit& o, int m, int w) {
  if (o.c0 + w >= g.W_out) return;  // a column of the last chunk past the row's end
  const int maps = min(RM, g.M - m), rows = min(RH, g.H_out - o.h0), HW = g.H_out * g.W_out;
  float* out = output + ((o.b * g.M + m) * g.H_out + o.h0) * g.W_out + o.c0 + w;
  if (maps == RM && rows == RH) {  // the whole tile (the network's layers: always): no test a store
    RT_UNROLL
    for (int j = 0; j < RH; ++j) {
      RT_UNROLL
      for (int i = 0; i < RM; ++i) store_output(out + (i * HW + j * g.W_out), acc[i][j]);
    }
  } else {
    RT_UNROLL
    for (int j = 0; j < RH; ++j) {
      RT_UNROLL
      for (int i = 0; i < RM; ++i)
        if (i < maps && j < rows) store_output(out + (i * HW + j * g.W_out), acc[i][j]);
    }
  }
}

__device__ __forceinline__ void wait_all_copies() { asm volatile("cp.async.wait_group 0;\n" ::: "memory"); }
// Barrier `id` (1, 2, ...; 0 is __syncthreads) for the `threads` threads of one team.
__device__ __forceinline__ void team_barrier(int id, int threads) {
  asm volatile("bar.sync %0, %1;\n" ::"r"(id), "r"(threads) : "memory");
}

// Persistent blocks of TEAMS teams of T threads. Team t of block (x, y) takes maps y * MB ... and
// the lanes (x * TEAMS + t) * share .. + share - 1 (every team the same amount of work), T at a
// time: a range. The teams share the weights; each has two tile buffers and its own barrier, so a
// team waits only for its own slowest warp, and the other team's warps keep the schedulers busy
// meanwhile. One barrier a range: after it, this range's tiles have landed and the team has
// finished the previous range, whose buffer then receives the next range's copies.
template <int KC, int RM, int RH, int MAX_THREADS, int MIN_BLOCKS, int TEAMS, int FC = 0, int FMB = 0, int FCWT = 0>
__global__ void __launch_bounds__(MAX_THREADS, MIN_BLOCKS)
    conv_register_tiled_kernel(float* __restrict__ output, const float* __restrict__ input,
                               const float* __restrict__ mask, const Geometry g) {
  static_assert(RM % 4 == 0 || RM == 2, "weights are read as float4s or one float2");
  static_assert(KC > 0, "K is a template parameter: the input column lives in registers");
  constexpr int TR = RH + KC - 1;  // tile rows a strip needs
  extern __shared__ __align__(16) float smem[];
  float* w_s = smem;
  const int team = threadIdx.x / g.T, tid = threadIdx.x - team * g.T;
  const int lane = tid % 32, warp = tid / 32, warps = g.T / 32;
  const int m0 = blockIdx.y * g.MB, buffer = g.S * g.slot_floats();
  float* tiles = smem + g.tiles_offset() + team * 2 * buffer;  // buffer k at tiles + k * buffer
  const int begin = (blockIdx.x * TEAMS + team) * g.share;
  const int end = begin + max(0, min(g.share, g.lanes - begin));  // begin == end: a spare team

  stage_weights(g, w_s, mask, m0, threadIdx.x, blockDim.x);
  commit_copies();  // group 0: the weights
  if (begin < end) stage_tiles<TR>(g, tiles, input, begin, begin + min(g.T, end - begin), warp, warps, lane);
  commit_copies();     // group 1: the first range
  wait_older_copies();  // this thread's weights have landed
  __syncthreads();      // ... and everyone's (the last barrier of the whole block)
  int k = 0;            // the buffer of the range that starts at `start`
  for (int start = begin; start < end; start += g.T, k ^= 1) {
    wait_all_copies();  // this thread's copies of this range have landed
    if (TEAMS == 1) __syncthreads(); else team_barrier(1 + team, g.T);  // ... and the team's
    const int next = start + g.T;
    if (next < end)
      stage_tiles<TR>(g, tiles + (k ^ 1) * buffer, input, next, next + min(g.T, end - next), warp, warps, lane);
    commit_copies();
    if (start + tid < end) {
      const Lane me = lane_of(g, start + tid);
      float acc[RM][RH] = {};
      const float* slot = tiles + k * buffer + (me.unit - g.by_L.div(start)) * g.slot_floats();
      accumulate<KC, RM, RH, FC, FMB, FCWT>(acc, g, slot + me.col * g.XS, w_s + me.group * RM);
      store_tile<RM, RH>(acc, g, output, unit_origin(g, me.unit), m0 + me.group * RM, me.col);
    }
  }
}

inline std::size_t shared_bytes(const Geometry& g, int teams) {
  return (std::size_t(g.tiles_offset()) + std::size_t(teams) * 2 * g.S * g.slot_floats()) * sizeof(float);
}

// The launch's geometry: map groups from M, columns a unit from the team size, tile slots from the
// team size; fewer threads, then narrower chunks, while the shared memory of `teams` teams
// (`max_bytes`, the device's opt-in limit) is too small.
inline Geometry make_geometry(const labkit::ConvShape& s, int rm, int rh, int threads, int teams,
                              std::size_t max_bytes) {
  Geometry g{};
  g.M = s.M, g.C = s.C, g.H = s.H, g.W = s.W, g.K = s.K, g.H_out = s.H_out(), g.W_out = s.W_out();
  g.RH = rh, g.XS = column_stride(rh + s.K - 1), g.NS = ceil_div(g.H_out, rh);
  g.G = std::clamp(ceil_div(s.M, rm), 1, kMaxMapsPerBlock / rm), g.MB = g.G * rm;
  g.NCC = ceil_div(g.W_out, std::max(1, threads / g.G));  // a unit no wider than a block
  long long lanes = 0;
  for (g.T = threads;;) {
    g.CW = ceil_div(g.W_out, g.NCC), g.CWt = g.CW + s.K - 1, g.L = g.G * g.CW, g.CG = ceil_div(g.CWt, 32);
    const long long units = 1LL * s.B * g.NS * g.NCC;
    lanes = units * g.L;
    g.T = int(std::min<long long>(g.T, (lanes + 31) / 32 * 32));  // small problems: one small block
    g.S = int(std::min<long long>(units, ceil_div(g.T - 1, g.L) + 1));  // T lanes from anywhere in a unit
    if (shared_bytes(g, teams) <= max_bytes) break;
    if (g.T > 32) {
      g.T = std::max(32, g.T / 2 / 32 * 32);
    } else if (g.CW > 1) {
      ++g.NCC;
    } else {
      throw std::invalid_argument("11-register-tiling: " + labkit::to_string(s) + " needs " +
                                  std::to_string(shared_bytes(g, teams)) + " bytes of shared memory for one output column" +
                                  " (weights and two tiles a team); the limit is " + std::to_string(max_bytes));
    }
  }
  if (lanes + g.T > INT_MAX)
    throw std::invalid_argument("11-register-tiling: " + labkit::to_string(s) + " needs more than INT_MAX threads");
  g.units = s.B * g.NS * g.NCC, g.lanes = int(lanes), g.share = g.lanes;
  g.by_L = FastDiv(g.L), g.by_CW = FastDiv(g.CW), g.by_NCC = FastDiv(g.NCC), g.by_NS_NCC = FastDiv(g.NS * g.NCC);
  g.by_CG = FastDiv(g.CG), g.by_C_CG = FastDiv(g.C * g.CG);
  return g;
}

// Device facts, read once a process: forward() is timed, host work included.
inline int device_attribute(cudaDeviceAttr what) {
  int device = 0, value = 0;
  LABKIT_CUDA_CHECK(cudaGetDevice(&device));
  LABKIT_CUDA_CHECK(cudaDeviceGetAttribute(&value, what, device));
  return value;
}

// TEAMS teams of THREADS / TEAMS threads a block, MIN_BLOCKS blocks an SM: ptxas keeps the
// registers to what THREADS and MIN_BLOCKS leave.
template <int KC, int RM, int RH, int THREADS, int MIN_BLOCKS, int TEAMS, int FC = 0, int FMB = 0, int FCWT = 0>
void launch(float* output, const float* input, const float* mask, const labkit::ConvShape& s) {
  static_assert(THREADS % (32 * TEAMS) == 0, "a team is whole warps (bar.sync counts threads by warp)");
  static const int sms = device_attribute(cudaDevAttrMultiProcessorCount);
  static const int max_bytes = device_attribute(cudaDevAttrMaxSharedMemoryPerBlockOptin);
  static int opted_in = 48 * 1024, cached_threads = 0, cached_blocks = 0;  // blocks an SM holds
  static std::size_t cached_bytes = 0;
  const auto kernel = conv_register_tiled_kernel<KC, RM, RH, THREADS, MIN_BLOCKS, TEAMS, FC, FMB, FCWT>;
  Geometry g = make_geometry(s, RM, RH, THREADS / TEAMS, TEAMS, max_bytes);
  if constexpr (FC > 0 || FMB > 0 || FCWT > 0) {  // the compiled-in values are all accumulate() reads
    if ((FC && g.C != FC) || (FMB && g.MB != FMB) || (FCWT && g.CWt != FCWT))
      return launch<KC, RM, RH, THREADS, MIN_BLOCKS, TEAMS>(output, input, mask, s);
  }
  const std::size_t bytes = shared_bytes(g, TEAMS);
  const int threads = g.T * TEAMS;
  if (bytes > std::size_t(opted_in)) {
    LABKIT_CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, max_bytes));
    opted_in = max_bytes;
  }
  if (threads != cached_threads || bytes != cached_bytes) {
    LABKIT_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&cached_blocks, kernel, threads, bytes));
    cached_threads = threads, cached_bytes = bytes;
  }
  // As many blocks as fit (at most one a range of T lanes a team), the lanes shared out evenly: the
  // last range of each team is the partial one, not one extra range for a few teams.
  const int map_blocks = ceil_div(s.M, g.MB);
  const dim3 grid(std::min(ceil_div(g.lanes, threads), std::max(1, cached_blocks * sms / map_blocks)), map_blocks);
  g.share = ceil_div(g.lanes, int(grid.x) * TEAMS);
  kernel<<<grid, threads, bytes>>>(output, input, mask, g);
  LABKIT_CUDA_CHECK_LAUNCH();
}

// The shapes this kernel takes: the network's 7 x 7 mask with more than 4 maps (conv2's family).
// conv1 (4 maps) and any other K stay on register_tiling.cuh's kernels.
inline bool takes(const labkit::ConvShape& s) { return s.K == 7 && s.M > 4; }

// conv2: 16 maps in 8 groups of 2, 17 rows a thread (34 = 2 x 17), one block an SM of 2 teams of
// 384 threads (77-78 registers: 65536 / (768 * 78) = 1), with conv2's 4 channels, 16 maps and 40
// tile columns compiled in; launch() runs any other geometry on the run-time kernel. The caller has
// checked the shape.
inline void forward(float* device_output, const float* device_input, const float* device_mask,
                    const labkit::ConvShape& shape) {
  launch<7, 2, 17, 768, 1, 2, 4, 16, 40>(device_output, device_input, device_mask, shape);
}

}  // namespace column_tiling
