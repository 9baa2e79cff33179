// conv_rows_mma.cuh — the tensor-core conv of the 12-tensor-cores solution: output pixels in the
// MMA's m dimension, maps in n, the mask columns in k. tensor_cores.cuh launches it. Its kernel
// reads A from global memory; band_tiles_mma.cuh runs the same tiling on input staged in shared
// memory, and takes every shape whose tiles fit (conv1 among them): this kernel is the fallback.
//
// One MMA, mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32: D (16 x 8) += A (16 x 8) * B (8 x 8).
//   A[i][k] = in[c][y_i + p][x_i + k]   row i = one output pixel (x_i, y_i), k = mask column q
//   B[k][n] = mask[map n][c][p][k]      zero for k >= K (one k step covers q = 0..7, so K <= 8)
//   D[i][n] += sum_q A[i][q] * B[q][n]  mask row p of channel c of output (x_i, y_i, map n)
// and the conv is C * K such steps, one per (c, p). Fragments (lane = 4g + t, g = 0..7, t = 0..3):
//   a_e = A[g + 8 (e % 2)][t + 4 (e / 2)]   b0 = B[t][g]  b1 = B[t + 4][g]   d_e = D[g + 8 (e / 2)][2t + e % 2]
// A is a sliding window: lane (g, t) holds in[...][x_g + t] and in[...][x_g + t + 4] of its two
// rows g and g + 8, so its four A registers are four plain loads, no im2col anywhere. Rows g and
// g + 8 are independent: each is a "strip" below, anywhere in the batch.
//
// Strip. An A row follows one output column x of one image down R output rows y0 .. y0 + R - 1:
// the accumulators acc[j] (a D fragment each) hold output row y0 + j, and input row y0 + r feeds
// output row y0 + j through mask row p = r - j. So a warp loads each input row once, A(r) (4 values per lane,
// rounded with cvt.rna.tf32.f32), and issues the MMAs (j = r - p, p) for every valid p: per
// channel, R + K - 1 loads of 4 values feed R * K * NT MMAs. The loop order, once:
//     for each work item (16 strips): for each channel c: for each input row r (unrolled):
//         load A(r); for each mask row p (unrolled): acc[r - p] += A(r) * B(c, p)
// With r and p unrolled (K, R template parameters) every acc index is a constant: registers only.
//
// Maps. n is 8 columns: NT n tiles of 8 maps per warp (16 maps would be NT = 2, B(c, p) 2 x 2
// registers; the solution sends layers with more than 8 maps, conv2, to maps_mma.cuh instead:
// measured, this layout lost there, 1.40 ms against 0.971 ms at batch 10000 on an H100). conv1 has M = 4, which would leave columns 4..7 empty; instead, when M <= 4 and
// K <= 7, column n + 4 computes map n one pixel further right (S = 2 pixel shifts):
//     B[k][n + 4] = mask[n][c][p][k - 1]   =>   D[i][n + 4] sums into out[n][y_i][x_i + 1]
// (a K = 7 mask shifted by one column still fits the 8 k slots). A strip is then a pixel pair
// (x, x + 1) and an MMA does 32 pixels x 4 maps: every column useful, half the MMAs and stores.
//   tiling    maps/n tile (MT)  shifts (S)  n tiles (NT)  columns of a strip  k slots used
//   conv1     4                 2           1             2                   K + 1 = 8
//   4 < M <= 8  8               1           1             1                   K
//
// Work item: 16 consecutive strips (A rows g and g + 8 are strips 16 item + g and 16 item + 8 + g)
// in the order (image, band of R output rows, strip column), so the 8 lanes of a group read and
// write consecutive columns. A warp's items are item, item + all warps, ... (persistent: the grid
// is what fits on the GPU, and the block stages B once). Edges, without reading out of bounds:
//   * the last band of an image steps up to y0 = H_out - R (it overlaps the band before: rows
//     already stored are not stored again); an image with H_out < R is run with R = 1;
//   * with S = 2 and W_out odd, the last strip steps left by one column and stores only x + 1;
//   * past the batch's last strip, a lane computes that strip again and stores nothing.
// Slots k that no column uses (k >= K + S - 1, where B is 0) load column K + S - 2 instead, a
// finite value inside the row.
//
// Stores: d_e is column 2t + e % 2 of strip g or g + 8, so one store instruction writes, per map,
// the 8 strips' pixels side by side: S = 1, 4 maps x 8 consecutive floats (32 B); S = 2, 2 maps x
// 16 (64 B, sector-aligned for conv1). Every output element is written once, by one lane.
// Here, input loads go straight to global memory through the read-only path (ld.global.nc): each load
// instruction reads 11 (S = 1) or 18 (S = 2) consecutive floats for its 32 lanes, 1 or 2 L1
// lines, and a row's 4 loads and the neighbouring items share those lines in L1 and L2. No input
// tile in shared memory, so no barrier after the start; only B's fragments are staged, once per
// block, in fragment order: C * K * NT * 256 B (conv1 1,792 B).
// ptxas (sm_90): 128 registers per thread for conv1's tiling (the launch bounds' cap), no
// spills, no local memory. On conv1 at batch 10000 (H200, ncu) this kernel took 0.506 ms, 17
// instructions per MMA with the guarded stores, long-scoreboard stalls, DRAM 54% busy;
// band_tiles_mma.cuh takes 0.39 ms.
//
// Tuning (each overridable with -D, so `labkit sweep --param NAME=...` can measure it):
//   TC_CONV1_ROWS  R of the S = 2 tiling (conv1: 80 rows = 10 bands of 8; swept 4, 6, 8, 16: 8 fastest)
//   TC_CONV2_ROWS  R of the S = 1 tilings (4 < M <= 8 only: conv2 goes to maps_mma.cuh)
//   TC_WARPS       warps per block;  TC_SM_WARPS  warps per SM the registers are budgeted for
//                  (__launch_bounds__: 16 warps -> at most 128 registers per thread)
//   TC_STREAM_STORES  1: st.global.cs (evict-first) output stores
#pragma once

#ifndef TC_CONV1_ROWS
#define TC_CONV1_ROWS 8
#endif
#ifndef TC_CONV2_ROWS
#define TC_CONV2_ROWS 5
#endif
#ifndef TC_WARPS
#define TC_WARPS 4
#endif
#ifndef TC_SM_WARPS
#define TC_SM_WARPS 16
#endif
#ifndef TC_STREAM_STORES
#define TC_STREAM_STORES 0
#endif

namespace tensor_cores {

// ---- the PTX: rounding, the MMA, the loads and stores ---------------------------------------

// fp32 -> tf32, rounded to nearest (ties away); the result is an fp32 bit pattern whose low 13
// bits are zero, which is what mma's .tf32 operands expect.
__device__ __forceinline__ float to_tf32(float x) {
  unsigned r;
  asm("cvt.rna.tf32.f32 %0, %1;" : "=r"(r) : "f"(x));
  return __uint_as_float(r);
}

// d += A (16 x 8) * B (8 x 8), fragments as in the table at the top. Not volatile: it has no
// effect beyond its outputs, so the compiler may schedule the next row's loads above it.
__device__ __forceinline__ void mma_tf32(float (&d)[4], const float (&a)[4], float b0, float b1) {
  asm(
      "mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 "
      "{%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
      : "r"(__float_as_uint(a[0])), "r"(__float_as_uint(a[1])), "r"(__float_as_uint(a[2])),
        "r"(__float_as_uint(a[3])), "r"(__float_as_uint(b0)), "r"(__float_as_uint(b1)));
}

// The same rounding for a finite x in two integer instructions: add half a tf32 ulp to the bit
// pattern and clear the 13 low bits (a carry into the exponent is the correct round-up; ties go
// away from zero, as .rna does). On sm_90 cvt.rna.tf32.f32 is not one instruction: ptxas emits
// these two plus a NaN/infinity test and a select, and conv1 rounds one input value per MMA.
// (A NaN whose payload sits only in the 13 low bits would come out as infinity; test inputs and
// activations are finite. The weights, rounded once per block, keep cvt.rna.)
__device__ __forceinline__ float to_tf32_finite(float x) {
  return __uint_as_float((__float_as_uint(x) + 0x1000u) & 0xFFFFE000u);
}

__device__ __forceinline__ float load_input(const float* p) { return __ldg(p); }

__device__ __forceinline__ void store_output(float* p, float v) {
#if TC_STREAM_STORES
  __stcs(p, v);
#else
  *p = v;
#endif
}

// ---- the tiling and its index arithmetic (host and device) ----------------------------------

__host__ __device__ constexpr int imin(int a, int b) { return a < b ? a : b; }
__host__ __device__ constexpr int imax(int a, int b) { return a > b ? a : b; }

template <int K_, int R_, int NT_, int S_>
struct Tiling {
  static constexpr int K = K_;    // mask side
  static constexpr int R = R_;    // output rows per strip (accumulators acc[R][NT][4])
  static constexpr int NT = NT_;  // n tiles per warp
  static constexpr int S = S_;    // pixel shifts per map: output columns per strip
  static constexpr int MT = 8 / S;                // maps per n tile
  static constexpr int maps = NT * MT;            // maps per block (grid.y walks M in these)
  static constexpr int rows_in = R + K - 1;       // input rows a strip reads per channel
  static constexpr int slots = K + S - 1;         // k slots some column uses
  static constexpr int threads = 32 * TC_WARPS;
  static constexpr int min_blocks = TC_SM_WARPS / TC_WARPS > 0 ? TC_SM_WARPS / TC_WARPS : 1;
  static_assert(slots <= 8, "one k step of 8 covers the K + S - 1 mask columns");
  static_assert(S == 1 || S == 2, "pixel shifts: 1, or 2 when M <= 4");
  // B's fragments for every (c, p): C * K * 32 lanes * NT (b0, b1) pairs.
  static constexpr unsigned shared_bytes(int C) { return unsigned(C) * K * 32 * NT * 2 * sizeof(float); }
};

// The shape as the kernel sees it, and how it is cut into strips (every count fits int: the
// caller checks labkit::require_int_indexing).
struct Geometry {
  int M, C, H, W, H_out, W_out;
  int plane, out_plane;     // H * W, H_out * W_out
  int bands;                // R-row bands per image: ceil(H_out / R)
  int strips_per_row;       // strips across a band: ceil(W_out / S)
  int strips;               // B * bands * strips_per_row
  int items;                // ceil(strips / 16): one warp's work item each
};

template <class T>
Geometry make_geometry(int B, int M, int C, int H, int W) {
  Geometry g{M, C, H, W, H - T::K + 1, W - T::K + 1, 0, 0, 0, 0, 0, 0};
  g.plane = H * W;
  g.out_plane = g.H_out * g.W_out;
  g.bands = (g.H_out + T::R - 1) / T::R;
  g.strips_per_row = (g.W_out + T::S - 1) / T::S;
  g.strips = B * g.bands * g.strips_per_row;
  g.items = (g.strips + 15) / 16;
  return g;
}

// One A row of a work item: output column x of image b, output rows y0 .. y0 + R - 1.
struct Strip {
  int in;           // offset of input[b][0][y0][x]
  int out;          // offset of output[b][0][y0][x]
  int row_begin;    // acc rows j in [row_begin, row_end) are stored; rows below row_begin belong
  int row_end;      //   to the band above, rows from row_end on are past H_out (0: store nothing)
  int shift_begin;  // columns x + s with s >= shift_begin are stored (1: x was stepped back)
};

template <int R, int S>
__host__ __device__ inline Strip strip_at(int s, const Geometry& g) {
  const bool stored = s < g.strips;
  if (!stored) s = g.strips - 1;  // past the batch: a real strip again, never stored
  const int xs = s % g.strips_per_row, band = s / g.strips_per_row % g.bands;
  const int b = s / g.strips_per_row / g.bands;
  const int x = imin(S * xs, g.W_out - S);               // stays inside for W_out odd
  const int y0 = imin(R * band, g.H_out - R);           // the last band steps up (H_out >= R)
  return {(b * g.C * g.H + y0) * g.W + x, (b * g.M * g.H_out + y0) * g.W_out + x, R * band - y0,
          stored ? g.H_out - y0 : 0, S * xs - x};
}

// B[k][n] of n tile nt for (c, p): map map0 + nt * MT + n % MT, shifted right by n / MT columns.
template <class T>
__host__ __device__ inline int weight_index(const Geometry& g, int map0, int nt, int n, int k, int c, int p) {
  const int map = map0 + nt * T::MT + n % T::MT, q = k - n / T::MT;
  return map < g.M && q >= 0 && q < T::K ? ((map * g.C + c) * T::K + p) * T::K + q : -1;  // -1: B = 0
}

// ---- the pieces both kernels share (this one and band_tiles_mma.cuh's) --------------------

// B's fragments of the block's maps, once: (b0, b1) = (B[t][g], B[t + 4][g]) of lane 4g + t,
// stored [c][p][lane][nt]. (Unrolled so that a thread's loads of the mask overlap: conv2 needs 14
// rounds of 128.)
template <class T>
__device__ __forceinline__ void stage_b_fragments(float2* b_frags, const float* mask, const Geometry& g, int map0) {
  constexpr int K = T::K, NT = T::NT;
#pragma unroll 4
  for (int i = threadIdx.x; i < g.C * K * 32 * NT; i += blockDim.x) {
    const int nt = i % NT, l = i / NT % 32, p = i / NT / 32 % K, c = i / NT / 32 / K;
    const int w0 = weight_index<T>(g, map0, nt, l / 4, l % 4, c, p);
    const int w1 = weight_index<T>(g, map0, nt, l / 4, l % 4 + 4, c, p);
    b_frags[i] = make_float2(w0 < 0 ? 0.0f : to_tf32(mask[w0]), w1 < 0 ? 0.0f : to_tf32(mask[w1]));
  }
}

// One channel c of a work item: acc[j] += A(r) * B(c, p) for every input row r and mask row p
// with j = r - p in [0, R). load_a(r, e) returns a_e of input row r (already tf32).
template <class T, class LoadA>
__device__ __forceinline__ void accumulate_channel(float (&acc)[T::R][T::NT][4], const float2* b_frags, int c,
                                                   int lane, LoadA load_a) {
  constexpr int K = T::K, R = T::R, NT = T::NT;
  float2 b[K][NT];  // B(c, p) of each n tile
#pragma unroll
  for (int p = 0; p < K; ++p) {
    const float2* f = b_frags + ((c * K + p) * 32 + lane) * NT;
    if constexpr (NT == 2) {  // one 16-byte load
      const float4 v = *reinterpret_cast<const float4*>(f);
      b[p][0] = make_float2(v.x, v.y);
      b[p][1] = make_float2(v.z, v.w);
    } else {
      b[p][0] = f[0];
    }
  }
#pragma unroll
  for (int r = 0; r < T::rows_in; ++r) {
    float a[4];  // A(r): a_e = row r of strip e % 2, k slot t (e < 2) or t + 4
#pragma unroll
    for (int e = 0; e < 4; ++e) a[e] = load_a(r, e);
    // Input row r feeds output row j = r - p through mask row p.
#pragma unroll
    for (int p = 0; p < K; ++p) {
      if (r - p < 0 || r - p >= R) continue;
#pragma unroll
      for (int nt = 0; nt < NT; ++nt) mma_tf32(acc[r - p][nt], a, b[p][nt].x, b[p][nt].y);
    }
  }
}

// d_e: strip e / 2, column n = 2t + e % 2 = map n % MT shifted by n / MT. A strip whose R rows
// and S columns are all its own (every strip of conv1) takes the unconditional path: one pointer
// stepped a row at a time, a store and an add per value (the guarded path costs 8 instructions a
// store, and conv1 stores one value per MMA).
template <class T>
__device__ __forceinline__ void store_strips(float* output, const float (&acc)[T::R][T::NT][4], const Strip (&strip)[2],
                                             const Geometry& g, int map0, int t) {
#pragma unroll
  for (int e = 0; e < 4; ++e) {
    const Strip& s = strip[e / 2];
    const int n = 2 * t + e % 2, shift = n / T::MT;
    const bool whole = s.row_begin == 0 && s.row_end >= T::R && s.shift_begin == 0;
#pragma unroll
    for (int nt = 0; nt < T::NT; ++nt) {
      const int map = map0 + nt * T::MT + n % T::MT;
      if (map >= g.M || shift < s.shift_begin) continue;
      float* out = output + s.out + map * g.out_plane + shift;
      if (whole) {
#pragma unroll
        for (int j = 0; j < T::R; ++j, out += g.W_out) store_output(out, acc[j][nt][e]);
      } else {
#pragma unroll
        for (int j = 0; j < T::R; ++j)
          if (j >= s.row_begin && j < s.row_end) store_output(out + j * g.W_out, acc[j][nt][e]);
      }
    }
  }
}

// ---- the kernel -----------------------------------------------------------------------------

// grid = (blocks that loop over work items, map tiles of T::maps); T::threads threads.
template <class T>
__global__ void __launch_bounds__(T::threads, T::min_blocks)
    conv_rows_mma(float* __restrict__ output, const float* __restrict__ input,
                  const float* __restrict__ mask, const Geometry g) {
  extern __shared__ __align__(16) float2 b_frags[];  // [c][p][lane][nt] = (b0, b1)
  const int lane = threadIdx.x % 32, map0 = blockIdx.y * T::maps;
  stage_b_fragments<T>(b_frags, mask, g, map0);
  __syncthreads();  // the only barrier: from here on each warp works alone

  // The lane's k slots t and t + 4 as column offsets (slots no column uses read a real column).
  const int t = lane % 4, group = lane / 4;
  const int slot[2] = {imin(t, T::slots - 1), imin(t + 4, T::slots - 1)};
  // Warps numbered across the blocks first: when the items do not divide evenly, the warps with
  // one item more are one per block, on different SMs, rather than all the warps of a few blocks.
  const int warps = gridDim.x * TC_WARPS;
#pragma unroll 1
  for (int item = threadIdx.x / 32 * gridDim.x + blockIdx.x; item < g.items; item += warps) {
    const Strip strip[2] = {strip_at<T::R, T::S>(16 * item + group, g),       // A row g
                            strip_at<T::R, T::S>(16 * item + 8 + group, g)};  // A row g + 8
    float acc[T::R][T::NT][4] = {};
#pragma unroll 1
    for (int c = 0; c < g.C; ++c) {
      const float* in[2] = {input + strip[0].in + c * g.plane, input + strip[1].in + c * g.plane};
      // The row offsets r * W below do not depend on c: the compiler would hoist all of them (4
      // addresses per input row) out of this loop into registers, and spill. An opaque copy of W
      // keeps them here.
      int W = g.W;
      asm volatile("" : "+r"(W));
      // a_e = in[strip e % 2][row r][x + slot e / 2], rounded to tf32 once here.
      accumulate_channel<T>(acc, b_frags, c, lane, [&](int r, int e) {
        return to_tf32_finite(load_input(in[e % 2] + r * W + slot[e / 2]));
      });
    }
    store_strips<T>(output, acc, strip, g, map0, t);
  }
}

}  // namespace tensor_cores
