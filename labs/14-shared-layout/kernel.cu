// 14-shared-layout — your kernel. Read README.md in this folder first.
//
// A shared-memory tiled conv with a register row window, complete but for its store:
//   * a block computes a 16-row x 8-column patch of image b's output planes for MB = 4 * MG maps
//     (MG = 1, 2 or 4 from M). It stages the maps' weights in w_s and the input patch, halo
//     included (16 + K - 1 rows x 8 + K - 1 columns per channel), in `tile`, then one barrier;
//   * a warp is 8 tile rows x 4 map groups: lane l computes output row 8w + l % 8 (w = its warp in
//     the block) for map group l / 8, 8 columns of it. For each (c, p) it reads its window row
//     x[0 .. 8 + K - 2] from the tile once, then does MG * 8 * K multiply-adds from registers;
//   * where a tile cell lives is decided in one place, TileLayout: at(c, r, col) is its offset,
//     make() the pitch and plane that size the tile. As given, every row is padded to a multiple
//     of 32 floats (128 bytes): tidy, and the worst layout this read pattern can meet.
// Your two steps (README): 1. store the outputs (the TODO at the end of the kernel): the kernel is
// then correct, and its grade shows the bank conflicts; 2. change TileLayout so that the 8 rows a
// warp reads at once fall in 8 different banks.
// Grade it with:  meson test -C build 14-shared-layout --verbose
//
// Indexing, once: input is [B][C][H][W], mask [M][C][K][K], output [B][M][H_out][W_out], all
// float32 in C order, H_out = H - K + 1, W_out = W - K + 1. out(b, m, h, w) = sum over c, p, q of
// in(b, c, h + p, w + q) * mask(m, c, p, q). Tile cell (c, r, col) holds in(b, c, h0 + r, w0 + col)
// (0 past the input's edge), where (h0, w0) is the block's first output pixel;
// w_s[((c * K + p) * K + q) * MB + i] = mask(m0 + i, c, p, q), 0 for a map past M - 1.
#include <stdexcept>
#include <string>

#include "labkit/conv.h"
#include "labkit/conv_buffers.h"
#include "labkit/conv_limits.h"
#include "labkit/cuda_check.h"

namespace {

constexpr int kRows = 8;     // tile rows one warp reads at once: lane % 8
constexpr int kGroups = 4;   // map groups of a warp: lane / 8
constexpr int kWarps = 2;    // warps of a block, stacked: a block computes kWarps * kRows output rows
constexpr int RP = 8;        // output columns per thread (the patch's width)
constexpr int kPatchRows = kRows * kWarps;
constexpr int kThreads = 32 * kWarps;
constexpr int kMaxSharedBytes = 48 * 1024;  // what any block may use without an opt-in

// Where cell (c, r, col) of the input patch lives in the tile. Every access to the tile goes through
// at(): the fill and the window reads; make() sizes it (C planes of `plane` floats).
// TODO(student): a layout without bank conflicts for the window reads. A warp reads column j of 8
// consecutive rows at once (lane l: row l % 8): their banks are (r * pitch + j) mod 32, and with a
// pitch that is a multiple of 32 they are all the same bank. Pad the pitch (README: which pitches work)
// or swizzle the column in at() (then keep every column inside its row, and make() large enough).
struct TileLayout {
  int pitch;  // floats from row r to row r + 1 of one channel
  int plane;  // floats from channel c to channel c + 1
  static TileLayout make(int rows, int cols) {
    const int pitch = (cols + 31) / 32 * 32;  // each row starts on a 128-byte boundary
    return {pitch, rows * pitch};
  }
  __device__ int at(int c, int r, int col) const { return c * plane + r * pitch + col; }
};

// One block: a kPatchRows x RP patch of image b's output planes, for the MB = 4 * MG maps of group
// blockIdx.y. K is a template parameter so that the window row x[] and the accumulators stay in
// registers (every loop over them unrolled).
template <int K, int MG>
__global__ void __launch_bounds__(kThreads)
    conv_layout_kernel(float* __restrict__ output, const float* __restrict__ input,
                       const float* __restrict__ mask, const int M, const int C, const int H,
                       const int W, const int tiles_w, const TileLayout layout) {
  constexpr int MB = kGroups * MG;          // maps of the block
  constexpr int TR = kPatchRows + K - 1;    // tile rows, halo included
  constexpr int TC = RP + K - 1;            // tile columns, halo included
  extern __shared__ float smem[];
  float* w_s = smem;                        // [C*K*K][MB]: the block's weights, maps side by side
  float* tile = smem + C * K * K * MB;      // the input patch, as `layout` places it
  const int H_out = H - K + 1, W_out = W - K + 1;
  const int b = blockIdx.z;
  const int m0 = blockIdx.y * MB;
  const int h0 = (blockIdx.x / tiles_w) * kPatchRows;
  const int w0 = (blockIdx.x % tiles_w) * RP;

  const int CKK = C * K * K;
  for (int i = threadIdx.x; i < CKK * MB; i += kThreads) {
    const int mb = i % MB, ckk = i / MB;
    w_s[i] = (m0 + mb < M) ? mask[std::size_t(m0 + mb) * CKK + ckk] : 0.0f;
  }
  const float* in_b = input + std::size_t(b) * C * H * W;
  for (int i = threadIdx.x; i < C * TR * TC; i += kThreads) {
    const int col = i % TC, r = (i / TC) % TR, c = i / (TC * TR);
    const int h = h0 + r, w = w0 + col;
    tile[layout.at(c, r, col)] = (h < H && w < W) ? in_b[(std::size_t(c) * H + h) * W + w] : 0.0f;
  }
  __syncthreads();  // the whole tile and every weight are in place before anyone reads them

  const int lane = threadIdx.x % 32;
  const int row = (threadIdx.x / 32) * kRows + lane % kRows;  // the thread's output row in the patch
  const int grp = lane / kRows;                               // and its map group
  float acc[MG][RP] = {};
  for (int c = 0; c < C; ++c) {
#pragma unroll
    for (int p = 0; p < K; ++p) {
      float x[RP + K - 1];  // the window row: the same 8 rows x this j across the warp
#pragma unroll
      for (int j = 0; j < RP + K - 1; ++j) x[j] = tile[layout.at(c, row + p, j)];
      const float* wp = w_s + (c * K + p) * K * MB + grp * MG;
#pragma unroll
      for (int q = 0; q < K; ++q) {
#pragma unroll
        for (int g = 0; g < MG; ++g) {
          const float wv = wp[q * MB + g];
#pragma unroll
          for (int j = 0; j < RP; ++j) acc[g][j] = fmaf(x[j + q], wv, acc[g][j]);
        }
      }
    }
  }

  // TODO(student): store the outputs. acc[g][j] is map m0 + grp * MG + g, pixel (h0 + row, w0 + j):
  // it belongs at output[((b * M + m) * H_out + h) * W_out + w] for every map m < M, row h < H_out
  // and column w < W_out (the patch's last rows and columns may lie past the plane). With the
  // store the kernel is correct, and as slow as its layout makes it.
  (void)acc;
  (void)output;
  (void)H_out;
  (void)W_out;
  (void)b;
}

template <int K, int MG>
void launch(float* output, const float* input, const float* mask, const labkit::ConvShape& s) {
  constexpr int MB = kGroups * MG;
  const TileLayout layout = TileLayout::make(kPatchRows + K - 1, RP + K - 1);
  const std::size_t bytes = (std::size_t(s.C) * K * K * MB + std::size_t(s.C) * layout.plane) * sizeof(float);
  if (bytes > kMaxSharedBytes) {
    throw std::invalid_argument("14-shared-layout: " + labkit::to_string(s) + " needs " + std::to_string(bytes) +
                                " bytes of shared memory per block (C = " + std::to_string(s.C) +
                                " channels of the tile and of " + std::to_string(MB) +
                                " maps' weights); the limit is " + std::to_string(kMaxSharedBytes));
  }
  const int tiles_w = (s.W_out() + RP - 1) / RP;
  const int tiles_h = (s.H_out() + kPatchRows - 1) / kPatchRows;
  const dim3 grid(tiles_w * tiles_h, (s.M + MB - 1) / MB, s.B);
  conv_layout_kernel<K, MG><<<grid, kThreads, bytes>>>(output, input, mask, s.M, s.C, s.H, s.W, tiles_w, layout);
  LABKIT_CUDA_CHECK_LAUNCH();
}

// The map group from M (4, 8 or 16 maps a block), for one K.
template <int K>
void launch_k(float* output, const float* input, const float* mask, const labkit::ConvShape& s) {
  if (s.M <= 4) {
    launch<K, 1>(output, input, mask, s);
  } else if (s.M <= 8) {
    launch<K, 2>(output, input, mask, s);
  } else {
    launch<K, 4>(output, input, mask, s);  // M > 16: several groups along grid.y
  }
}

void check_shape(const labkit::ConvShape& s) {
  labkit::require_grid_limits(s, "14-shared-layout", /*check_maps=*/false);
  labkit::require_int_indexing(s, "14-shared-layout");
  if (s.K != 1 && s.K != 3 && s.K != 5 && s.K != 7) {
    throw std::invalid_argument("14-shared-layout: " + labkit::to_string(s) +
                                ": K must be 1, 3, 5 or 7 (the kernel is instantiated for those)");
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

void labkit::conv_forward_gpu(float* device_output, const float* device_input,
                              const float* device_mask, const ConvShape& shape) {
  check_shape(shape);
  switch (shape.K) {
    case 1: launch_k<1>(device_output, device_input, device_mask, shape); break;
    case 3: launch_k<3>(device_output, device_input, device_mask, shape); break;
    case 5: launch_k<5>(device_output, device_input, device_mask, shape); break;
    default: launch_k<7>(device_output, device_input, device_mask, shape); break;
  }
}

void labkit::conv_forward_gpu_epilog(float* host_output, float* device_output, float* device_input,
                                     float* device_mask, const ConvShape& shape) {
  standard_epilog(host_output, device_output, device_input, device_mask, shape);
}
