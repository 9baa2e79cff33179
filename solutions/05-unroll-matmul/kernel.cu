// 05-unroll-matmul — instructor solution.
//
// The convolution as a matrix product. For a group of images ("segment"), im2col writes the
// unrolled input matrix X [C*K*K][N] with one column per output pixel, N = images * H_out * W_out:
//   X[(c*K + p)*K + q][col] = input[b][c][h + p][w + q],   col = (b - b0) * H_out*W_out + h*W_out + w.
// The mask is already a matrix A [M][C*K*K] (its memory layout is exactly that), and
//   output[b][m][h][w] = sum over kk of A[m][kk] * X[kk][col],
// one matrix product per segment.
//
// Why segments. Unrolled, conv2 at batch 10000 is 196 x 11.56 M = 2.27 G floats (9 GB): more
// elements than an int can index and more memory than fits beside the network. Processing
// kSegmentBytes of X at a time bounds the workspace and keeps every in-segment index below
// INT_MAX. How big: measured on an H200 (README.md), 32 MiB segments, small enough to stay in
// L2, were the slowest (0.95x); 512 MiB the fastest (1.29x). A small segment is two short
// launches whose grids cannot fill the GPU, and every launch boundary drains it.
//
// The matmul's tiling. A has only M = 4 (conv1) or 16 (conv2) rows, so the textbook 16 x 16
// output tile would leave 12 of 16 rows idle in conv1. Instead one block computes MG rows (all of
// A's rows up to 16) x 256 columns: the block stages a TK x MG tile of A in shared memory, and
// every thread keeps an MG-row column of the output in registers, so each X value it loads is
// used MG times, and each A value in shared memory is read by all 256 threads (a broadcast).
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
constexpr std::size_t kSegmentBytes = std::size_t(SEGMENT_MIB) << 20;  // unrolled matrix per segment (workspace)
constexpr int kBlock = 256;                       // columns (threads) per block
constexpr int TK = 32;                            // rows of X per shared-memory tile of A

// The workspace of the unrolled matrix: allocated by the prolog, used by every forward call,
// freed by the epilog.
float* g_unrolled = nullptr;
int g_segment_images = 0;

// One thread per column (output pixel of one image in the segment): writes the C*K*K values of
// its column. Consecutive threads write consecutive columns of each row of X (coalesced).
__global__ void im2col_kernel(float* __restrict__ unrolled, const float* __restrict__ input,
                              const int C, const int H, const int W, const int K, const int N) {
  const int H_out = H - K + 1, W_out = W - K + 1, HW = H_out * W_out;
  const int col = blockIdx.x * blockDim.x + threadIdx.x;
  if (col >= N) return;
  const int b = col / HW, pix = col % HW;  // b counts from the segment's first image
  const int h = pix / W_out, w = pix % W_out;
  const float* img = input + std::size_t(b) * C * H * W;
  for (int c = 0; c < C; ++c) {
    for (int p = 0; p < K; ++p) {
      for (int q = 0; q < K; ++q) {
        const int kk = (c * K + p) * K + q;
        unrolled[std::size_t(kk) * N + col] = img[(c * H + h + p) * W + w + q];
      }
    }
  }
}

// output (this segment) = A [M][KK] x X [KK][N]; block = MG rows of A x kBlock columns of X.
template <int MG>
__global__ void matmul_kernel(float* __restrict__ output, const float* __restrict__ mask,
                              const float* __restrict__ unrolled, const int M, const int KK,
                              const int N, const int HW) {
  __shared__ __align__(16) float A_tile[TK][MG];  // A's rows m0..m0+MG-1, columns k0..k0+TK-1
  const int col = blockIdx.x * blockDim.x + threadIdx.x;
  const int m0 = blockIdx.y * MG;

  float acc[MG];
#pragma unroll
  for (int g = 0; g < MG; ++g) acc[g] = 0.0f;

  for (int k0 = 0; k0 < KK; k0 += TK) {
    // Stage A's tile, transposed (k-major) so the MG weights of one k are adjacent.
    for (int i = threadIdx.x; i < TK * MG; i += blockDim.x) {
      const int k = i / MG, g = i % MG;
      A_tile[k][g] = (m0 + g < M && k0 + k < KK) ? mask[(m0 + g) * KK + k0 + k] : 0.0f;
    }
    __syncthreads();  // the tile is complete before anyone reads it
    if (col < N) {
      const int kend = min(TK, KK - k0);
#pragma unroll 4
      for (int k = 0; k < kend; ++k) {
        const float x = unrolled[std::size_t(k0 + k) * N + col];
#pragma unroll
        for (int g = 0; g < MG; ++g) acc[g] += A_tile[k][g] * x;
      }
    }
    __syncthreads();  // everyone is done with the tile before the next one overwrites it
  }

  if (col < N) {
    const int b = col / HW, pix = col % HW;
#pragma unroll
    for (int g = 0; g < MG; ++g) {
      if (m0 + g < M) output[(std::size_t(b) * M + m0 + g) * HW + pix] = acc[g];
    }
  }
}

template <int MG>
void launch_matmul(float* output, const float* mask, const float* unrolled, int M, int KK, int N,
                   int HW) {
  const dim3 grid((N + kBlock - 1) / kBlock, (M + MG - 1) / MG, 1);
  matmul_kernel<MG><<<grid, kBlock>>>(output, mask, unrolled, M, KK, N, HW);
  LABKIT_CUDA_CHECK_LAUNCH();
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
    const int N = images * HW;
    const float* input = device_input + std::size_t(b0) * shape.C * shape.H * shape.W;
    float* output = device_output + std::size_t(b0) * shape.M * HW;
    im2col_kernel<<<(N + kBlock - 1) / kBlock, kBlock>>>(g_unrolled, input, shape.C, shape.H,
                                                         shape.W, shape.K, N);
    LABKIT_CUDA_CHECK_LAUNCH();
    if (shape.M <= 4) {
      launch_matmul<4>(output, device_mask, g_unrolled, shape.M, KK, N, HW);
    } else if (shape.M <= 8) {
      launch_matmul<8>(output, device_mask, g_unrolled, shape.M, KK, N, HW);
    } else {
      launch_matmul<16>(output, device_mask, g_unrolled, shape.M, KK, N, HW);
    }
  }
}

void labkit::conv_forward_gpu_epilog(float* host_output, float* device_output, float* device_input,
                                     float* device_mask, const ConvShape& shape) {
  standard_epilog(host_output, device_output, device_input, device_mask, shape);
  LABKIT_CUDA_CHECK(cudaFree(g_unrolled));
  g_unrolled = nullptr;
  g_segment_images = 0;
}
