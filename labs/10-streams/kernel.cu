// 10-streams — your kernel. Read README.md in this folder first.
//
// Graded on Layer Time: prolog + conv_forward_gpu + epilog, host to host. The baseline copies the
// whole input in, convolves, and copies the whole output out, one step after the other. Here the
// batch is cut into g_segments segments of consecutive images (first_image below), each with its
// own CUDA stream, and each phase only enqueues work (cudaMemcpyAsync, <<<..., stream>>>):
//   prolog   copy segment i's input to the device on stream i
//   forward  convolve segment i on stream i
//   epilog   copy segment i's output back on stream i, then wait for every stream
// A stream runs its own work in order; different streams overlap, so segment 0 is convolved while
// segment 1's input is still coming in, and its output goes out while later segments compute.
//
// One stream per segment: all the input copies are enqueued in the prolog, before any kernel. Were
// two segments on one stream, the first one's kernel would queue behind the second one's input copy
// and the pipeline would stall. Do not pin memory here (no cudaMallocHost in the prolog): the
// grader's host arrays are already pinned, which is what lets a cudaMemcpyAsync overlap at all, and
// pinning plus copying in the prolog would cost more than the overlap gains.
//
// The kernel below is the baseline's and is complete: grid.z = the images of one segment, output
// and input point at the segment's first image. You write the pipeline (streams, copies, launches,
// waits). Grade it with:  meson test -C build 10-streams --verbose
//
// Indexing, once: input is [B][C][H][W], mask [M][C][K][K], output [B][M][H_out][W_out], all
// float32 in C order, H_out = H - K + 1, W_out = W - K + 1. Image b's input starts b * C*H*W floats
// in, its output b * M*H_out*W_out floats in.
#include <algorithm>
#include <cstdint>
#include <stdexcept>

#include "labkit/conv.h"
#include "labkit/conv_limits.h"
#include "labkit/cuda_check.h"

namespace {

constexpr int TILE_WIDTH = 16;
constexpr int kSegments = 8;  // streams, one segment of the batch each

cudaStream_t g_streams[kSegments];
int g_segments = 0;  // streams in use: min(kSegments, B)

// Segment i holds images [first_image(i), first_image(i + 1)).
int first_image(int i, const labkit::ConvShape& s) { return int(std::int64_t(s.B) * i / g_segments); }

__global__ void conv_forward_kernel(float* output, const float* input, const float* mask,
                                    const int M, const int C, const int H, const int W, const int K) {
  const int H_out = H - K + 1;
  const int W_out = W - K + 1;
  const int tiles_w = (W_out + TILE_WIDTH - 1) / TILE_WIDTH;

#define out_4d(i3, i2, i1, i0) output[(i3) * (M * H_out * W_out) + (i2) * (H_out * W_out) + (i1) * (W_out) + (i0)]
#define in_4d(i3, i2, i1, i0) input[(i3) * (C * H * W) + (i2) * (H * W) + (i1) * (W) + (i0)]
#define mask_4d(i3, i2, i1, i0) mask[(i3) * (C * K * K) + (i2) * (K * K) + (i1) * (K) + (i0)]

  const int b = blockIdx.z;  // the image within the segment: output and input point at its start
  const int m = blockIdx.y;
  const int h = (blockIdx.x / tiles_w) * TILE_WIDTH + threadIdx.y;
  const int w = (blockIdx.x % tiles_w) * TILE_WIDTH + threadIdx.x;
  if (h >= H_out || w >= W_out) return;

  float acc = 0.0f;
  for (int c = 0; c < C; ++c) {
    for (int p = 0; p < K; ++p) {
      for (int q = 0; q < K; ++q) acc += in_4d(b, c, h + p, w + q) * mask_4d(m, c, p, q);
    }
  }
  out_4d(b, m, h, w) = acc;

#undef out_4d
#undef in_4d
#undef mask_4d
}

void check_shape(const labkit::ConvShape& s) {
  labkit::require_grid_limits(s, "10-streams");
  labkit::require_int_indexing(s, "10-streams");
}

}  // namespace

void labkit::conv_forward_gpu_prolog(const float* host_output, const float* host_input,
                                     const float* host_mask, float** device_output,
                                     float** device_input, float** device_mask,
                                     const ConvShape& shape) {
  (void)host_output;
  check_shape(shape);
  LABKIT_CUDA_CHECK(cudaMalloc(device_output, shape.output_size() * sizeof(float)));
  LABKIT_CUDA_CHECK(cudaMalloc(device_input, shape.input_size() * sizeof(float)));
  LABKIT_CUDA_CHECK(cudaMalloc(device_mask, shape.mask_size() * sizeof(float)));
  // The mask is small and every segment needs it: one synchronous copy before the pipeline.
  LABKIT_CUDA_CHECK(cudaMemcpy(*device_mask, host_mask, shape.mask_size() * sizeof(float),
                               cudaMemcpyHostToDevice));
  g_segments = std::min(kSegments, shape.B);
  // Input floats per image.
  [[maybe_unused]] const std::size_t image = std::size_t(shape.C) * shape.H * shape.W;
  for (int i = 0; i < g_segments; ++i) {
    [[maybe_unused]] const int b0 = first_image(i, shape), b1 = first_image(i + 1, shape);
    // TODO(student): create g_streams[i], then enqueue on it the copy of images [b0, b1) of host_input into *device_input (cudaMemcpyAsync; check both calls).
  }
  (void)g_streams;
  (void)host_input;
}

// Enqueues only: the lab is timed host to host (Layer Time), not on this call alone.
void labkit::conv_forward_gpu(float* device_output, const float* device_input,
                              const float* device_mask, const ConvShape& shape) {
  check_shape(shape);
  if (g_segments == 0) {
    throw std::logic_error("10-streams: conv_forward_gpu called for " + to_string(shape) +
                           " without the prolog (no streams)");
  }
  [[maybe_unused]] const std::size_t image_in = std::size_t(shape.C) * shape.H * shape.W;
  [[maybe_unused]] const std::size_t image_out = std::size_t(shape.M) * shape.H_out() * shape.W_out();
  const int tiles = ((shape.W_out() + TILE_WIDTH - 1) / TILE_WIDTH) *
                    ((shape.H_out() + TILE_WIDTH - 1) / TILE_WIDTH);
  for (int i = 0; i < g_segments; ++i) {
    const int b0 = first_image(i, shape), b1 = first_image(i + 1, shape);
    [[maybe_unused]] const dim3 grid(tiles, shape.M, b1 - b0), block(TILE_WIDTH, TILE_WIDTH, 1);
    // TODO(student): launch conv_forward_kernel<<<grid, block, 0, g_streams[i]>>> on images [b0, b1) (output and input advanced by b0 images), then LABKIT_CUDA_CHECK_LAUNCH().
  }
  (void)conv_forward_kernel;
  (void)device_output;
  (void)device_input;
  (void)device_mask;
}

void labkit::conv_forward_gpu_epilog(float* host_output, float* device_output, float* device_input,
                                     float* device_mask, const ConvShape& shape) {
  [[maybe_unused]] const std::size_t image_out = std::size_t(shape.M) * shape.H_out() * shape.W_out();
  for (int i = 0; i < g_segments; ++i) {
    [[maybe_unused]] const int b0 = first_image(i, shape), b1 = first_image(i + 1, shape);
    // TODO(student): enqueue on g_streams[i] the copy of images [b0, b1) of device_output back into host_output.
  }
  // TODO(student): then, for every stream: cudaStreamSynchronize (the output must be in host_output, and the kernels done, before the frees below), then cudaStreamDestroy.
  (void)host_output;
  g_segments = 0;
  LABKIT_CUDA_CHECK(cudaFree(device_output));
  LABKIT_CUDA_CHECK(cudaFree(device_input));
  LABKIT_CUDA_CHECK(cudaFree(device_mask));
}
