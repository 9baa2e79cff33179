// 12-tensor-cores — your kernel. Read README.md in this folder first.
//
// Lab 06's implicit GEMM, output[m][col] = sum_r A[m][r] * X[r][col], with the products on
// tensor cores: one warp-wide mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 multiplies a
// 16 x 8 tile of A (16 maps x 8 reduction rows) by an 8 x 8 tile of X (8 rows x 8 pixels) and
// adds the 16 x 8 result into fp32 accumulators. The code below is complete and correct with
// plain fp32 multiply-adds; the TODOs turn it into tensor-core code.
//
// Already in place (keep it):
//   * a block is WX warps side by side (8 * WX output columns) x J output rows of one image, for
//     16 maps (grid.y walks the maps 16 at a time); the block copies the input it needs, C x
//     (J + K - 1) rows x (8 * WX + K - 1) columns, into `tile` (zero outside the image);
//   * each thread already owns exactly the outputs of an mma accumulator fragment: lane =
//     g * 4 + t (g = lane / 4, t = lane % 4); acc[j][0..3] are maps (g, g, g + 8, g + 8) at the
//     warp's columns (2t, 2t + 1, 2t, 2t + 1), output row h0 + j. The stores need no change.
// Fragments of m16n8k8 .tf32 (PTX ISA, "Matrix Fragments for mma.m16n8k8"):
//   A, 16 x 8 (maps x k):   a0 = A[g][t]  a1 = A[g + 8][t]  a2 = A[g][t + 4]  a3 = A[g + 8][t + 4]
//   B,  8 x 8 (k x pixels): b0 = B[t][g]  b1 = B[t + 4][g]
//   D, 16 x 8 (maps x pixels): d0 = D[g][2t]  d1 = D[g][2t + 1]  d2 = D[g + 8][2t]  d3 = D[g + 8][2t + 1]
// The suggested reduction layout (README, "Background"): an MMA's 8 k slots are 8 pairs (c, q)
// (group s holds pairs 8s .. 8s + 7, (c, q) = divmod(8s + k, K), zero past C*K), its 8 pixels
// are the warp's 8 columns of one output row h0 + j, and the mask row p is a loop:
//   B[k][n] = in[c][h0 + j + p][w + n + q] = tile[c][j + p][warp * 8 + n + q]
// so MMA (j, p) reads tile row j + p: load a thread's column of rows once per group s and reuse it.
// Grade it with:  meson test -C build 12-tensor-cores --verbose
//
// Indexing, once: input is [B][C][H][W], mask [M][C][K][K], output [B][M][H_out][W_out], all
// float32 in C order, H_out = H - K + 1, W_out = W - K + 1. out(b, m, h, w) = sum over c, p, q of
// in(b, c, h + p, w + q) * mask(m, c, p, q).
#include <stdexcept>
#include <string>

#include "labkit/conv.h"
#include "labkit/conv_buffers.h"
#include "labkit/conv_limits.h"
#include "labkit/cuda_check.h"

namespace {

constexpr int kMaxSharedBytes = 48 * 1024;  // what a block may use without an opt-in
constexpr int kMapsPerTile = 16;           // the m of m16n8k8

// fp32 -> tf32, rounded to nearest: an fp32 bit pattern whose low 13 bits are zero.
[[maybe_unused]] __device__ __forceinline__ float to_tf32(float x) {
  unsigned r;
  asm("cvt.rna.tf32.f32 %0, %1;" : "=r"(r) : "f"(x));
  return __uint_as_float(r);
}

// d += A (16 x 8) * B (8 x 8), the fragments of the table above.
[[maybe_unused]] __device__ __forceinline__ void mma_tf32(float (&d)[4], const float4& a, float b0,
                                                         float b1) {
  // TODO(student): asm volatile("mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 "
  //   "{%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};"
  //   : "+f"(d[0]), ... : "r"(__float_as_uint(a.x)), ..., "r"(__float_as_uint(b1)));
  (void)d;
  (void)a;
  (void)b0;
  (void)b1;
}

template <int K_, int J_, int WX_>
struct Config {
  static constexpr int K = K_, J = J_, WX = WX_;
  static constexpr int threads = 32 * WX;
  static constexpr int rows = J + K - 1;       // input rows of the tile
  static constexpr int cols = 8 * WX + K - 1;  // input columns of the tile
  // A channel's stride in the tile: >= rows * cols, 16 more than a multiple of 32 floats (so
  // that a warp's loads from two channels fall in different banks).
  static constexpr int channel_stride = (rows * cols + 15) / 32 * 32 + 16;
  __host__ __device__ static int groups(int C) { return (C * K + 7) / 8; }  // k groups of 8 slots
  // A_s (room for the fragments of every (group, p, lane): groups * K * 32 float4s, which also
  // holds the plain [16][C*K*K] weights) + the tile.
  static std::size_t shared_bytes(int C) {
    return std::size_t(groups(C)) * K * 32 * sizeof(float4) + std::size_t(C) * channel_stride * sizeof(float);
  }
};

// grid = (row bands x column blocks, map tiles of 16, images); Cfg::threads threads.
template <class Cfg>
__global__ void __launch_bounds__(Cfg::threads)
    tc_conv_kernel(float* __restrict__ output, const float* __restrict__ input,
                   const float* __restrict__ mask, const int M, const int C, const int H, const int W,
                   const int column_blocks) {
  constexpr int K = Cfg::K, J = Cfg::J;
  extern __shared__ __align__(16) float smem[];
  const int CK = C * K, CKK = CK * K;
  float* A_s = smem;                                    // the weights (see the TODO below)
  float* tile = smem + Cfg::groups(C) * K * 32 * 4;     // [C][channel_stride]: rows x cols of input

  const int H_out = H - K + 1, W_out = W - K + 1;
  const int b = blockIdx.z, m0 = blockIdx.y * kMapsPerTile;
  const int h0 = blockIdx.x / column_blocks * J;              // the block's first output row
  const int w0 = blockIdx.x % column_blocks * (8 * Cfg::WX);  // and first output column
  const int tid = threadIdx.x, lane = tid % 32, warp = tid / 32;
  const int g = lane / 4, t = lane % 4;

  // TODO(student): stage A in fragment order instead, as float4s A_s4[(s * K + p) * 32 + lane] =
  // (a0, a1, a2, a3) of k group s and mask row p, each weight rounded with to_tf32, 0 past M or C*K.
  for (int i = tid; i < kMapsPerTile * CKK; i += Cfg::threads) {
    const int m = m0 + i / CKK;
    A_s[i] = m < M ? mask[m * CKK + i % CKK] : 0.0f;  // plain [16][C*K*K]
  }
  // The input tile, zero outside the image: element (c, r, x) is input[b][c][h0 + r][w0 + x].
  // Consecutive threads take consecutive x (coalesced); 8 loads in flight before any store.
  // TODO(student): round each value to tf32 here (to_tf32), once, rather than in the products.
  constexpr int kBatch = 8;
  const int n = C * Cfg::rows * Cfg::cols;
  for (int i0 = 0; i0 < n; i0 += kBatch * Cfg::threads) {
    float v[kBatch];
#pragma unroll
    for (int u = 0; u < kBatch; ++u) {
      const int i = i0 + u * Cfg::threads + tid;
      const int c = i / (Cfg::rows * Cfg::cols), y = h0 + i / Cfg::cols % Cfg::rows, x = w0 + i % Cfg::cols;
      v[u] = i < n && y < H && x < W ? input[((std::size_t(b) * C + c) * H + y) * W + x] : 0.0f;
    }
#pragma unroll
    for (int u = 0; u < kBatch; ++u) {
      const int i = i0 + u * Cfg::threads + tid;
      if (i < n) tile[i / (Cfg::rows * Cfg::cols) * Cfg::channel_stride + i % (Cfg::rows * Cfg::cols)] = v[u];
    }
  }
  __syncthreads();

  // The products, plain fp32: each thread computes its own accumulator fragment.
  // TODO(student): replace the loops over (c, p, q) with: for each k group s, the thread's column
  // of tile rows for its slots t and t + 4 (v0[r], v1[r], r < J + K - 1); for each p, the float4
  // of A's fragment; for each j, mma_tf32(acc[j], a, v0[j + p], v1[j + p]).
  float acc[J][4] = {};
  for (int c = 0; c < C; ++c) {
    for (int p = 0; p < K; ++p) {
#pragma unroll
      for (int q = 0; q < K; ++q) {
        const int r = (c * K + p) * K + q;
        const float w_lo = A_s[g * CKK + r], w_hi = A_s[(g + 8) * CKK + r];  // maps m0 + g, m0 + g + 8
        const float* x = tile + c * Cfg::channel_stride + p * Cfg::cols + warp * 8 + 2 * t + q;
#pragma unroll
        for (int j = 0; j < J; ++j) {
          const float x0 = x[j * Cfg::cols], x1 = x[j * Cfg::cols + 1];  // columns 2t, 2t + 1
          acc[j][0] += w_lo * x0;
          acc[j][1] += w_lo * x1;
          acc[j][2] += w_hi * x0;
          acc[j][3] += w_hi * x1;
        }
      }
    }
  }
  (void)CK;

  // TODO(student): store the accumulators. Thread (g, t) holds, for output row h0 + j:
  //   acc[j][0], acc[j][1]: map m0 + g,     columns w0 + warp * 8 + 2t and 2t + 1
  //   acc[j][2], acc[j][3]: map m0 + g + 8, the same columns
  // (the D fragment of m16n8k8, the table at the top). Skip rows past H_out - 1, maps past M - 1
  // and columns past W_out - 1; when W_out is even the two columns are one aligned float2 store.
  // With the fp32 loops above this makes the kernel correct; then bring in the tensor cores.
  (void)acc;
  (void)output;
  (void)H_out;
  (void)W_out;
}

template <class Cfg>
void launch(float* output, const float* input, const float* mask, const labkit::ConvShape& s) {
  const std::size_t bytes = Cfg::shared_bytes(s.C);
  if (bytes > kMaxSharedBytes) {
    throw std::invalid_argument("12-tensor-cores: " + labkit::to_string(s) + " needs " + std::to_string(bytes) +
                                " bytes of shared memory per block (the weights and a tile of " +
                                std::to_string(s.C) + " channels); the limit is " + std::to_string(kMaxSharedBytes));
  }
  const int column_blocks = (s.W_out() + 8 * Cfg::WX - 1) / (8 * Cfg::WX);
  const int bands = (s.H_out() + Cfg::J - 1) / Cfg::J;
  const dim3 grid(bands * column_blocks, (s.M + kMapsPerTile - 1) / kMapsPerTile, s.B);
  tc_conv_kernel<Cfg><<<grid, Cfg::threads, bytes>>>(output, input, mask, s.M, s.C, s.H, s.W, column_blocks);
  LABKIT_CUDA_CHECK_LAUNCH();
}

void check_shape(const labkit::ConvShape& s) {
  labkit::require_grid_limits(s, "12-tensor-cores");  // images in grid.z
  labkit::require_int_indexing(s, "12-tensor-cores");
  if (s.K > 7) {
    throw std::invalid_argument("12-tensor-cores: masks up to 7 x 7 only (the kernel is unrolled per K), got " +
                                labkit::to_string(s));
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
}

// The timed region (Op Time).
void labkit::conv_forward_gpu(float* device_output, const float* device_input,
                              const float* device_mask, const ConvShape& shape) {
  check_shape(shape);
  float* o = device_output;
  const float* in = device_input;
  const float* w = device_mask;
  switch (shape.K) {
    case 1: launch<Config<1, 8, 4>>(o, in, w, shape); break;
    case 2: launch<Config<2, 8, 4>>(o, in, w, shape); break;
    case 3: launch<Config<3, 8, 4>>(o, in, w, shape); break;
    case 4: launch<Config<4, 8, 4>>(o, in, w, shape); break;
    case 5: launch<Config<5, 8, 4>>(o, in, w, shape); break;
    case 6: launch<Config<6, 8, 4>>(o, in, w, shape); break;
    default:  // K = 7: conv1 (M 4) and conv2 (M 16) get their own tiles
      if (shape.M <= 8 && shape.W_out() >= 40) launch<Config<7, 16, 5>>(o, in, w, shape);
      else if (shape.W_out() >= 24) launch<Config<7, 17, 5>>(o, in, w, shape);
      else launch<Config<7, 8, 4>>(o, in, w, shape);
      break;
  }
}

void labkit::conv_forward_gpu_epilog(float* host_output, float* device_output, float* device_input,
                                     float* device_mask, const ConvShape& shape) {
  standard_epilog(host_output, device_output, device_input, device_mask, shape);
}
