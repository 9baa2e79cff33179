// 05-unroll-matmul — your kernel. Read README.md in this folder first.
//
// The convolution as a matrix product, in two kernels per group of images ("segment"):
//   1. im2col_kernel writes the unrolled input matrix X [C*K*K][N] of the segment, one column per
//      output pixel (N = images * H_out * W_out):
//        X[(c*K + p)*K + q][col] = input[b][c][h + p][w + q],
//        col = (b - b0) * H_out * W_out + h * W_out + w      (b0: the segment's first image);
//   2. matmul_kernel multiplies the mask, which is already a matrix A [M][C*K*K] in memory, by X:
//        output[b][m][h][w] = sum over kk of A[m][kk] * X[kk][col],
//      with a shared-memory tiled matrix multiply (tiles of A and/or X staged in __shared__
//      memory, __syncthreads() around each tile).
// The host code below is complete: the prolog allocates the workspace for one segment's X, and
// conv_forward_gpu walks the batch segment by segment (README.md explains why segments: conv2 at
// batch 10000 unrolls to 2.27 G floats, past INT_MAX). You write the two kernels and the matmul's
// launch. Grade it with:  meson test -C build 05-unroll-matmul --verbose
#include <algorithm>
#include <climits>
#include <stdexcept>
#include <string>

#include "labkit/conv.h"
#include "labkit/conv_buffers.h"
#include "labkit/cuda_check.h"

namespace {

// The segment size is a macro rather than a constexpr so that `labkit sweep` can rebuild this
// file with other values (-DSEGMENT_MIB=32); the default stays 512 MiB.
#ifndef SEGMENT_MIB
#define SEGMENT_MIB 512  // MiB of X per segment (labkit sweep 05-unroll-matmul --param SEGMENT_MIB=32,64,128,256,512)
#endif
constexpr std::size_t kSegmentBytes = std::size_t(SEGMENT_MIB) << 20;  // X of one segment: bounded workspace
constexpr int kBlock = 256;                        // threads per block of im2col

// The workspace of the unrolled matrix: allocated by the prolog, used by every forward call,
// freed by the epilog.
float* g_unrolled = nullptr;
int g_segment_images = 0;

// One thread per column of X (an output pixel of one image of the segment); input points at the
// segment's first image. Write the C*K*K values of column col.
__global__ void im2col_kernel(float* unrolled, const float* input, const int C, const int H,
                              const int W, const int K, const int N) {
  const int H_out = H - K + 1, W_out = W - K + 1, HW = H_out * W_out;
  const int col = blockIdx.x * blockDim.x + threadIdx.x;
  if (col >= N) return;
  const int b = col / HW, pix = col % HW;  // b counts from the segment's first image
  const int h = pix / W_out, w = pix % W_out;
  // TODO(student): for every c, p, q write unrolled[kk * N + col] (kk = (c*K + p)*K + q; use size_t for kk * N).
  (void)unrolled;
  (void)input;
  (void)b;
  (void)h;
  (void)w;
}

// output points at the segment's first image. Compute output[b][m][h][w] for the N columns.
__global__ void matmul_kernel(float* output, const float* mask, const float* unrolled,
                              const int M, const int KK, const int N, const int HW) {
  // TODO(student): a shared-memory tiled matrix multiply of A = mask [M][KK] by X = unrolled [KK][N]; column col goes to output[(b*M + m)*HW + pix].
  (void)output;
  (void)mask;
  (void)unrolled;
  (void)M;
  (void)KK;
  (void)N;
  (void)HW;
}

// Images per segment: as many as fit kSegmentBytes of X, at least one, at most B.
int segment_images(const labkit::ConvShape& s) {
  const std::size_t column_bytes = std::size_t(s.C) * s.K * s.K * sizeof(float);
  const std::size_t image_bytes = column_bytes * s.H_out() * s.W_out();
  const std::size_t fit = std::max<std::size_t>(1, kSegmentBytes / image_bytes);
  return int(std::min<std::size_t>(fit, std::size_t(s.B)));
}

void check_shape(const labkit::ConvShape& s) {
  const std::size_t image_elements = std::size_t(s.C) * s.K * s.K * s.H_out() * s.W_out();
  if (image_elements > INT_MAX / 2 || std::size_t(s.C) * s.H * s.W > INT_MAX) {
    throw std::invalid_argument("05-unroll-matmul: one image of " + labkit::to_string(s) +
                                " unrolls to " + std::to_string(image_elements) +
                                " elements; a segment is indexed with int");
  }
}

}  // namespace

void labkit::conv_forward_gpu_prolog(const float* host_output, const float* host_input,
                                     const float* host_mask, float** device_output,
                                     float** device_input, float** device_mask,
                                     const ConvShape& shape) {
  (void)host_output;
  check_shape(shape);
  standard_prolog(host_input, host_mask, device_output, device_input, device_mask, shape);
  // The workspace is allocated here, outside the timed forward pass.
  if (g_unrolled != nullptr) LABKIT_CUDA_CHECK(cudaFree(g_unrolled));
  g_segment_images = segment_images(shape);
  const std::size_t columns = std::size_t(g_segment_images) * shape.H_out() * shape.W_out();
  LABKIT_CUDA_CHECK(cudaMalloc(&g_unrolled,
                               std::size_t(shape.C) * shape.K * shape.K * columns * sizeof(float)));
}

// The timed region (Op Time).
void labkit::conv_forward_gpu(float* device_output, const float* device_input,
                              const float* device_mask, const ConvShape& shape) {
  check_shape(shape);
  if (g_unrolled == nullptr || g_segment_images != segment_images(shape)) {
    throw std::logic_error("05-unroll-matmul: conv_forward_gpu called for " + to_string(shape) +
                           " without the prolog of that shape (no workspace)");
  }
  const int HW = shape.H_out() * shape.W_out();
  const int KK = shape.C * shape.K * shape.K;
  for (int b0 = 0; b0 < shape.B; b0 += g_segment_images) {
    const int images = std::min(g_segment_images, shape.B - b0);
    const int N = images * HW;  // columns of this segment's X
    const float* input = device_input + std::size_t(b0) * shape.C * shape.H * shape.W;
    [[maybe_unused]] float* output = device_output + std::size_t(b0) * shape.M * HW;
    im2col_kernel<<<(N + kBlock - 1) / kBlock, kBlock>>>(g_unrolled, input, shape.C, shape.H,
                                                         shape.W, shape.K, N);
    LABKIT_CUDA_CHECK_LAUNCH();
    // TODO(student): launch matmul_kernel for this segment (your tile shape decides the grid), then LABKIT_CUDA_CHECK_LAUNCH().
    (void)device_mask;
    (void)KK;
  }
}

void labkit::conv_forward_gpu_epilog(float* host_output, float* device_output, float* device_input,
                                     float* device_mask, const ConvShape& shape) {
  standard_epilog(host_output, device_output, device_input, device_mask, shape);
  LABKIT_CUDA_CHECK(cudaFree(g_unrolled));
  g_unrolled = nullptr;
  g_segment_images = 0;
}
