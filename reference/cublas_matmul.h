// cublas_matmul.h — the conv as input unrolling + cuBLAS SGEMM: the vendor library's matmul beside
// 05-unroll-matmul's own (bench/bench_cublas.cu), built only when meson finds cuBLAS.
//
// Layout (the 05-unroll-matmul solution's): images b0 .. b0+images-1 unroll into
//   X [C*K*K][N], N = images * H_out*W_out,
//   X[(c*K + p)*K + q][(b - b0)*H_out*W_out + h*W_out + w] = input[b][c][h + p][w + q];
// the mask is already a matrix A [M][C*K*K], and the conv is A x X.
//
// cuBLAS is column-major: a row-major R x C matrix is the column-major C x R matrix (its
// transpose) with the same memory. So the row-major product P = A X is computed as
// P^T = X^T A^T with no transposition flag: X^T is X's memory read as N x KK (ld N), A^T is the
// mask's memory read as KK x M (ld KK), P^T is written as N x M (ld N), i.e. P as [M][N].
//
// Contract
//   * Plain fp32: the handle's math mode is CUBLAS_DEFAULT_MATH (no TF32, no reduced precision),
//     so the result meets the kit's fp32 tolerance (grader/judge/check.h) like any fp32 conv.
//   * Every call is asynchronous on the default stream (the one the kit's benches time with CUDA
//     events). Errors throw std::runtime_error naming the call and cuBLAS's status, or
//     labkit::CudaError for a CUDA launch.
//   * Segments: like the solution, the conv runs over segments of images whose X fits
//     kSegmentBytes (conv2 at batch 10000 unrolls to 9 GB, more elements than an int indexes),
//     so every GEMM has the shapes of the solution's matmul launches.
#pragma once

#include <cstddef>

#include "labkit/conv.h"

namespace labkit::cublas_matmul {

inline constexpr std::size_t kSegmentBytes = std::size_t(512) << 20;  // the 05 solution's default SEGMENT_MIB

// Images per segment: as many as fit `segment_bytes` of X, at least 1, at most shape.B.
int segment_images(const ConvShape& shape, std::size_t segment_bytes = kSegmentBytes);

// X of images [b0, b0 + images) of the device `input` into the device `unrolled` (KK * N floats).
void unroll(float* unrolled, const float* input, const ConvShape& shape, int b0, int images);

class Gemm {
 public:
  Gemm();  // cublasCreate, fp32 math mode
  ~Gemm();
  Gemm(const Gemm&) = delete;
  Gemm& operator=(const Gemm&) = delete;

  // product [M][N] (row-major) = mask [M][KK] x unrolled [KK][N]: one cublasSgemm. The product's
  // columns are the segment's (image, pixel) pairs: it is the conv's output in [M][B*H*W] order.
  void product(float* product, const float* mask, const float* unrolled, int M, int KK, int N) const;

  // output [images][M][HW] = for each image i, mask x the HW columns of image i: one
  // cublasSgemmStridedBatched that writes the conv's own layout (what a lab's matmul must write).
  void conv_layout(float* output, const float* mask, const float* unrolled, int M, int KK, int HW, int images) const;

 private:
  void* handle_ = nullptr;  // cublasHandle_t
};

// The whole conv through unroll + conv_layout, segment by segment, into the device `output`
// [B][M][H_out][W_out]; `workspace` holds KK * segment_images * H_out*W_out floats.
void conv_forward(const Gemm& gemm, float* output, const float* input, const float* mask, const ConvShape& shape,
                  float* workspace, int segment_images);

}  // namespace labkit::cublas_matmul
