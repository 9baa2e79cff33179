// 02-constant-memory — instructor solution.
//
// The baseline's kernel with the mask moved from global memory to __constant__ memory. In every
// iteration of the c/p/q loops all 256 threads of a block read the same mask element (m is one
// per block, and c, p, q advance in lock step), which is exactly the access the constant cache is
// built for: one fetch, broadcast to the whole warp, through a cache that global loads do not
// compete for. The input loads stay global.
//
// The mask is copied into the symbol with cudaMemcpyToSymbol in the prolog, so the timed forward
// pass reads it without any copy. device_mask is still allocated and filled, because the lab API
// hands it to forward and epilog; the kernel simply does not read it.
//
// The K x K loops are unrolled as in lab 01 (K a template parameter, dispatched for the sizes the
// kit uses). Measured on an H200, constant memory with the baseline's run-time loops was no faster
// than the baseline (0.99x); with the loops unrolled it is 1.3x (README.md has the numbers). With
// K known, each weight's address is the block's (m, c) base plus a constant, so the constant-cache
// loads carry immediate offsets, and the loop bookkeeping that hid their benefit is gone.
#include <stdexcept>

#include "labkit/conv.h"
#include "labkit/conv_buffers.h"
#include "labkit/conv_limits.h"
#include "labkit/cuda_check.h"

namespace {

constexpr int TILE_WIDTH = 16;

// The whole constant bank a kernel may use is 64 KiB; the largest mask the kit grades is
// M = 24, C = 4, K = 7 (4704 floats, 18.4 KiB). Sized for the bank, not for one shape.
constexpr std::size_t kMaxMaskElements = 64 * 1024 / sizeof(float);
__constant__ float const_mask[kMaxMaskElements];

// KC > 0: the compile-time mask size (loops unrolled). KC == 0: use the run-time k.
template <int KC>
__global__ void conv_forward_kernel(float* output, const float* input, const int M, const int C,
                                    const int H, const int W, const int k) {
  const int K = KC > 0 ? KC : k;
  const int H_out = H - K + 1;
  const int W_out = W - K + 1;
  const int tiles_w = (W_out + TILE_WIDTH - 1) / TILE_WIDTH;

#define out_4d(i3, i2, i1, i0) output[(i3) * (M * H_out * W_out) + (i2) * (H_out * W_out) + (i1) * (W_out) + (i0)]
#define in_4d(i3, i2, i1, i0) input[(i3) * (C * H * W) + (i2) * (H * W) + (i1) * (W) + (i0)]
#define mask_4d(i3, i2, i1, i0) const_mask[(i3) * (C * K * K) + (i2) * (K * K) + (i1) * (K) + (i0)]

  const int b = blockIdx.z;
  const int m = blockIdx.y;
  const int h = (blockIdx.x / tiles_w) * TILE_WIDTH + threadIdx.y;
  const int w = (blockIdx.x % tiles_w) * TILE_WIDTH + threadIdx.x;
  if (h >= H_out || w >= W_out) return;

  float acc = 0.0f;
  for (int c = 0; c < C; ++c) {
#pragma unroll
    for (int p = 0; p < K; ++p) {
#pragma unroll
      for (int q = 0; q < K; ++q) {
        acc += in_4d(b, c, h + p, w + q) * mask_4d(m, c, p, q);
      }
    }
  }
  out_4d(b, m, h, w) = acc;

#undef out_4d
#undef in_4d
#undef mask_4d
}

template <int KC>
void launch(float* output, const float* input, const labkit::ConvShape& s) {
  const int tiles_w = (s.W_out() + TILE_WIDTH - 1) / TILE_WIDTH;
  const int tiles_h = (s.H_out() + TILE_WIDTH - 1) / TILE_WIDTH;
  const dim3 block(TILE_WIDTH, TILE_WIDTH, 1);
  const dim3 grid(tiles_w * tiles_h, s.M, s.B);
  conv_forward_kernel<KC><<<grid, block>>>(output, input, s.M, s.C, s.H, s.W, s.K);
  LABKIT_CUDA_CHECK_LAUNCH();
}

void check_shape(const labkit::ConvShape& s) {
  labkit::require_constant_mask(s, "02-constant-memory", kMaxMaskElements);
  labkit::require_grid_limits(s, "02-constant-memory");
  labkit::require_int_indexing(s, "02-constant-memory");
}

}  // namespace

void labkit::conv_forward_gpu_prolog(const float* host_output, const float* host_input,
                                     const float* host_mask, float** device_output,
                                     float** device_input, float** device_mask,
                                     const ConvShape& shape) {
  (void)host_output;
  check_shape(shape);
  standard_prolog(host_input, host_mask, device_output, device_input, device_mask, shape);
  // The copy the kernel reads: host to the constant bank, once, outside the timed region.
  LABKIT_CUDA_CHECK(cudaMemcpyToSymbol(const_mask, host_mask, shape.mask_size() * sizeof(float)));
}

void labkit::conv_forward_gpu(float* device_output, const float* device_input,
                              const float* device_mask, const ConvShape& shape) {
  (void)device_mask;  // the kernel reads const_mask, filled by the prolog
  check_shape(shape);
  switch (shape.K) {
    case 1: launch<1>(device_output, device_input, shape); break;
    case 3: launch<3>(device_output, device_input, shape); break;
    case 5: launch<5>(device_output, device_input, shape); break;
    case 7: launch<7>(device_output, device_input, shape); break;
    default: launch<0>(device_output, device_input, shape); break;
  }
}

void labkit::conv_forward_gpu_epilog(float* host_output, float* device_output, float* device_input,
                                     float* device_mask, const ConvShape& shape) {
  standard_epilog(host_output, device_output, device_input, device_mask, shape);
}
