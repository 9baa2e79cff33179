// cublas_matmul.cu — input unrolling and cuBLAS SGEMM (see cublas_matmul.h).
#include "reference/cublas_matmul.h"

#include <cublas_v2.h>

#include <algorithm>
#include <climits>
#include <stdexcept>
#include <string>

#include "labkit/cuda_check.h"

namespace labkit::cublas_matmul {
namespace {

constexpr int kBlock = 256;

void check(cublasStatus_t status, const char* call) {
  if (status != CUBLAS_STATUS_SUCCESS)
    throw std::runtime_error(std::string("cuBLAS: ") + call + " failed: " + cublasGetStatusName(status) + " (" +
                             cublasGetStatusString(status) + ")");
}

cublasHandle_t handle_of(void* h) { return static_cast<cublasHandle_t>(h); }

// One thread per column (output pixel of one image of the segment) writes its C*K*K values;
// consecutive threads write consecutive columns of each row of X (coalesced). The solution's
// im2col, so that X is the matrix its matmul reads.
__global__ void unroll_kernel(float* __restrict__ unrolled, const float* __restrict__ input, const int C, const int H,
                              const int W, const int K, const int N) {
  const int H_out = H - K + 1, W_out = W - K + 1, HW = H_out * W_out;
  const int col = blockIdx.x * blockDim.x + threadIdx.x;
  if (col >= N) return;
  const int b = col / HW, pix = col % HW;
  const int h = pix / W_out, w = pix % W_out;
  const float* img = input + std::size_t(b) * C * H * W;
  for (int c = 0; c < C; ++c)
    for (int p = 0; p < K; ++p)
      for (int q = 0; q < K; ++q)
        unrolled[std::size_t((c * K + p) * K + q) * N + col] = img[(c * H + h + p) * W + w + q];
}

void check_segment(const ConvShape& s, int images) {
  const std::size_t columns = std::size_t(images) * s.H_out() * s.W_out();
  if (images < 1 || columns > INT_MAX)
    throw std::invalid_argument("cublas_matmul: a segment of " + std::to_string(images) + " images of " + to_string(s) +
                                " has " + std::to_string(columns) + " columns: cuBLAS takes int dimensions");
}

}  // namespace

int segment_images(const ConvShape& s, std::size_t segment_bytes) {
  const std::size_t image_bytes = std::size_t(s.C) * s.K * s.K * s.H_out() * s.W_out() * sizeof(float);
  const std::size_t fit = std::max<std::size_t>(1, segment_bytes / image_bytes);
  return int(std::min<std::size_t>(fit, std::size_t(s.B)));
}

void unroll(float* unrolled, const float* input, const ConvShape& s, int b0, int images) {
  check_segment(s, images);
  const int N = images * s.H_out() * s.W_out();
  unroll_kernel<<<(N + kBlock - 1) / kBlock, kBlock>>>(unrolled, input + std::size_t(b0) * s.C * s.H * s.W, s.C, s.H,
                                                       s.W, s.K, N);
  LABKIT_CUDA_CHECK_LAUNCH();
}

Gemm::Gemm() {
  cublasHandle_t h = nullptr;
  check(cublasCreate(&h), "cublasCreate");
  handle_ = h;
  check(cublasSetMathMode(h, CUBLAS_DEFAULT_MATH), "cublasSetMathMode(CUBLAS_DEFAULT_MATH)");
}

Gemm::~Gemm() {
  if (handle_) cublasDestroy(handle_of(handle_));
}

void Gemm::product(float* product, const float* mask, const float* unrolled, int M, int KK, int N) const {
  const float one = 1.f, zero = 0.f;
  // P^T (N x M, ld N) = X^T (N x KK, ld N) * A^T (KK x M, ld KK): see the header.
  check(cublasSgemm(handle_of(handle_), CUBLAS_OP_N, CUBLAS_OP_N, N, M, KK, &one, unrolled, N, mask, KK, &zero,
                    product, N),
        "cublasSgemm");
}

void Gemm::conv_layout(float* output, const float* mask, const float* unrolled, int M, int KK, int HW,
                       int images) const {
  const float one = 1.f, zero = 0.f;
  const int N = images * HW;
  // Image i: its output^T (HW x M, ld HW) at output + i*M*HW = X_i^T (HW x KK, ld N) at unrolled +
  // i*HW times A^T (KK x M, ld KK), the same for every image (stride 0).
  check(cublasSgemmStridedBatched(handle_of(handle_), CUBLAS_OP_N, CUBLAS_OP_N, HW, M, KK, &one, unrolled, N,
                                  static_cast<long long>(HW), mask, KK, 0, &zero, output, HW,
                                  static_cast<long long>(M) * HW, images),
        "cublasSgemmStridedBatched");
}

void conv_forward(const Gemm& gemm, float* output, const float* input, const float* mask, const ConvShape& s,
                  float* workspace, int segment_images) {
  const int HW = s.H_out() * s.W_out(), KK = s.C * s.K * s.K;
  for (int b0 = 0; b0 < s.B; b0 += segment_images) {
    const int images = std::min(segment_images, s.B - b0);
    unroll(workspace, input, s, b0, images);
    gemm.conv_layout(output + std::size_t(b0) * s.M * HW, mask, workspace, s.M, KK, HW, images);
  }
}

}  // namespace labkit::cublas_matmul
