// warpgroup_mma.cuh — conv2's kernel on Hopper's warpgroup MMA (wgmma.mma_async, sm_90a only):
// pixels in the MMA's m dimension, the 16 maps in n. tensor_cores.cuh runs it for the network's
// conv2 shape (M = 16, C = 4, 40 x 40, K = 7) when the GPU runs sm_90a code (available()), and
// maps_mma.cuh everywhere else.
//
// Why a second conv2 kernel. maps_mma.cuh issues mma.sync: one warp, a 16 x 8 x 8 product per
// instruction, and its warps wait on each MMA's fixed latency (ncu on an H200: tensor pipe 41%
// busy, 2.4 warps a scheduler). wgmma is Hopper's own tensor-core instruction: the 4 warps of a
// warpgroup issue a 64 x 16 x 8 product together, asynchronously, with B read straight from
// shared memory. Each warp issues one instruction where mma.sync needed two, and it loads the next
// channel's operands while the tensor cores work.
//
// The implicit GEMM, out[pixel][n] = sum_k A[pixel][k] * B[k][n]:
//   * a step is one (channel c, mask row p); its 8 k slots are input columns w .. w + 7 of the
//     row's pixel (h, w), so 28 steps of k8 cover conv2's C*K*K = 196;
//   * two column shifts share A (TC_WG_SHIFTS 2, the default): column n of B is map n / 2 at
//     shift n % 2, B[k][n] = mask[n / 2][c][p][k - n % 2] (zero where k - n % 2 is not a mask
//     column), so one MMA row computes pixels (h, w) and (h, w + 1) of all 16 maps: m64n32k8, and
//     every slot holds a real input (shift 0 leaves slot 7 to shift 1's mask column 6). Against
//     one shift (n = 16: slot 7 padding, A = 0) an output takes half the A loads and half the
//     instructions, for the same tensor work;
//   * A (64 pixels x 8 slots) comes from registers, in mma.m16n8k8's A layout per warp: warp w
//     holds rows 16w .. 16w + 15, lane (g, t) = (lane / 4, lane % 4) holds
//       a0 = A[g][t]  a1 = A[g + 8][t]  a2 = A[g][t + 4]  a3 = A[g + 8][t + 4];
//   * row g + 8's pixel is right under row g's (output rows h and h + 1, one column), so A[g + 8]
//     at mask row p reads the input row that A[g] reads at mask row p + 1: a lane loads input
//     rows h .. h + K of its column once per channel (8 rows x slots t, t + 4) and each step of
//     the channel takes a0/a2 and a1/a3 from two consecutive rows;
//   * B (8 slots x 32 columns, one step's weights) is staged once per block, rounded to tf32, in
//     wgmma's K-major layout without swizzle: "core matrices" of 8 columns x 4 slots (8 rows of 16
//     bytes), named by a 64-bit matrix descriptor per step (descriptor()).
// A unit is output rows h, h + 1 at columns w, w + 1 (one MMA row pair): an image has 17 x 17 =
// 289, 32 make a warpgroup tile, 10 tiles an image. A warp's 8 units run along a row pair and on
// into the next one; only the last tile's 31 spare units (10%) compute and are dropped. (With one
// shift: 578 units of one column, 19 tiles, 5% spare.)
//
// Block: TC_WG_GROUPS warpgroups share one image in shared memory (tiles group, group +
// TC_WG_GROUPS, ...), with the next image's copy (cp.async, 16 bytes a thread) in flight in a
// second buffer. Per block 28 KiB of B (14 with one shift) + 2 x 25 KiB of images. A
// warpgroup's tile: for each channel, wait until the group before last is done (its registers are
// reused), load the 16 values, issue 7 wgmmas as one group; then wait for all, store (two
// shifts: one 8-byte store of columns w, w + 1 per map and row). The stores of one warpgroup
// overlap the products of the others on the SM.
//
// Measured at batch 10000, NVIDIA H200, `labkit sweep 12-tensor-cores --solution --param
// TC_WG_SHIFTS=1,2 --batch 10000` (the judge's timing: events, L2 flushed, median; 2026-12-02):
//   one shift, n = 16 (94 registers)                      0.589 ms
//   two shifts, n = 32 (104 registers)                    0.444 ms (25% less; correct on all 14 cases)
// Before the shifts, at batch 10000 (a standalone driver, events, median of 20 after 5 warm-ups,
// L2 flushed by a 256 MiB memset; NVIDIA H100 80GB HBM3, same run), one shift throughout:
//   maps_mma.cuh                                          0.950 - 0.975 ms
//   this kernel, 2 warpgroups x 2 blocks an SM (94 regs)  0.585 - 0.601 ms
//     ... 1 warpgroup x 3 blocks                           0.622 - 0.625 ms
//     ... one image buffer: 2 warpgroups x 2 blocks        0.607 ms
//                           1 warpgroup x 4 / 5 blocks     0.740 / 0.747 ms
//     ... 2 tiles per warpgroup at once (158 regs)         0.659 - 0.719 ms
//     ... 2 accumulator chains a tile (channels 0-1, 2-3,
//         summed at the end; 154 regs, 1 warpgroup x 3)    0.657 ms
//     ... strips of 4 rows (two chains; 10 input rows a channel
//         feed 14 wgmmas: 37% fewer shared loads, 10% more
//         padding), 2 warpgroups x 1 block (154 regs)      0.609 ms
//         ... x 2 blocks, one channel's operands at a time
//         (102 regs) / 1 warpgroup x 3 blocks (154 regs)   0.746 / 0.814 ms
//     ... one channel's operands at a time (wait for all before reloading; 66 regs, 2 or 3
//         blocks)                                           0.707 - 0.709 ms
//     ... output stores with st.global.cs (evict first)    0.605 - 0.609 ms (0.586 - 0.590 plain)
//     ... the next tile's products issued before the last
//         tile's stores (two accumulator sets)             0.79 ms: ptxas serializes the wgmmas
//         (C7514: the stores read accumulators inside what it takes for the pipeline stage)
// Nsight Compute at batch 10000 on the H100 (--clock-control none), this kernel / maps_mma: 0.593 /
// 0.948 ms, tensor pipe (sm__pipe_tensor_op_hmma_cycles_active) 31.4% / 30.3%, issue slots
// 42.1% / 26.1% busy, warps active 23.4% / 15.6%, DRAM 50.0% / 34.8%, shared-load wavefronts
// 63.5 M / 28.8 M, instructions 228.5 M / 219.3 M. The warps are latency-bound; the 64 shared
// loads of A per lane and tile are the largest cost, but cutting them by a third with taller
// strips lost more to the registers it took. More registers or fewer warps lose.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>

#include "labkit/conv.h"
#include "labkit/cuda_check.h"
#include "maps_mma.cuh"

#ifndef TC_WG_GROUPS
#define TC_WG_GROUPS 2  // warpgroups per block
#endif
#ifndef TC_WG_BLOCKS
#define TC_WG_BLOCKS 2  // blocks per SM that __launch_bounds__ budgets registers for
#endif
#ifndef TC_WG_SHIFTS
#define TC_WG_SHIFTS 2  // output columns per MMA row: 2 (n = 32: 16 maps x 2 shifts) or 1 (n = 16 maps)
#endif

namespace warpgroup_mma {

constexpr int K = 7, C = 4, H = 40, W = 40, M = 16;  // the one shape this kernel is built for
constexpr int H_out = H - K + 1, W_out = W - K + 1;
constexpr int kSteps = C * K;         // (c, p) steps, 8 slots each
constexpr int kImage = C * H * W;     // floats of one input image
constexpr int kThreads = 128 * TC_WG_GROUPS;
static_assert(H_out % 2 == 0, "a unit's rows are output rows h, h + 1");
static_assert(W % 4 == 0 && kImage % 4 == 0, "the image travels as 16-byte copies");

// A kernel's shape for S column shifts (1 or 2): n = 16 S columns, map n / S at shift n % S.
template <int S>
struct Shifts {
  static_assert(S == 1 || S == 2, "one or two shifts");
  static_assert(S + K - 1 <= 8, "a shift's mask row fits the step's 8 slots");
  static_assert(W_out % S == 0, "a unit's columns w .. w + S - 1 stay in the row");
  static constexpr int N = 16 * S;                    // the MMA's n: maps x shifts
  static constexpr int kUnitsRow = W_out / S;         // units along a row pair
  static constexpr int kUnits = (H_out / 2) * kUnitsRow;  // an image's units: 578 (S = 1), 289 (S = 2)
  static constexpr int kTiles = (kUnits + 31) / 32;   // warpgroup tiles of 32 units: 19 (S = 1), 10 (S = 2)
  static constexpr int kStepFloats = 8 * N;           // B of one step: 8 slots x N columns
  static constexpr int kBFloats = kSteps * kStepFloats;
};

// B's layout: step s's 8 x N block is N / 8 x 2 core matrices, 128 bytes each, core (nb, kb)
// (columns 8nb .., slots 4kb ..) at byte s * 32 N + nb * kNStride + kb * kKStride; in it,
// column 8nb + r is row r (16 r bytes) and slot 4kb + e its element e.
constexpr int kKStride = 128, kNStride = 256;

inline bool is_conv2(const labkit::ConvShape& s) { return s.M == M && s.C == C && s.H == H && s.W == W && s.K == K; }

template <int S>
constexpr std::size_t shared_bytes() { return (std::size_t(Shifts<S>::kBFloats) + 2 * kImage) * sizeof(float); }

using maps_mma::to_tf32;  // fp32 -> tf32, rounded to nearest

// The shared-memory matrix descriptor (PTX ISA, "Matrix Descriptor Format"): start address,
// leading-dimension byte offset (between core matrices along k), stride-dimension byte offset
// (along n), each >> 4; base offset 0 and swizzle mode 0 (none) in the high bits.
__device__ __forceinline__ std::uint64_t descriptor(const float* smem) {
  const std::uint64_t a = static_cast<std::uint32_t>(__cvta_generic_to_shared(smem));
  return ((a & 0x3FFFF) >> 4) | (std::uint64_t(kKStride >> 4) << 16) | (std::uint64_t(kNStride >> 4) << 32);
}

// The compiler does not know that a wgmma in flight still reads its registers: this empty asm
// "uses" and "redefines" r after the wait, so r keeps its register, unchanged, until then.
__device__ __forceinline__ void hold(float& r) { asm volatile("" : "+f"(r)::"memory"); }

#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
// d += A (64 x 8, registers) * B (8 x 16, shared memory), issued by the whole warpgroup.
__device__ __forceinline__ void wgmma(float (&d)[8], float a0, float a1, float a2, float a3, std::uint64_t b) {
  asm volatile(
      "wgmma.mma_async.sync.aligned.m64n16k8.f32.tf32.tf32 "
      "{%0, %1, %2, %3, %4, %5, %6, %7}, {%8, %9, %10, %11}, %12, 1, 1, 1;"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7])
      : "r"(__float_as_uint(a0)), "r"(__float_as_uint(a1)), "r"(__float_as_uint(a2)), "r"(__float_as_uint(a3)),
        "l"(b));
}
// d += A (64 x 8, registers) * B (8 x 32, shared memory): the same with n = 32.
__device__ __forceinline__ void wgmma(float (&d)[16], float a0, float a1, float a2, float a3, std::uint64_t b) {
  asm volatile(
      "wgmma.mma_async.sync.aligned.m64n32k8.f32.tf32.tf32 "
      "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15}, {%16, %17, %18, %19}, %20, 1, 1, 1;"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]),
        "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15])
      : "r"(__float_as_uint(a0)), "r"(__float_as_uint(a1)), "r"(__float_as_uint(a2)), "r"(__float_as_uint(a3)),
        "l"(b));
}
#endif

// Image b into `tile` with 16-byte cp.async; nothing waits here.
__device__ __forceinline__ void fetch_image(float* tile, const float* input, int b) {
  const float* image = input + std::size_t(b) * kImage;
  for (int i = threadIdx.x; i < kImage / 4; i += kThreads) {
    const unsigned d = static_cast<unsigned>(__cvta_generic_to_shared(tile + 4 * i));
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" ::"r"(d), "l"(image + 4 * i));
  }
}

// A lane's input values for one channel: rows h .. h + K of its column, at slots t and t + 4.
struct Rows {
  float lo[K + 1], hi[K + 1];
};

// grid = blocks that fit on the GPU, each looping over images b = blockIdx.x, + gridDim.x, ...
template <int S>
__global__ void __launch_bounds__(kThreads, TC_WG_BLOCKS)
    conv2_kernel(float* __restrict__ output, const float* __restrict__ input, const float* __restrict__ mask, int B) {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
  using T = Shifts<S>;
  extern __shared__ __align__(128) float smem[];
  float* Bs = smem;                   // T::kBFloats
  float* tiles = smem + T::kBFloats;  // 2 x kImage
  const int tid = threadIdx.x, lane = tid % 32, warp = tid / 32 % 4, group = tid / 128;
  const int g = lane / 4, t = lane % 4;

  int b = blockIdx.x;
  if (b < B) fetch_image(tiles, input, b);
  asm volatile("cp.async.commit_group;");
  // B: step s = (c, p), slot k, column n = (map n / S, shift n % S): mask[map][c][p][k - shift],
  // zero where k - shift is not a mask column (slot 7 at shift 0, slot 0 at shift 1).
  for (int i = tid; i < T::kBFloats; i += kThreads) {
    const int e = i % 4, r = i / 4 % 8, core = i / 32 % (T::N / 4), s = i / T::kStepFloats;
    const int n = 8 * (core / 2) + r, k = 4 * (core % 2) + e, c = s / K, p = s % K;
    const int map = n / S, q = k - n % S;
    Bs[i] = q >= 0 && q < K ? to_tf32(mask[((map * C + c) * K + p) * K + q]) : 0.0f;
  }
  // wgmma reads B through the async proxy: make the ordinary stores above visible to it (the
  // first barrier below then publishes them).
  asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
  const std::uint64_t desc0 = descriptor(Bs);
  constexpr int plane = H_out * W_out;

  for (int buffer = 0; b < B; b += gridDim.x, buffer ^= 1) {
    const int next = b + gridDim.x;
    if (next < B) fetch_image(tiles + (buffer ^ 1) * kImage, input, next);
    asm volatile("cp.async.commit_group;");
    asm volatile("cp.async.wait_group 1;" ::: "memory");
    float* tile = tiles + buffer * kImage;
    for (int i = tid; i < kImage / 4; i += kThreads) {  // this thread's own copies, rounded to tf32
      float4& v = reinterpret_cast<float4*>(tile)[i];
      v = make_float4(to_tf32(v.x), to_tf32(v.y), to_tf32(v.z), to_tf32(v.w));
    }
    __syncthreads();

    for (int tile_i = group; tile_i < T::kTiles; tile_i += TC_WG_GROUPS) {
      // A unit: output rows h, h + 1 (MMA rows g, g + 8) at columns w .. w + S - 1 (the shifts).
      const int unit = tile_i * 32 + warp * 8 + g;
      const int uc = unit < T::kUnits ? unit : T::kUnits - 1;  // spare rows repeat the last unit, unstored
      const int h = 2 * (uc / T::kUnitsRow), w = S * (uc % T::kUnitsRow);
      const float* col = tile + h * W + w + t;
      // Channel c reads Rows rows[c % 2]: before reloading them for channel c, the group of
      // channel c - 2 must be done (wait_group 1: at most the group of channel c - 1 in flight).
      Rows rows[2];
      float d[T::N / 2] = {};
#pragma unroll
      for (int i = 0; i < T::N / 2; ++i) hold(d[i]);
#pragma unroll
      for (int c = 0; c < C; ++c) {
        Rows& v = rows[c % 2];
        if (c >= 2) {
          asm volatile("wgmma.wait_group.sync.aligned 1;" ::: "memory");
#pragma unroll
          for (int r = 0; r <= K; ++r) hold(v.lo[r]), hold(v.hi[r]);
        }
#pragma unroll
        for (int r = 0; r <= K; ++r) {
          v.lo[r] = col[c * H * W + r * W];
          // Slot 7 with one shift: A = 0, whatever lies there (column w + 7 may be past the row).
          // With two it is column w + 7 <= 39, shift 1's mask column 6.
          v.hi[r] = S == 2 || t + 4 < K ? col[c * H * W + r * W + 4] : 0.0f;
        }
        asm volatile("wgmma.fence.sync.aligned;" ::: "memory");  // registers written above, read below
#pragma unroll
        for (int p = 0; p < K; ++p)
          wgmma(d, v.lo[p], v.lo[p + 1], v.hi[p], v.hi[p + 1], desc0 + ((c * K + p) * T::kStepFloats * 4 >> 4));
        asm volatile("wgmma.commit_group.sync.aligned;" ::: "memory");
      }
      asm volatile("wgmma.wait_group.sync.aligned 0;" ::: "memory");
#pragma unroll
      for (int i = 0; i < T::N / 2; ++i) hold(d[i]);
#pragma unroll
      for (int s = 0; s < 2; ++s)
#pragma unroll
        for (int r = 0; r <= K; ++r) hold(rows[s].lo[r]), hold(rows[s].hi[r]);
      if (unit < T::kUnits) {
        // d[i]: MMA row g + 8 ((i / 2) % 2), i.e. output row h + (i / 2) % 2, column
        // n = 8 (i / 4) + 2t + i % 2, i.e. map n / S at column w + n % S.
        float* out = output + std::size_t(b) * M * plane + h * W_out + w;
        if constexpr (S == 1) {
#pragma unroll
          for (int i = 0; i < 8; ++i) out[(2 * t + i % 2 + 8 * (i / 4)) * plane + (i / 2 % 2) * W_out] = d[i];
        } else {  // d[i], d[i + 1] (i even): one map, columns w and w + 1, one 8-byte store
#pragma unroll
          for (int i = 0; i < 16; i += 2)
            *reinterpret_cast<float2*>(out + (4 * (i / 4) + t) * plane + (i / 2 % 2) * W_out) = make_float2(d[i], d[i + 1]);
        }
      }
    }
    __syncthreads();  // done with this buffer before the next iteration's copy refills it
  }
  asm volatile("cp.async.wait_all;" ::: "memory");
#else
  (void)output, (void)input, (void)mask, (void)B;
  __trap();  // no sm_90a code in this build: available() says so and the host never launches it
#endif
}

// Writes 1 when the code the GPU runs was built for sm_90a (wgmma), 0 otherwise.
__global__ void probe_kernel(int* out) {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
  *out = 1;
#else
  *out = 0;
#endif
}

// Blocks of conv2_kernel that fit on the GPU at once (blocks per SM x SMs); 0 until available().
inline int& slots() {
  static int n = 0;
  return n;
}

// Whether conv2_kernel can run here: the build embeds sm_90a code (lab.json "arch_specific") and
// the driver chose it for this GPU (an H100 or H200 does when the fatbin has it). Asked once, with
// a launch and a copy, and the kernel's launch settings made then: the solutions ask it first in
// their prolog (check_shape), outside the timed call.
inline bool available() {
  static int answer = -1;
  if (answer < 0) {
    int* flag = nullptr;
    int host = 0;
    LABKIT_CUDA_CHECK(cudaMalloc(&flag, sizeof(int)));
    probe_kernel<<<1, 1>>>(flag);
    LABKIT_CUDA_CHECK_LAUNCH();
    LABKIT_CUDA_CHECK(cudaMemcpy(&host, flag, sizeof(int), cudaMemcpyDeviceToHost));
    LABKIT_CUDA_CHECK(cudaFree(flag));
    if (host == 1) {
      int device = 0, sms = 0, per_sm = 0;
      LABKIT_CUDA_CHECK(cudaFuncSetAttribute(conv2_kernel<TC_WG_SHIFTS>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                             int(shared_bytes<TC_WG_SHIFTS>())));
      LABKIT_CUDA_CHECK(cudaGetDevice(&device));
      LABKIT_CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
      LABKIT_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, conv2_kernel<TC_WG_SHIFTS>, kThreads,
                                                                    shared_bytes<TC_WG_SHIFTS>()));
      slots() = std::max(1, per_sm) * sms;
    }
    answer = host;
  }
  return answer == 1;
}

// conv2 (is_conv2(s)) on the default stream; only after available() said true.
inline void launch(float* output, const float* input, const float* mask, const labkit::ConvShape& s) {
  conv2_kernel<TC_WG_SHIFTS><<<unsigned(std::min(s.B, slots())), kThreads, shared_bytes<TC_WG_SHIFTS>()>>>(output, input, mask, s.B);
  LABKIT_CUDA_CHECK_LAUNCH();
}

}  // namespace warpgroup_mma
