// 07-atomics — your kernel. Read README.md in this folder first.
//
// In the baseline one thread sums all C * K * K products of its output. Here the sum over the
// input channels is split across threads and combined with atomicAdd:
//   * a block computes a TILE_W x TILE_H patch of one output plane (image b, map m) with up to
//     kMaxLanes "channel lanes" per pixel: blockDim = (TILE_W, TILE_H, lanes), lane = threadIdx.z;
//   * lane z sums the channels c = z, z + lanes, z + 2*lanes, ... (all p, q) into a register;
//   * the lanes add their partial sums into one accumulator per pixel in shared memory (sum_s)
//     with atomicAdd: an atomic add only adds, so the accumulator must be 0 before the first add,
//     and every add must be done before anyone reads the sum (a __syncthreads() each time);
//   * one lane per pixel then writes the sum: one plain store per output element.
// (atomicAdd straight into the output also works, but the output must be zeroed first: the grader
// fills it with NaN before every call. README.md compares the two.) K is a template parameter (KC),
// so the p and q loops can unroll (lab 01), and mask_4d reads the weights from global memory, as
// the baseline does. The combine alone does not reach the target: README.md says what else to add.
// Grade it with:  meson test -C build 07-atomics --verbose
//
// Indexing, once: input is [B][C][H][W], mask [M][C][K][K], output [B][M][H_out][W_out], all
// float32 in C order, H_out = H - K + 1, W_out = W - K + 1. out_4d(b, m, h, w) = sum over c, p, q
// of in_4d(b, c, h + p, w + q) * mask_4d(m, c, p, q).
#include <algorithm>
#include <stdexcept>

#include "labkit/conv.h"
#include "labkit/conv_buffers.h"
#include "labkit/conv_limits.h"
#include "labkit/cuda_check.h"

namespace {

constexpr int TILE_W = 16;
constexpr int TILE_H = 8;
constexpr int kMaxLanes = 4;  // channel lanes per pixel: blocks of at most 16 * 8 * 4 = 512 threads

// KC > 0: the compile-time mask size (loops unrolled). KC == 0: use the run-time k.
template <int KC>
__global__ void conv_atomic_kernel(float* __restrict__ output, const float* __restrict__ input,
                                   const float* __restrict__ mask, const int M, const int C,
                                   const int H, const int W, const int k) {
  const int K = KC > 0 ? KC : k;
  const int H_out = H - K + 1;
  const int W_out = W - K + 1;
  const int tiles_w = (W_out + TILE_W - 1) / TILE_W;

#define out_4d(i3, i2, i1, i0) output[(i3) * (M * H_out * W_out) + (i2) * (H_out * W_out) + (i1) * (W_out) + (i0)]
#define in_4d(i3, i2, i1, i0) input[(i3) * (C * H * W) + (i2) * (H * W) + (i1) * (W) + (i0)]
#define mask_4d(i3, i2, i1, i0) mask[(i3) * (C * K * K) + (i2) * (K * K) + (i1) * (K) + (i0)]

  __shared__ float sum_s[TILE_H][TILE_W];  // one accumulator per output pixel of the block
  const int b = blockIdx.z;
  const int m = blockIdx.y;
  const int tx = threadIdx.x, ty = threadIdx.y, lane = threadIdx.z;
  const int h = (blockIdx.x / tiles_w) * TILE_H + ty;
  const int w = (blockIdx.x % tiles_w) * TILE_W + tx;
  const bool inside = h < H_out && w < W_out;  // the others still reach every __syncthreads()

  // TODO(student): one lane (lane 0) zeroes sum_s[ty][tx]; then __syncthreads() so no lane adds before it is 0.

  // TODO(student): if inside: this lane's partial sum over c = lane, lane + blockDim.z, ... < C and all p, q (unrolled).

  // TODO(student): atomicAdd the partial into sum_s[ty][tx]; then __syncthreads() (outside any if) so every lane has added.

  // TODO(student): lane 0 of an inside pixel writes sum_s[ty][tx] to out_4d(b, m, h, w).
  (void)sum_s;
  (void)b;
  (void)m;
  (void)lane;
  (void)inside;

#undef out_4d
#undef in_4d
#undef mask_4d
}

template <int KC>
void launch(float* output, const float* input, const float* mask, const labkit::ConvShape& s) {
  const int lanes = std::min(s.C, kMaxLanes);
  const int tiles_w = (s.W_out() + TILE_W - 1) / TILE_W;
  const int tiles_h = (s.H_out() + TILE_H - 1) / TILE_H;
  const dim3 block(TILE_W, TILE_H, lanes);
  const dim3 grid(tiles_w * tiles_h, s.M, s.B);
  conv_atomic_kernel<KC><<<grid, block>>>(output, input, mask, s.M, s.C, s.H, s.W, s.K);
  LABKIT_CUDA_CHECK_LAUNCH();
}

void check_shape(const labkit::ConvShape& s) {
  labkit::require_grid_limits(s, "07-atomics");
  labkit::require_int_indexing(s, "07-atomics");
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

// The timed region (Op Time). Lab 01's dispatch: one unrolled instantiation per K the kit uses.
void labkit::conv_forward_gpu(float* device_output, const float* device_input,
                              const float* device_mask, const ConvShape& shape) {
  check_shape(shape);
  switch (shape.K) {
    case 1: launch<1>(device_output, device_input, device_mask, shape); break;
    case 3: launch<3>(device_output, device_input, device_mask, shape); break;
    case 5: launch<5>(device_output, device_input, device_mask, shape); break;
    case 7: launch<7>(device_output, device_input, device_mask, shape); break;
    default: launch<0>(device_output, device_input, device_mask, shape); break;
  }
}

void labkit::conv_forward_gpu_epilog(float* host_output, float* device_output, float* device_input,
                                     float* device_mask, const ConvShape& shape) {
  standard_epilog(host_output, device_output, device_input, device_mask, shape);
}
