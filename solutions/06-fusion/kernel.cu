// 06-fusion — instructor solution.
//
// Lab 05's matrix product, output = A [M][C*K*K] x X [C*K*K][N], without X in device memory.
// Each block computes an MT x TN tile of the output (MT maps, TN columns = output pixels) and
// builds the part of X it needs in shared memory, one (c, p) at a time: the K rows
//   X[(c*K + p)*K + q][col] = input[b][c][h + p][w + q],   q = 0..K-1,
// for its TN columns; the weights of its MT maps, A's rows, are staged once. Then every thread
// multiplies from shared memory. Nothing unrolled ever leaves the chip: the device holds input, mask and
// output only (the grader checks it), and no second kernel reads X back.
//
// Why the gather is cheap: X[row][col] = input[col_base(col) + row_offset(row)], with
//   col_base(col)   = b*C*H*W + h*W + w          (col = b*H_out*W_out + h*W_out + w)
//   row_offset(row) = c*H*W + p*W + q.
// Each thread works out the col_base of the columns it builds once, before the loop; inside the
// loop an element of X costs one add, one load (an L1 hit: neighbouring columns and rows read
// overlapping windows) and one shared store.
//
// Register tile. A thread computes RM maps x RN columns. Per row of the tile it reads RM weights
// (the same for the whole warp: a broadcast) and RN values of X as float4s, and does RM*RN
// multiply-adds. Shared-memory bandwidth is the limit to design for: a warp's float4 read of X
// moves 512 bytes (4 cycles of the SM's 128 bytes/cycle), so each one must feed enough FMAs. The
// float4s of a warp are consecutive (no bank conflict); a thread's second float4 sits half a tile
// further. The whole of A for the block's maps is staged once, before the loop.
//
//   shape             threads  MT maps  RM x RN   TN columns   shared (K = 7, C*K*K = 196)
//   M <= 4   (conv1)    128       4      4 x 8       1024       X 28 KiB + A 0.8 KiB (C = 1)
//   M <= 8              256       8      8 x 4       1024       X 28 KiB + A  6 KiB
//   M >  8   (conv2)    256      16      8 x 4        512       X 14 KiB + A 12 KiB   (TN below)
#include <climits>
#include <stdexcept>
#include <string>

#include "labkit/conv.h"
#include "labkit/conv_buffers.h"
#include "labkit/conv_limits.h"
#include "labkit/cuda_check.h"

namespace {

constexpr int kMaxSharedBytes = 48 * 1024;  // what a block may use without an opt-in

// conv2's columns per block (the table's last row) come from the macro TN so that `labkit sweep`
// can rebuild this file with other values (-DTN=256); the default stays 512. 256 threads and
// MT = 16 throughout: TN 256 is the skeleton's 4 x 4 register tile, 512 is 8 x 4, 1024 is 8 x 8.
#ifndef TN
#define TN 512  // labkit sweep 06-fusion --param TN=256,512,1024
#endif
constexpr int kConv2Columns = TN;
#undef TN  // from here on TN is Tile's member (T::TN), as in the comments
static_assert(kConv2Columns == 256 || kConv2Columns == 512 || kConv2Columns == 1024,
              "06-fusion: TN (conv2's columns per block) must be 256, 512 or 1024");
constexpr int kConv2RM = kConv2Columns == 256 ? 4 : 8;    // maps per thread
constexpr int kConv2RN = kConv2Columns == 1024 ? 8 : 4;  // columns per thread

// The block tile and the thread tile (see the table above).
template <int THREADS, int MT_, int RM_, int RN_>
struct Tile {
  static constexpr int threads = THREADS, MT = MT_, RM = RM_, RN = RN_;
  static constexpr int map_groups = MT / RM;  // threads sharing a column
  static constexpr int column_groups = THREADS / map_groups;
  static constexpr int TN = column_groups * RN;       // columns per block
  static constexpr int build_columns = TN / THREADS;  // columns of X each thread builds
  static constexpr int quads = RN / 4;                // float4s of a row per thread
  static_assert(MT % RM == 0 && RN % 4 == 0 && TN % THREADS == 0, "whole groups only");
  // X tile [K][TN] + A [C*K*K][MT], in bytes.
  static std::size_t shared_bytes(int C, int K) {
    return (std::size_t(K) * TN + std::size_t(C) * K * K * MT) * sizeof(float);
  }
};

template <class T>
__global__ void __launch_bounds__(T::threads)
    fused_conv_kernel(float* __restrict__ output, const float* __restrict__ input,
                      const float* __restrict__ mask, const int M, const int C, const int H,
                      const int W, const int K, const int N) {
  extern __shared__ __align__(16) float smem[];
  float* X_s = smem;              // [K][TN]: rows (c, p, 0..K-1) of X for this block's columns
  float* A_s = smem + K * T::TN;  // [C*K*K][MT]: the block's maps side by side, one row per kk

  const int KK = C * K * K;
  const int H_out = H - K + 1, W_out = W - K + 1, HW = H_out * W_out;
  const int tid = threadIdx.x;
  const int col0 = blockIdx.x * T::TN;  // the block's first column
  const int m0 = blockIdx.y * T::MT;    // the block's first map

  // All of A for the block's maps, once (row kk of X is multiplied by A_s[kk][0..MT-1]).
  for (int i = tid; i < KK * T::MT; i += T::threads) {
    const int kk = i / T::MT, g = i % T::MT;
    A_s[i] = m0 + g < M ? mask[(m0 + g) * KK + kk] : 0.0f;
  }

  // The columns this thread builds: tid, tid + threads, ... Columns past N read image 0's first
  // window (a valid address); their results are never written.
  int build_base[T::build_columns];
#pragma unroll
  for (int j = 0; j < T::build_columns; ++j) {
    const int col = col0 + tid + j * T::threads;
    const int b = col / HW, pix = col % HW;
    build_base[j] = col < N ? (b * C * H + pix / W_out) * W + pix % W_out : 0;
  }

  // The register tile this thread computes: maps m0 + mg*RM + i; columns 4*cg + u*4*column_groups
  // + (0..3) for u < quads, so that a warp's float4 reads of a row are consecutive.
  const int mg = tid / T::column_groups;  // the same for a whole warp: A_s reads broadcast
  const int cg = tid % T::column_groups;
  float acc[T::RM][T::RN] = {};

  for (int c = 0; c < C; ++c) {
    for (int p = 0; p < K; ++p) {
      const int row_offset = (c * H + p) * W;  // + q: the row of X is (c*K + p)*K + q
      __syncthreads();  // everyone is done with the previous rows (and A_s is staged)
      for (int q = 0; q < K; ++q) {
#pragma unroll
        for (int j = 0; j < T::build_columns; ++j)
          X_s[q * T::TN + tid + j * T::threads] = input[build_base[j] + row_offset + q];
      }
      __syncthreads();  // the rows are complete before anyone multiplies
      const float* A_rows = &A_s[((c * K + p) * K) * T::MT + mg * T::RM];
      for (int q = 0; q < K; ++q) {
        float x[T::RN], a[T::RM];
#pragma unroll
        for (int u = 0; u < T::quads; ++u) {
          const float4 v = *reinterpret_cast<const float4*>(&X_s[q * T::TN + 4 * (cg + u * T::column_groups)]);
          x[4 * u] = v.x, x[4 * u + 1] = v.y, x[4 * u + 2] = v.z, x[4 * u + 3] = v.w;
        }
#pragma unroll
        for (int i = 0; i < T::RM; i += 4) {
          const float4 v = *reinterpret_cast<const float4*>(&A_rows[q * T::MT + i]);
          a[i] = v.x, a[i + 1] = v.y, a[i + 2] = v.z, a[i + 3] = v.w;
        }
#pragma unroll
        for (int i = 0; i < T::RM; ++i) {
#pragma unroll
          for (int j = 0; j < T::RN; ++j) acc[i][j] += a[i] * x[j];
        }
      }
    }
  }

#pragma unroll
  for (int j = 0; j < T::RN; ++j) {
    const int col = col0 + 4 * (cg + (j / 4) * T::column_groups) + j % 4;
    if (col >= N) continue;
    const int b = col / HW, pix = col % HW;
#pragma unroll
    for (int i = 0; i < T::RM; ++i) {
      const int m = m0 + mg * T::RM + i;
      if (m < M) output[(b * M + m) * HW + pix] = acc[i][j];
    }
  }
}

template <class T>
void launch(float* output, const float* input, const float* mask, const labkit::ConvShape& s) {
  const std::size_t bytes = T::shared_bytes(s.C, s.K);
  if (bytes > kMaxSharedBytes) {
    throw std::invalid_argument("06-fusion: " + labkit::to_string(s) + " needs " + std::to_string(bytes) +
                                " bytes of shared memory per block (a " + std::to_string(s.K) + " x " +
                                std::to_string(T::TN) + " tile of X and " + std::to_string(T::MT) +
                                " maps of A); the limit without an opt-in is " + std::to_string(kMaxSharedBytes));
  }
  const int N = s.B * s.H_out() * s.W_out();
  const dim3 grid((N + T::TN - 1) / T::TN, (s.M + T::MT - 1) / T::MT, 1);
  fused_conv_kernel<T><<<grid, T::threads, bytes>>>(output, input, mask, s.M, s.C, s.H, s.W, s.K, N);
  LABKIT_CUDA_CHECK_LAUNCH();
}

void check_shape(const labkit::ConvShape& s) {
  labkit::require_int_indexing(s, "06-fusion");  // also bounds N = B * H_out * W_out
  if (std::size_t(s.B) * s.H_out() * s.W_out() + 2048 > INT_MAX || s.M > 65535 * 16) {
    throw std::invalid_argument("06-fusion: " + labkit::to_string(s) +
                                " has too many columns or maps for the grid's int indexing");
  }
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

void labkit::conv_forward_gpu(float* device_output, const float* device_input,
                              const float* device_mask, const ConvShape& shape) {
  check_shape(shape);
  if (shape.M <= 4) {
    launch<Tile<128, 4, 4, 8>>(device_output, device_input, device_mask, shape);
  } else if (shape.M <= 8) {
    launch<Tile<256, 8, 8, 4>>(device_output, device_input, device_mask, shape);
  } else {
    launch<Tile<256, 16, kConv2RM, kConv2RN>>(device_output, device_input, device_mask, shape);  // 8 x 4 by default
  }
}

void labkit::conv_forward_gpu_epilog(float* host_output, float* device_output, float* device_input,
                                     float* device_mask, const ConvShape& shape) {
  standard_epilog(host_output, device_output, device_input, device_mask, shape);
}
