// 06-fusion — your kernel. Read README.md in this folder first.
//
// Lab 05's matrix product, output = A [M][C*K*K] x X [C*K*K][N], without X in device memory: one
// kernel builds the part of X a block needs in shared memory and multiplies from there. The
// device holds input, mask and output only (the grader records the allocations), so the prolog
// below is the standard one and must stay so.
//   * a block computes an MT x TN tile of the output: MT maps by TN columns (output pixels);
//   * it walks the rows of X one (c, p) at a time: the K rows (c, p, q = 0..K-1) of X for its TN
//     columns into X_s [K][TN], the same K rows of A for its MT maps into A_s [K][MT];
//   * __syncthreads() after building the rows, and again before the next (c, p) overwrites them;
//   * the multiply is register-tiled: each thread keeps RM maps x RN columns of accumulators, so
//     one shared load of X feeds RM multiply-adds (256 threads, MT = 16, TN = 256: 4 x 4 each);
//   * X_s and A_s depend on K, known only at run time, so the shared memory is dynamic:
//     K * (TN + MT) floats, the third <<<grid, block, bytes>>> argument of the launch.
// Grade it with:  meson test -C build 06-fusion --verbose
//
// Indexing, once: input is [B][C][H][W], mask [M][C][K][K], output [B][M][H_out][W_out], all
// float32 in C order, H_out = H - K + 1, W_out = W - K + 1. Column col = b*H_out*W_out + h*W_out + w
// is the output pixel (b, h, w); row (c*K + p)*K + q of X is the mask position (c, p, q), and
//   X[(c*K + p)*K + q][col] = input[b][c][h + p][w + q] = input[col_base(col) + row_offset]
// with col_base(col) = ((b*C)*H + h)*W + w and row_offset = (c*H + p)*W + q. col_base is fixed
// for a column: work it out once per column a thread builds (column_base below), before the loop
// over (c, p). A[m][(c*K + p)*K + q] = mask[((m*C + c)*K + p)*K + q]; the output of (m, col) is
// output[(b*M + m)*H_out*W_out + h*W_out + w].
#include <stdexcept>
#include <string>

#include "labkit/conv.h"
#include "labkit/conv_buffers.h"
#include "labkit/conv_limits.h"
#include "labkit/cuda_check.h"

namespace {

constexpr int kThreads = 256;  // threads per block
constexpr int MT = 16;         // maps per block tile (conv2 has 16; conv1's 4 leave 12 rows idle)
// TN is a macro rather than a constexpr int so that `labkit sweep` can rebuild this file with
// other values (-DTN=512); the default stays 256.
#ifndef TN
#define TN 256                 // columns per block tile (labkit sweep 06-fusion --param TN=256,512,1024)
#endif
[[maybe_unused]] constexpr int kMaxSharedBytes = 48 * 1024;  // what a block may use without an opt-in

// col_base(col) of the comment above. For col < N only: past N there is no image b.
[[maybe_unused]] __device__ int column_base(int col, int C, int H, int W, int W_out, int HW) {
  const int b = col / HW, pix = col % HW;
  return (b * C * H + pix / W_out) * W + pix % W_out;
}

// grid = (column tiles, map tiles), kThreads threads; smem holds X_s [K][TN] then A_s [K][MT].
__global__ void fused_conv_kernel(float* output, const float* input, const float* mask,
                                  const int M, const int C, const int H, const int W, const int K,
                                  const int N) {
  extern __shared__ __align__(16) float smem[];  // sized by the launch's third <<< >>> argument
  [[maybe_unused]] float* X_s = smem;           // [K][TN]: rows (c, p, q) of X, block's columns
  [[maybe_unused]] float* A_s = smem + K * TN;  // [K][MT]: the same rows of A, maps side by side
  const int H_out = H - K + 1, W_out = W - K + 1, HW = H_out * W_out;
  const int col0 = blockIdx.x * TN;  // the block's first column
  const int m0 = blockIdx.y * MT;    // the block's first map

  // TODO(student): column_base of each column this thread builds (col0 + threadIdx.x + j * kThreads), once; past N use any valid offset (0) and never write those columns.

  // TODO(student): for each (c, p): __syncthreads(); build X_s[q * TN + n] and A_s[q * MT + g] (0 for maps past M); __syncthreads(); add the K rows' products into the thread's RM x RN accumulators.

  // TODO(student): write each accumulator to output[(b * M + m) * HW + pix] if its column < N and its map < M.
  (void)output;
  (void)input;
  (void)mask;
  (void)M;
  (void)C;
  (void)N;
  (void)W_out;
  (void)HW;
  (void)col0;
  (void)m0;
}

void check_shape(const labkit::ConvShape& s) {
  labkit::require_int_indexing(s, "06-fusion");  // also bounds N = B * H_out * W_out
  if (s.M > 65535 * MT) throw std::invalid_argument("06-fusion: M too large for grid.y: " + labkit::to_string(s));
}

}  // namespace

void labkit::conv_forward_gpu_prolog(const float* host_output, const float* host_input,
                                     const float* host_mask, float** device_output,
                                     float** device_input, float** device_mask,
                                     const ConvShape& shape) {
  (void)host_output;
  check_shape(shape);
  // Input, output and mask: nothing else. The unrolled matrix lives in shared memory only.
  standard_prolog(host_input, host_mask, device_output, device_input, device_mask, shape);
}

// The timed region (Op Time).
void labkit::conv_forward_gpu(float* device_output, const float* device_input,
                              const float* device_mask, const ConvShape& shape) {
  check_shape(shape);
  const int N = shape.B * shape.H_out() * shape.W_out();
  const dim3 grid((N + TN - 1) / TN, (shape.M + MT - 1) / MT, 1);
  // TODO(student): the shared bytes, K * (TN + MT) floats (7 * 272 * 4 = 7,616 for K = 7), refused with a clear std::invalid_argument above kMaxSharedBytes.
  const std::size_t shared_bytes = 0;
  fused_conv_kernel<<<grid, kThreads, shared_bytes>>>(device_output, device_input, device_mask,
                                                      shape.M, shape.C, shape.H, shape.W, shape.K, N);
  LABKIT_CUDA_CHECK_LAUNCH();
}

void labkit::conv_forward_gpu_epilog(float* host_output, float* device_output, float* device_input,
                                     float* device_mask, const ConvShape& shape) {
  standard_epilog(host_output, device_output, device_input, device_mask, shape);
}
