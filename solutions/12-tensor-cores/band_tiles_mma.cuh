// band_tiles_mma.cuh — conv_rows_mma.cuh's tiling (pixels in the MMA's m dimension, maps in n, a
// strip walks R output rows) with the input staged in shared memory: the kernel conv1 runs.
//
// Why a second kernel. conv_rows_mma reads A straight from global memory: per input row a lane
// issues 4 loads, 4 addresses and 4 roundings for about 4 MMAs, and every warp waits for its
// own loads (ncu on an H200, conv1 at batch 10000: 17 instructions per MMA, long-scoreboard the
// top stall, DRAM 54% busy, 0.506 ms against the 0.31 ms memory floor). Here a block copies
// whole input rows into shared memory with 16-byte cp.async (one instruction per 4 floats, no
// register in between), rounds each element to tf32 once, and its warps read A from the tile;
// the next item's copy is in flight while the warps multiply the current one.
//
// Work item = (image, group of BR bands of R output rows), every column. Its input is the rows
// y_lo .. y_hi - 1 of each channel, full width: one contiguous run of global memory a channel,
// copied as is: tile[c][row - y_lo][x]. The item's strips (BR * strips_per_row of them, in the
// order band, strip column) are cut into warp items of 16, as conv_rows_mma's; warp w takes warp
// items w, w + warps, ... BR is chosen so that the warp items divide evenly: conv1's 40 strips a
// band, 2 bands an item = 80 strips = 5 warp items for the block's 5 warps.
//
//   layer   R   BR  warps  tile (C x rows x W)       shared memory a block
//   conv1   8   2   5      1 x 22 x 86 floats, 7.4 KiB   2 tiles + B's fragments 1.75 KiB = 16.5 KiB
//
// A shape whose two tiles do not fit in 48 KiB runs conv_rows_mma instead (tensor_cores.cuh).
//
// Measured (ncu, conv1 at batch 10000, NVIDIA H200): 0.386 - 0.395 ms, DRAM 69-71% busy (the
// memory floor is 0.31 ms), 96 registers, 12 instructions per MMA; conv_rows_mma took 0.506 ms.
// The first version took 0.425 ms: its guarded stores cost 8 instructions each, one per MMA, and
// the unconditional path of store_strips() took 52M of its 220M instructions away. Tried and
// not kept: 3 tile buffers (0.386 ms, no change), 2 warp items a warp and item (0.413 ms), 3 or 5
// blocks an SM (0.439, 0.425 ms), st.global.cs stores (0.396 ms).
// Tuning (overridable with -D, for `labkit sweep --param`):
//   TC_TILE_WARPS        warps a block                                           (5)
//   TC_TILE_WARP_ITEMS   warp items a warp takes per work item (BR grows with it) (1)
//   TC_TILE_BLOCKS       blocks an SM that __launch_bounds__ budgets registers for (4)
//   TC_TILE_STORES       2: an item's output goes out through shared memory in bulk copies, 1: stored
//                        from the registers (2)
//
// Bulk stores (sm_90 and later, shapes whose items are whole: H_out a multiple of R, W_out of S).
// conv1 writes 1.02 GB and reads 0.30 GB, so its time is the output's. Stored from the MMA's
// fragments, each store instruction writes 4-byte values of 2 maps x 16 columns, one value an
// MMA. Staged instead in shared memory as the item's output (map, row, column), each map's part
// of an item is one contiguous run of global memory (16 whole rows: 5 KiB for conv1), and one
// thread hands each run to the copy engine (cp.async.bulk, the Hopper TMA's plain copy), which
// writes whole lines while the warps go on with the next item. A map's run in shared memory is
// padded so that the two maps one store instruction writes fall in different banks. Measured on an
// H100 at batch 10000 (`labkit sweep ... --param TC_TILE_STORES=1,2`): conv1 0.5351 -> 0.5024 ms,
// where a kernel that only streams conv1's bytes takes 0.5015 ms (tools/dram-mix.cu).
#pragma once

#include <cstddef>
#include <cstdint>

#include "conv_rows_mma.cuh"

#ifndef TC_TILE_WARPS
#define TC_TILE_WARPS 5
#endif
#ifndef TC_TILE_WARP_ITEMS
#define TC_TILE_WARP_ITEMS 1
#endif
#ifndef TC_TILE_BLOCKS
#define TC_TILE_BLOCKS 4
#endif
#ifndef TC_TILE_STORES
#define TC_TILE_STORES 2
#endif

namespace tensor_cores {

// The strips (conv_rows_mma's Geometry) grouped into work items of BR bands.
struct BandGeometry {
  Geometry g;
  int band_group;      // BR: bands a work item
  int groups;          // work items an image: ceil(bands / BR)
  int items;           // B * groups
  int channel_floats;  // a channel's share of a tile: (BR * R + K - 1) * W, rounded up to 4
  int stage_floats;    // bulk stores: a map's share of the output stage (0: stores from registers)
};

template <class T>
BandGeometry make_band_geometry(int B, int M, int C, int H, int W) {
  BandGeometry bg{};
  bg.g = make_geometry<T>(B, M, C, H, W);
  const int strips_wanted = 16 * TC_TILE_WARPS * TC_TILE_WARP_ITEMS;
  bg.band_group = imin(bg.g.bands, imax(1, (strips_wanted + bg.g.strips_per_row / 2) / bg.g.strips_per_row));
  bg.groups = (bg.g.bands + bg.band_group - 1) / bg.band_group;
  bg.items = B * bg.groups;
  bg.channel_floats = ((bg.band_group * T::R + T::K - 1) * W + 3) / 4 * 4;
  bg.stage_floats = 0;
  return bg;
}

// Bulk stores where they apply (see the top): every item whole, every map's run of an item 16-byte
// aligned and a multiple of 16 bytes, the GPU sm_90 or later. The stage of a map holds BR * R
// rows, padded to 8 (mod 16) floats so that maps n and n + 2 sit 16 banks apart.
template <class T>
void enable_bulk_stores(BandGeometry& bg, const float* output, int compute_capability_major) {
  const Geometry& g = bg.g;
  const bool whole = g.H_out % T::R == 0 && g.W_out % T::S == 0;
  const bool aligned = (T::R * g.W_out) % 4 == 0 && g.out_plane % 4 == 0 &&
                       reinterpret_cast<std::uintptr_t>(output) % 16 == 0;
  if (TC_TILE_STORES != 2 || compute_capability_major < 9 || !whole || !aligned) return;
  const int floats = bg.band_group * T::R * g.W_out;
  bg.stage_floats = floats + (8 - floats % 16 + 16) % 16;
}

template <class T>
inline std::size_t band_shared_bytes(const BandGeometry& bg) {
  return T::shared_bytes(bg.g.C) + 2 * std::size_t(bg.g.C) * std::size_t(bg.channel_floats) * sizeof(float) +
         std::size_t(T::maps) * std::size_t(bg.stage_floats) * sizeof(float);
}

// Work item -> image, bands k0 .. k1 - 1, and the input rows y_lo .. y_hi - 1 they read.
struct BandItem {
  int b, k0, k1, y_lo, y_hi;
};
template <class T>
__host__ __device__ inline int band_top(const Geometry& g, int k) { return imin(T::R * k, g.H_out - T::R); }
template <class T>
__host__ __device__ inline BandItem band_item(const BandGeometry& bg, int item) {
  const int b = item / bg.groups, k0 = item % bg.groups * bg.band_group;
  const int k1 = imin(k0 + bg.band_group, bg.g.bands);
  return {b, k0, k1, band_top<T>(bg.g, k0), band_top<T>(bg.g, k1 - 1) + T::R + T::K - 1};
}

// 16 bytes global -> shared without a register in between.
__device__ __forceinline__ void copy16_async(float* dst, const float* src) {
  const unsigned d = static_cast<unsigned>(__cvta_generic_to_shared(dst));
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" ::"r"(d), "l"(src));
}
__device__ __forceinline__ void copy4_async(float* dst, const float* src) {
  const unsigned d = static_cast<unsigned>(__cvta_generic_to_shared(dst));
  asm volatile("cp.async.ca.shared.global [%0], [%1], 4;" ::"r"(d), "l"(src));
}

// Copies (round == false) or rounds to tf32 in place (round == true, after this thread's copies
// have landed) this thread's share of a work item's tile: per channel, the run of (y_hi - y_lo)
// * W floats from input[b][c][y_lo][0]. 16-byte pieces when the run and its start allow (the
// network's conv1: always), else 4-byte ones. The same loop both times, so that a thread rounds
// exactly the elements it copied: they are visible to it after cp.async.wait_group, and the
// barrier that follows publishes them rounded.
template <bool round>
__device__ __forceinline__ void tile_pass(float* tile, const float* input, const Geometry& g, int channel_floats,
                                          const BandItem& it) {
  const int n = (it.y_hi - it.y_lo) * g.W;
  for (int c = 0; c < g.C; ++c) {
    const float* src = input + ((it.b * g.C + c) * g.H + it.y_lo) * g.W;
    float* dst = tile + c * channel_floats;
    if (n % 4 == 0 && reinterpret_cast<std::uintptr_t>(src) % 16 == 0) {
      for (int i = 4 * threadIdx.x; i < n; i += 4 * blockDim.x) {
        if constexpr (round) {
          float4 v = *reinterpret_cast<float4*>(dst + i);
          v = make_float4(to_tf32_finite(v.x), to_tf32_finite(v.y), to_tf32_finite(v.z), to_tf32_finite(v.w));
          *reinterpret_cast<float4*>(dst + i) = v;
        } else {
          copy16_async(dst + i, src + i);
        }
      }
    } else {
      for (int i = threadIdx.x; i < n; i += blockDim.x) {
        if constexpr (round) dst[i] = to_tf32_finite(dst[i]);
        else copy4_async(dst + i, src + i);
      }
    }
  }
}

// store_strips() into the item's output stage: value (map, row j of the strip, column x + shift)
// at stage[map][row0 + j][x + shift], row0 the strip's first row within the item.
template <class T>
__device__ __forceinline__ void stage_strips(float* stage, const float (&acc)[T::R][T::NT][4], const int (&at)[2],
                                             const bool (&stored)[2], const BandGeometry& bg, int map0, int t) {
#pragma unroll
  for (int e = 0; e < 4; ++e) {
    if (!stored[e / 2]) continue;
    const int n = 2 * t + e % 2;
#pragma unroll
    for (int nt = 0; nt < T::NT; ++nt) {
      const int map = nt * T::MT + n % T::MT;
      if (map0 + map >= bg.g.M) continue;
      float* out = stage + map * bg.stage_floats + at[e / 2] + n / T::MT;
#pragma unroll
      for (int j = 0; j < T::R; ++j) out[j * bg.g.W_out] = acc[j][nt][e];
    }
  }
}

// One thread: each map's run of the item's output, shared -> global, as one bulk copy. The
// warps' writes to the stage were ordered before it by fence.proxy.async and a barrier.
template <class T>
__device__ __forceinline__ void bulk_store_item(float* output, const float* stage, const BandGeometry& bg,
                                                const BandItem& it, int map0) {
#if __CUDA_ARCH__ >= 900
  const Geometry& g = bg.g;
  const unsigned bytes = unsigned((it.k1 - it.k0) * T::R * g.W_out) * sizeof(float);
  for (int m = 0; m < T::maps && map0 + m < g.M; ++m) {
    float* dst = output + (std::size_t(it.b) * g.M + map0 + m) * g.out_plane + std::size_t(it.y_lo) * g.W_out;
    const unsigned src = static_cast<unsigned>(__cvta_generic_to_shared(stage + m * bg.stage_floats));
    asm volatile("cp.async.bulk.global.shared::cta.bulk_group [%0], [%1], %2;" ::"l"(dst), "r"(src), "r"(bytes)
                 : "memory");
  }
  asm volatile("cp.async.bulk.commit_group;" ::: "memory");
#endif
}

// grid = (blocks that loop over work items, map tiles of T::maps); 32 * TC_TILE_WARPS threads.
template <class T>
__global__ void __launch_bounds__(32 * TC_TILE_WARPS, TC_TILE_BLOCKS)
    conv_band_tiles(float* __restrict__ output, const float* __restrict__ input, const float* __restrict__ mask,
                    const BandGeometry bg) {
  const Geometry& g = bg.g;
  extern __shared__ __align__(16) float smem[];
  float2* b_frags = reinterpret_cast<float2*>(smem);      // [c][p][lane][nt] = (b0, b1)
  float* tiles = smem + T::shared_bytes(g.C) / sizeof(float);  // 2 x [C][channel_floats]
  const int tile_floats = g.C * bg.channel_floats;
  float* stage = tiles + 2 * tile_floats;  // bulk stores: [T::maps][stage_floats]
#if __CUDA_ARCH__ >= 900
  const bool bulk = bg.stage_floats > 0;
#else
  // Code for an older GPU has no bulk copies: it stores from the registers even where the host
  // reserved a stage (a cc 9.0 GPU running compute_80 PTX, in a build without sm_90).
  constexpr bool bulk = false;
#endif
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32, map0 = blockIdx.y * T::maps;
  const int t = lane % 4, group = lane / 4;
  const int slot[2] = {imin(t, T::slots - 1), imin(t + 4, T::slots - 1)};

  int item = blockIdx.x;
  if (item < bg.items) tile_pass<false>(tiles, input, g, bg.channel_floats, band_item<T>(bg, item));
  asm volatile("cp.async.commit_group;");
  stage_b_fragments<T>(b_frags, mask, g, map0);

#pragma unroll 1
  for (int buffer = 0; item < bg.items; item += gridDim.x, buffer ^= 1) {
    // The next item's copy goes into the other buffer; wait for this item's only.
    const int next = item + gridDim.x;
    if (next < bg.items)
      tile_pass<false>(tiles + (buffer ^ 1) * tile_floats, input, g, bg.channel_floats, band_item<T>(bg, next));
    asm volatile("cp.async.commit_group;");
    asm volatile("cp.async.wait_group 1;" ::: "memory");
    const BandItem it = band_item<T>(bg, item);
    float* tile = tiles + buffer * tile_floats;
    tile_pass<true>(tile, input, g, bg.channel_floats, it);
#if __CUDA_ARCH__ >= 900
    // The last item's bulk copies have read the stage before anyone writes it again.
    if (bulk && threadIdx.x == 0) asm volatile("cp.async.bulk.wait_group.read 0;" ::: "memory");
#endif
    __syncthreads();  // everyone's part of this tile (and B's fragments) is there, rounded

    const int strips = (it.k1 - it.k0) * g.strips_per_row;
#pragma unroll 1
    for (int w = warp; w < (strips + 15) / 16; w += TC_TILE_WARPS) {
      // A rows g and g + 8: strips 16 w + g and 16 w + 8 + g of the item (past its last strip: the
      // last one again, stored by nobody).
      Strip strip[2];
      int at[2];        // offset of (row 0, column x) of the strip in a channel of the tile
      int staged[2];    // ... and in a map of the output stage
      bool stored[2];
#pragma unroll
      for (int h = 0; h < 2; ++h) {
        int s = 16 * w + 8 * h + group;
        stored[h] = s < strips;
        if (!stored[h]) s = strips - 1;
        const int band = it.k0 + s / g.strips_per_row, xs = s % g.strips_per_row;
        const int x = imin(T::S * xs, g.W_out - T::S), y0 = band_top<T>(g, band);
        strip[h] = {0, ((it.b * g.M) * g.H_out + y0) * g.W_out + x, T::R * band - y0,
                    stored[h] ? g.H_out - y0 : 0, T::S * xs - x};
        at[h] = (y0 - it.y_lo) * g.W + x;
        staged[h] = (y0 - it.y_lo) * g.W_out + x;
      }
      float acc[T::R][T::NT][4] = {};
#pragma unroll 1
      for (int c = 0; c < g.C; ++c) {
        const float* in[2] = {tile + c * bg.channel_floats + at[0], tile + c * bg.channel_floats + at[1]};
        accumulate_channel<T>(acc, b_frags, c, lane,
                              [&](int r, int e) { return in[e % 2][r * g.W + slot[e / 2]]; });
      }
      if (bulk) stage_strips<T>(stage, acc, staged, stored, bg, map0, t);
      else store_strips<T>(output, acc, strip, g, map0, t);
    }
#if __CUDA_ARCH__ >= 900
    if (bulk) asm volatile("fence.proxy.async.shared::cta;" ::: "memory");  // the stage, to the copy engine
#endif
    __syncthreads();  // done reading this buffer before the next iteration's copy refills it
    if (bulk && threadIdx.x == 0) bulk_store_item<T>(output, stage, bg, it, map0);
  }
  asm volatile("cp.async.wait_all;" ::: "memory");
#if __CUDA_ARCH__ >= 900
  if (bulk && threadIdx.x == 0) asm volatile("cp.async.bulk.wait_group 0;" ::: "memory");
#endif
}

}  // namespace tensor_cores
