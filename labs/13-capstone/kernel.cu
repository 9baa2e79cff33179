// 13-capstone — your kernel. Read README.md in this folder first.
//
// The fastest conv1 + conv2 you can write, with anything the course taught: tiles in shared
// memory, register tiles, constant memory, fusion, half or tf32 arithmetic, tensor cores. The grade
// is the baseline's conv1 + conv2 time over yours at batch 10000 (the network's real sizes), paid
// in tiers; the output is checked with the loosest tolerance the kit has (fp16's), and the whole
// network must classify within 0.5 point of the baseline's accuracy.
//
// This file starts from the baseline (reference/baseline_conv.cu): one thread per output element,
// 16 x 16 thread blocks over an output plane, grid = (plane tiles, M, B). Replace what you like,
// the three functions' signatures excepted. conv1 (C = 1, M = 4, K = 7, 86 x 86 -> 80 x 80) and
// conv2 (C = 4, M = 16, K = 7, 40 x 40 -> 34 x 34) differ enough that the best kernel for one is
// rarely the best for the other: dispatch on the shape, and keep a general path, because the
// grader also checks K = 1, 3, 5, M up to 24, C up to 4 and odd image sizes.
// Grade it with:  meson test -C build 13-capstone --verbose
//
// Indexing, once: input is [B][C][H][W], mask [M][C][K][K], output [B][M][H_out][W_out], all
// float32 in C order, H_out = H - K + 1, W_out = W - K + 1. The macros below turn the course's
// 4-D indices into those flat offsets; out_4d(b, m, h, w) = sum over c, p, q of
// in_4d(b, c, h + p, w + q) * mask_4d(m, c, p, q).
#include "labkit/conv.h"
#include "labkit/conv_buffers.h"
#include "labkit/conv_limits.h"
#include "labkit/cuda_check.h"

namespace {

constexpr int TILE_WIDTH = 16;

__global__ void conv_forward_kernel(float* output, const float* input, const float* mask,
                                    const int M, const int C, const int H, const int W,
                                    const int K) {
  const int H_out = H - K + 1;
  const int W_out = W - K + 1;
  const int tiles_w = (W_out + TILE_WIDTH - 1) / TILE_WIDTH;

#define out_4d(i3, i2, i1, i0) output[(i3) * (M * H_out * W_out) + (i2) * (H_out * W_out) + (i1) * (W_out) + (i0)]
#define in_4d(i3, i2, i1, i0) input[(i3) * (C * H * W) + (i2) * (H * W) + (i1) * (W) + (i0)]
#define mask_4d(i3, i2, i1, i0) mask[(i3) * (C * K * K) + (i2) * (K * K) + (i1) * (K) + (i0)]

  const int b = blockIdx.z;
  const int m = blockIdx.y;
  const int h = (blockIdx.x / tiles_w) * TILE_WIDTH + threadIdx.y;
  const int w = (blockIdx.x % tiles_w) * TILE_WIDTH + threadIdx.x;
  if (h >= H_out || w >= W_out) return;  // threads past the plane's right or bottom edge

  // TODO(student): compute out_4d(b, m, h, w), then make it fast: this kernel, its launch and the
  // prolog are all yours to change (a workspace allocated in the prolog is fine: free it in the epilog).
  (void)b;
  (void)m;

#undef out_4d
#undef in_4d
#undef mask_4d
}

void check_shape(const labkit::ConvShape& s) {
  labkit::require_grid_limits(s, "13-capstone");
  labkit::require_int_indexing(s, "13-capstone");
}

}  // namespace

// Prolog and epilog are the baseline's (labkit/conv_buffers.h): device buffers and copies,
// outside the timed region.
void labkit::conv_forward_gpu_prolog(const float* host_output, const float* host_input,
                                     const float* host_mask, float** device_output,
                                     float** device_input, float** device_mask,
                                     const ConvShape& shape) {
  (void)host_output;
  check_shape(shape);
  standard_prolog(host_input, host_mask, device_output, device_input, device_mask, shape);
}

// The timed region (Op Time): everything conv_forward_gpu does counts, conversions included.
void labkit::conv_forward_gpu(float* device_output, const float* device_input,
                              const float* device_mask, const ConvShape& shape) {
  check_shape(shape);
  const int tiles_w = (shape.W_out() + TILE_WIDTH - 1) / TILE_WIDTH;
  const int tiles_h = (shape.H_out() + TILE_WIDTH - 1) / TILE_WIDTH;
  const dim3 block(TILE_WIDTH, TILE_WIDTH, 1);
  const dim3 grid(tiles_w * tiles_h, shape.M, shape.B);
  conv_forward_kernel<<<grid, block>>>(device_output, device_input, device_mask, shape.M, shape.C,
                                       shape.H, shape.W, shape.K);
  LABKIT_CUDA_CHECK_LAUNCH();
}

void labkit::conv_forward_gpu_epilog(float* host_output, float* device_output, float* device_input,
                                     float* device_mask, const ConvShape& shape) {
  standard_epilog(host_output, device_output, device_input, device_mask, shape);
}
