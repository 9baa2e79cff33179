// 10-streams — instructor solution.
//
// Graded on Layer Time: prolog + conv_forward_gpu + epilog, host to host. The baseline does the
// three steps one after the other: copy the whole input in, convolve, copy the whole output out.
// Here the batch is cut into kSegments segments of consecutive images, each with its own stream,
// and each phase only enqueues work:
//   prolog   copy segment i's input to the device on stream i          (host -> device engine)
//   forward  convolve segment i on stream i                             (the SMs)
//   epilog   copy segment i's output back on stream i, then wait      (device -> host engine)
// Within a stream the three steps stay in order; across streams they overlap: while segment 1's
// input is still being copied in, segment 0 is already being convolved, and segment 0's output
// is copied out while later segments compute. The layer then takes about as long as the longest
// of the three activities instead of their sum.
//
// Why one stream per segment. All the input copies are enqueued in the prolog, before any
// kernel. If two segments shared a stream, the first one's kernel would queue behind the second
// one's input copy, and the pipeline would stall.
//
// The host arrays are pinned (page-locked) by the grader for this lab: a copy from pageable memory
// is staged through a driver buffer and returns only when done, so nothing would overlap. Pinning
// inside the prolog (cudaMallocHost + a host copy) costs more than the overlap gains: README.md.
//
// The kernel is the baseline's (one thread per output pixel, 16 x 16 blocks, grid.z = the images
// of one segment): this lab changes only where and when the work runs.
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
  const std::size_t image = std::size_t(shape.C) * shape.H * shape.W;  // input floats per image
  for (int i = 0; i < g_segments; ++i) {
    LABKIT_CUDA_CHECK(cudaStreamCreate(&g_streams[i]));
    const int b0 = first_image(i, shape), b1 = first_image(i + 1, shape);
    LABKIT_CUDA_CHECK(cudaMemcpyAsync(*device_input + b0 * image, host_input + b0 * image,
                                      (b1 - b0) * image * sizeof(float), cudaMemcpyHostToDevice,
                                      g_streams[i]));
  }
}

void labkit::conv_forward_gpu(float* device_output, const float* device_input,
                              const float* device_mask, const ConvShape& shape) {
  check_shape(shape);
  if (g_segments == 0) {
    throw std::logic_error("10-streams: conv_forward_gpu called for " + to_string(shape) +
                           " without the prolog (no streams)");
  }
  const std::size_t image_in = std::size_t(shape.C) * shape.H * shape.W;
  const std::size_t image_out = std::size_t(shape.M) * shape.H_out() * shape.W_out();
  const int tiles = ((shape.W_out() + TILE_WIDTH - 1) / TILE_WIDTH) *
                    ((shape.H_out() + TILE_WIDTH - 1) / TILE_WIDTH);
  for (int i = 0; i < g_segments; ++i) {
    const int b0 = first_image(i, shape), b1 = first_image(i + 1, shape);
    const dim3 grid(tiles, shape.M, b1 - b0), block(TILE_WIDTH, TILE_WIDTH, 1);
    conv_forward_kernel<<<grid, block, 0, g_streams[i]>>>(
        device_output + b0 * image_out, device_input + b0 * image_in, device_mask, shape.M,
        shape.C, shape.H, shape.W, shape.K);
    LABKIT_CUDA_CHECK_LAUNCH();
  }
}

void labkit::conv_forward_gpu_epilog(float* host_output, float* device_output, float* device_input,
                                     float* device_mask, const ConvShape& shape) {
  const std::size_t image_out = std::size_t(shape.M) * shape.H_out() * shape.W_out();
  for (int i = 0; i < g_segments; ++i) {
    const int b0 = first_image(i, shape), b1 = first_image(i + 1, shape);
    LABKIT_CUDA_CHECK(cudaMemcpyAsync(host_output + b0 * image_out, device_output + b0 * image_out,
                                      (b1 - b0) * image_out * sizeof(float),
                                      cudaMemcpyDeviceToHost, g_streams[i]));
  }
  for (int i = 0; i < g_segments; ++i) {
    LABKIT_CUDA_CHECK(cudaStreamSynchronize(g_streams[i]));
    LABKIT_CUDA_CHECK(cudaStreamDestroy(g_streams[i]));
  }
  g_segments = 0;
  LABKIT_CUDA_CHECK(cudaFree(device_output));
  LABKIT_CUDA_CHECK(cudaFree(device_input));
  LABKIT_CUDA_CHECK(cudaFree(device_mask));
}
