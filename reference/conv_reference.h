// conv_reference.h — the ground truth for every conv lab.
//
// Contract
//   * Same layout as labkit/conv.h: input [B][C][H][W], mask [M][C][K][K], output
//     [B][M][H-K+1][W-K+1]; stride 1, no padding, no bias.
//   * Products and sums are formed in double; the output is double. Summation order is fixed
//     (c, then p, then q), so the CPU result is bit-for-bit reproducible for any thread count.
//   * conv_forward_cpu: multithreaded over (b, m) planes; conv2 at batch 1000 (3.6 G MACs) takes
//     about a second on 2 cores.
//   * conv_forward_gpu_fp64: same arithmetic on the GPU, for batches too large for the CPU
//     (device pointers; synchronous on `stream`). Agrees with the CPU one bit for bit: the product
//     of two floats is exact in double, so fma contraction cannot change it, and the additions
//     happen in the same order. (Tests allow 1e-12 relative.)
#pragma once

#include <cuda_runtime_api.h>

#include <span>
#include <vector>

#include "labkit/conv.h"

namespace labkit::reference {

// Throws std::invalid_argument naming the shape if shape is not valid() or a span's size does
// not match the shape.
void conv_forward_cpu(std::span<double> output, std::span<const float> input,
                      std::span<const float> mask, const ConvShape& shape, unsigned threads = 0);

// Device pointers. Throws std::invalid_argument for an invalid shape, labkit::CudaError on a
// CUDA failure (the launch and the kernel itself: it synchronizes `stream`).
void conv_forward_gpu_fp64(double* device_output, const float* device_input,
                           const float* device_mask, const ConvShape& shape,
                           cudaStream_t stream = nullptr);

// Host arrays in, host result out, through the GPU fp64 kernel (for the grader and the tools,
// which hold their data on the host). conv_reference_gpu is the expected output;
// conv_error_scale_gpu is, per output element, the sum of |x * w| over its C*K*K terms (the
// reference conv of |input| and |mask|): the scale of that element's rounding error, which the
// grader's tolerance (grader/judge/check.h) multiplies.
std::vector<double> conv_reference_gpu(const ConvShape& shape, std::span<const float> input,
                                       std::span<const float> mask);
std::vector<double> conv_error_scale_gpu(const ConvShape& shape, std::span<const float> input,
                                         std::span<const float> mask);

}  // namespace labkit::reference
