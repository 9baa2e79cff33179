// tensor_cores.cuh — the 12-tensor-cores instructor solution's conv: its kernel.cu wraps it in
// the lab API, and 13-capstone's solution uses it too.
//
// The conv as an implicit GEMM on tensor cores, mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32
// (one warp-wide instruction: a 16 x 8 tile of A times an 8 x 8 tile of B, added into fp32
// accumulators), with the operands rounded to TF32 by cvt.rna.tf32.f32 (fp32's exponent, 10
// mantissa bits: products of two TF32 values are exact in fp32, and the sums stay fp32).
//
// Which operand holds what is the solution's main choice, and it depends on the layer:
//   * many maps (M > 8: conv2's 16): maps in the MMA's m dimension (A = weights, 16 maps fill its
//     16 rows), 8 output pixels in n, k = 8 (channel, mask column) pairs: maps_mma.cuh, the
//     skeleton's layout done well (row reuse, cp.async double buffering, persistent blocks);
//     on Hopper (sm_90a code, lab.json "arch_specific"), conv2's own shape goes to
//     warpgroup_mma.cuh instead: wgmma, 64 pixels in m and the 16 maps in n, A from registers
//     and B from shared memory (conv2 at batch 10000 on an H100: 0.600 ms against 0.952 ms);
//   * few maps (M <= 8: conv1's 4): pixels in m, maps in n (conv_rows_mma.cuh, whose header has
//     the whole design):
//       - m = 16 output pixels, each the top of a strip of R output rows of one column;
//       - n = 4 maps x 2 pixel shifts for M <= 4 (no column of the MMA is empty), else 8 maps;
//       - k = the 8 mask columns q of one (channel c, mask row p): A is a sliding window of the
//         input (each lane's 4 A registers are 4 plain loads) and B a fixed set of weights,
//         staged once per block in shared memory in fragment order;
//       - input row r of a strip feeds accumulator row r - p through mask row p, so each input
//         row is loaded once per channel and used by up to K MMAs.
// With maps in m, conv1's 4 maps fill a quarter of A's rows: 78% of its MMA work multiplied
// zeros. With pixels in m, conv2's 34-column rows waste less than maps in m does, but its strips
// read every input row straight from global memory and stall on it.
// Measured at batch 10000 on an NVIDIA H100 80GB HBM3 (labkit grade --solutions 13-capstone,
// which runs this dispatch): conv1 0.597 ms (maps in m: 1.605 ms), conv2 0.971 ms (pixels in m:
// 1.40 ms), with the first maps_mma and conv1 on conv_rows_mma's global-memory kernel. On an
// NVIDIA H200, the current kernels (labkit report --compare --batches 10000): conv1 0.391 ms
// (band_tiles_mma; conv_rows_mma's kernel 0.506 ms), conv2 0.682 ms (the first maps_mma: 0.958 ms).
//
//   shapes                    kernel, tiling                        warp's work item
//   conv2's (16, 4, 40, 7)    warpgroup_mma (wgmma, sm_90a GPUs)     16 row pairs x 16 maps (a
//                                                                   warpgroup: 64 pixels x 16 maps)
//   M > 8 (conv2 elsewhere)   maps_mma, <K = 7, J = 17, WX = 5>      16 maps x 8 columns x 17 rows
//   M <= 4, K <= 7 (conv1)    Tiling <K, TC_CONV1_ROWS = 8, 1, 2>   16 pixel pairs x 8 rows
//   other M <= 8              Tiling <K, TC_CONV2_ROWS = 5, 1, 1>   16 pixels x 5 rows, 8 maps
//   any, with H_out < R       the same with R = 1 (small test shapes)
// A Tiling runs on band_tiles_mma (input rows staged in shared memory, 2 bands of R rows a block's
// work item) when its two tiles fit in 48 KiB, else on conv_rows_mma (A read from global memory).
// conv_rows_mma: 128 registers per thread (ptxas, sm_90; ncu at batch 1000 on an H100: 22.9%
// achieved occupancy, tensor pipe 15.9% active on conv1; on an H200: 18.3%), no spills; shared
// memory per block C * K * 256 B.
//
// Blocks of TC_WARPS warps; the grid is what fits on the GPU at once (blocks per SM from the
// occupancy API x SMs), split over the map tiles in grid.y; each warp walks the items
// warp, warp + all warps, ... alone (no barrier after the block has staged B).
#pragma once

#include <algorithm>
#include <cstddef>
#include <stdexcept>
#include <string>

#include "band_tiles_mma.cuh"
#include "conv_rows_mma.cuh"
#include "maps_mma.cuh"
#include "warpgroup_mma.cuh"
#include "labkit/conv.h"
#include "labkit/conv_buffers.h"
#include "labkit/conv_limits.h"
#include "labkit/cuda_check.h"

#ifndef TC_CONV2_KERNEL
#define TC_CONV2_KERNEL 2  // conv2's shape: 2 warpgroup_mma.cuh where the GPU runs sm_90a code, 1 maps_mma.cuh
#endif

namespace tensor_cores {

constexpr unsigned kMaxSharedBytes = 48 * 1024;  // what a block may use without an opt-in

// Blocks of `kernel` that fit on the GPU at once (device, kernel and `bytes` fixed per call site).
template <class Kernel>
int resident_blocks(Kernel kernel, int threads, unsigned bytes) {
  int device = 0, sms = 0, per_sm = 0;
  LABKIT_CUDA_CHECK(cudaGetDevice(&device));
  LABKIT_CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
  LABKIT_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, threads, bytes));
  return std::max(1, per_sm) * sms;
}

inline int compute_capability_major() {
  static int major = -1;  // per process: the harness runs on one GPU
  if (major < 0) {
    int device = 0;
    LABKIT_CUDA_CHECK(cudaGetDevice(&device));
    LABKIT_CUDA_CHECK(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device));
  }
  return major;
}

// The input staged in shared memory (band_tiles_mma.cuh) when two tiles fit, else read from
// global memory (conv_rows_mma.cuh).
template <class T>
void launch(float* output, const float* input, const float* mask, const labkit::ConvShape& s) {
  const int map_tiles = (s.M + T::maps - 1) / T::maps;
  BandGeometry bg = make_band_geometry<T>(s.B, s.M, s.C, s.H, s.W);
  enable_bulk_stores<T>(bg, output, compute_capability_major());
  std::size_t tiled_bytes = band_shared_bytes<T>(bg);
  if (tiled_bytes > kMaxSharedBytes && bg.stage_floats > 0) {  // no room for the stage: stores from registers
    bg.stage_floats = 0;
    tiled_bytes = band_shared_bytes<T>(bg);
  }
  if (tiled_bytes <= kMaxSharedBytes) {
    static std::size_t cached_bytes = 0;
    static int slots = 0;
    if (slots == 0 || tiled_bytes != cached_bytes) {
      slots = resident_blocks(conv_band_tiles<T>, 32 * TC_TILE_WARPS, unsigned(tiled_bytes));
      cached_bytes = tiled_bytes;
    }
    const int blocks = std::min(bg.items, std::max(1, slots / map_tiles));
    conv_band_tiles<T><<<dim3(unsigned(blocks), unsigned(map_tiles), 1), 32 * TC_TILE_WARPS, unsigned(tiled_bytes)>>>(
        output, input, mask, bg);
    LABKIT_CUDA_CHECK_LAUNCH();
    return;
  }
  const unsigned bytes = T::shared_bytes(s.C);
  if (bytes > kMaxSharedBytes) {
    throw std::invalid_argument("12-tensor-cores: " + labkit::to_string(s) + " needs " + std::to_string(bytes) +
                                " bytes of shared memory per block (B's fragments of " + std::to_string(s.C) +
                                " channels); the limit is " + std::to_string(kMaxSharedBytes));
  }
  static unsigned cached_bytes = 0;
  static int slots = 0;
  if (slots == 0 || bytes != cached_bytes) {
    slots = resident_blocks(conv_rows_mma<T>, T::threads, bytes);
    cached_bytes = bytes;
  }
  const Geometry g = bg.g;
  const int blocks = std::min((g.items + TC_WARPS - 1) / TC_WARPS, std::max(1, slots / map_tiles));
  conv_rows_mma<T><<<dim3(unsigned(blocks), unsigned(map_tiles), 1), T::threads, bytes>>>(output, input, mask, g);
  LABKIT_CUDA_CHECK_LAUNCH();
}

// A band of R rows must fit in the image (its R + K - 1 input rows are read unchecked): images
// shorter than that (small test shapes only) run with strips of one row.
template <int K, int R, int NT, int S>
void launch_rows(float* o, const float* in, const float* w, const labkit::ConvShape& s) {
  if (s.H_out() >= R) launch<Tiling<K, R, NT, S>>(o, in, w, s);
  else launch<Tiling<K, 1, NT, S>>(o, in, w, s);
}

// The tiling for a K: pixel pairs when M <= 4 (and a mask column to spare), else n tiles of 8.
template <int K>
void launch_k(float* o, const float* in, const float* w, const labkit::ConvShape& s) {
  if constexpr (K <= 7) {
    if (s.M <= 4 && s.W_out() >= 2) return launch_rows<K, TC_CONV1_ROWS, 1, 2>(o, in, w, s);
  }
  launch_rows<K, TC_CONV2_ROWS, 1, 1>(o, in, w, s);  // M <= 8: forward() sends more maps to maps_mma
}

inline void check_shape(const labkit::ConvShape& s) {
  if (TC_CONV2_KERNEL == 2 && warpgroup_mma::is_conv2(s)) warpgroup_mma::available();  // asked here, in the prolog
  if (s.M > 8) return maps_mma::check_shape(s);
  labkit::require_grid_limits(s, "12-tensor-cores");  // map tiles in grid.y
  labkit::require_int_indexing(s, "12-tensor-cores");
  if (s.K > 8) {
    throw std::invalid_argument("12-tensor-cores: masks up to 8 x 8 only (one MMA k step holds the 8 columns of a "
                                "mask row), got " + labkit::to_string(s));
  }
  if (1LL * s.C * s.K * 2 * 256 > kMaxSharedBytes) {  // B's fragments with NT = 2
    throw std::invalid_argument("12-tensor-cores: C * K must be <= 96 (B's fragments in 48 KiB of shared "
                                "memory), got " + labkit::to_string(s));
  }
}

// The forward pass: the kernel that fits `shape`, launched on the default stream.
inline void forward(float* device_output, const float* device_input, const float* device_mask,
                    const labkit::ConvShape& shape) {
  check_shape(shape);
  // Many maps (conv2): 16 of them fill A's 16 rows, so maps go in m (maps_mma.cuh). Few maps
  // (conv1): pixels in m, maps in n (conv_rows_mma.cuh's tiling; launch() runs it on input staged in
  // shared memory, band_tiles_mma.cuh, when the tiles fit). Measured at batch 10000 on an H100,
  // each layout on the other's layer lost: conv1 1.605 ms with maps in m against 0.60 ms,
  // conv2 1.40 ms with pixels in m against 0.971 ms.
  // conv2's own shape on Hopper: the warpgroup MMA (warpgroup_mma.cuh), 38% faster than maps_mma.
  if (TC_CONV2_KERNEL == 2 && warpgroup_mma::is_conv2(shape) && warpgroup_mma::available())
    return warpgroup_mma::launch(device_output, device_input, device_mask, shape);
  if (shape.M > 8) return maps_mma::forward(device_output, device_input, device_mask, shape);
  float* o = device_output;
  const float* in = device_input;
  const float* w = device_mask;
  switch (shape.K) {
    case 1: launch_k<1>(o, in, w, shape); break;
    case 2: launch_k<2>(o, in, w, shape); break;
    case 3: launch_k<3>(o, in, w, shape); break;
    case 4: launch_k<4>(o, in, w, shape); break;
    case 5: launch_k<5>(o, in, w, shape); break;
    case 6: launch_k<6>(o, in, w, shape); break;
    case 7: launch_k<7>(o, in, w, shape); break;
    default: launch_k<8>(o, in, w, shape); break;
  }
}

}  // namespace tensor_cores
