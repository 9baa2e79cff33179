// 03-tiling — your kernel. Read README.md in this folder first.
//
// The baseline reads every input value from global memory K*K*M times (once per output map and
// per window position that covers it). In this lab each thread block first copies the input
// patch its outputs need into shared memory, then computes from there:
//   * a block computes a TILE x TILE patch of the output plane of image b (one thread per output
//     pixel) — for every output map m, or for a group of maps, as you choose;
//   * its input patch is TW x TW per channel with TW = TILE + K - 1 (the halo: the K - 1 extra rows
//     and columns the windows of the patch's last outputs reach into), for all C channels;
//   * the patch size depends on K and C, known only at run time, so the shared memory is dynamic:
//     `extern __shared__ float smem[];` in the kernel, and its size in bytes as the third
//     <<<grid, block, bytes>>> argument of the launch;
//   * load, then __syncthreads(), then compute: no thread may read the tile before all of it is in.
// Grade it with:  meson test -C build 03-tiling --verbose
//
// Indexing, once: input is [B][C][H][W], mask [M][C][K][K], output [B][M][H_out][W_out], all
// float32 in C order, H_out = H - K + 1, W_out = W - K + 1. out_4d(b, m, h, w) = sum over c, p, q
// of in_4d(b, c, h + p, w + q) * mask_4d(m, c, p, q). Patch cell (c, r, col) holds
// in_4d(b, c, h0 + r, w0 + col), where (h0, w0) is the block's first output pixel.
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

__global__ void conv_tiled_kernel(float* output, const float* input, const float* mask,
                                  const int M, const int C, const int H, const int W, const int K,
                                  const int tiles_w) {
  extern __shared__ float smem[];  // sized by the launch's third <<< >>> argument
  const int TW = TILE + K - 1;     // input patch side, halo included
  const int H_out = H - K + 1;
  const int W_out = W - K + 1;

#define out_4d(i3, i2, i1, i0) output[(i3) * (M * H_out * W_out) + (i2) * (H_out * W_out) + (i1) * (W_out) + (i0)]
#define in_4d(i3, i2, i1, i0) input[(i3) * (C * H * W) + (i2) * (H * W) + (i1) * (W) + (i0)]
#define mask_4d(i3, i2, i1, i0) mask[(i3) * (C * K * K) + (i2) * (K * K) + (i1) * (K) + (i0)]

  const int b = blockIdx.z;
  const int h0 = (blockIdx.x / tiles_w) * TILE;  // the block's first output row
  const int w0 = (blockIdx.x % tiles_w) * TILE;  // and column
  const int h = h0 + threadIdx.y;
  const int w = w0 + threadIdx.x;

  // TODO(student): copy the C x TW x TW input patch (halo included; 0 past the input's edge) into smem, all threads sharing the work.

  // TODO(student): __syncthreads(), then for each output map: sum over c, p, q from smem and write out_4d(b, m, h, w) if h < H_out and w < W_out.
  (void)smem;
  (void)TW;
  (void)H_out;
  (void)W_out;
  (void)b;
  (void)h;
  (void)w;

#undef out_4d
#undef in_4d
#undef mask_4d
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

// The timed region (Op Time).
void labkit::conv_forward_gpu(float* device_output, const float* device_input,
                              const float* device_mask, const ConvShape& shape) {
  check_shape(shape);
  const int tiles_w = (shape.W_out() + TILE - 1) / TILE;
  const int tiles_h = (shape.H_out() + TILE - 1) / TILE;
  const dim3 block(TILE, TILE, 1);
  const dim3 grid(tiles_w * tiles_h, 1, shape.B);  // grid.y: 1 if a block does every map
  // TODO(student): the patch's size in bytes (C * TW * TW floats, plus anything else you stage), refused with a clear message above 48 KiB.
  const std::size_t shared_bytes = 0;
  conv_tiled_kernel<<<grid, block, shared_bytes>>>(device_output, device_input, device_mask, shape.M,
                                                   shape.C, shape.H, shape.W, shape.K, tiles_w);
  LABKIT_CUDA_CHECK_LAUNCH();
}

void labkit::conv_forward_gpu_epilog(float* host_output, float* device_output, float* device_input,
                                     float* device_mask, const ConvShape& shape) {
  standard_epilog(host_output, device_output, device_input, device_mask, shape);
}
