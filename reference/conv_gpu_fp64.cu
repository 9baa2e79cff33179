// conv_gpu_fp64.cu — the double-precision reference convolution on the GPU (conv_reference.h).
//
// Same arithmetic as conv_cpu.cpp: products of two floats formed in double (exact), added in the
// order c, p, q, so the result is bit-for-bit the CPU one. Used where the CPU is too slow: the
// grader's batch-10000 checks and the large GPU tests. Speed does not matter here; clarity and
// range do: one thread per output element over a 1-D grid-stride loop with 64-bit indices, which
// covers any batch (conv2 at batch 10000 has 185 M outputs; B * M would overflow grid.z).
#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

#include "labkit/cuda_check.h"
#include "grader/core/device_buffer.h"
#include "reference/conv_reference.h"

namespace labkit::reference {
namespace {

__global__ void conv_fp64_kernel(double* output, const float* input, const float* mask,
                                 ConvShape s) {
  const std::size_t H_out = s.H_out(), W_out = s.W_out();
  const std::size_t C = s.C, H = s.H, W = s.W, K = s.K, M = s.M;
  const std::size_t total = s.output_size();

  for (std::size_t i = std::size_t(blockIdx.x) * blockDim.x + threadIdx.x; i < total;
       i += std::size_t(gridDim.x) * blockDim.x) {
    // i = ((b * M + m) * H_out + h) * W_out + w
    const std::size_t w = i % W_out;
    const std::size_t h = (i / W_out) % H_out;
    const std::size_t m = (i / (W_out * H_out)) % M;
    const std::size_t b = i / (W_out * H_out * M);

    double acc = 0.0;
    for (std::size_t c = 0; c < C; ++c) {
      const float* in_c = input + (b * C + c) * H * W;  // input[b][c][.][.]
      const float* mask_mc = mask + (m * C + c) * K * K;  // mask[m][c][.][.]
      for (std::size_t p = 0; p < K; ++p) {
        for (std::size_t q = 0; q < K; ++q) {
          acc += double(mask_mc[p * K + q]) * double(in_c[(h + p) * W + (w + q)]);
        }
      }
    }
    output[i] = acc;
  }
}

}  // namespace

void conv_forward_gpu_fp64(double* device_output, const float* device_input,
                           const float* device_mask, const ConvShape& shape, cudaStream_t stream) {
  if (!shape.valid()) {
    throw std::invalid_argument("conv_forward_gpu_fp64: invalid shape " + to_string(shape));
  }
  constexpr unsigned kBlock = 256;
  // Enough blocks to fill any current GPU many times over; the grid-stride loop does the rest.
  constexpr std::size_t kMaxBlocks = 65536;
  const std::size_t blocks = std::min(kMaxBlocks, (shape.output_size() + kBlock - 1) / kBlock);
  conv_fp64_kernel<<<static_cast<unsigned>(blocks), kBlock, 0, stream>>>(
      device_output, device_input, device_mask, shape);
  LABKIT_CUDA_CHECK_LAUNCH();
  // Synchronous by contract: errors inside the kernel (e.g. a bad pointer) surface here.
  LABKIT_CUDA_CHECK(cudaStreamSynchronize(stream));
}

std::vector<double> conv_reference_gpu(const ConvShape& shape, std::span<const float> input,
                                       std::span<const float> mask) {
  if (!shape.valid() || input.size() != shape.input_size() || mask.size() != shape.mask_size())
    throw std::invalid_argument("conv_reference_gpu: input/mask sizes do not match " + to_string(shape));
  DeviceBuffer<float> d_in(input.size()), d_mask(mask.size());
  DeviceBuffer<double> d_out(shape.output_size());
  d_in.upload(input);
  d_mask.upload(mask);
  conv_forward_gpu_fp64(d_out.get(), d_in.get(), d_mask.get(), shape);
  return d_out.download();
}

std::vector<double> conv_error_scale_gpu(const ConvShape& shape, std::span<const float> input,
                                         std::span<const float> mask) {
  std::vector<float> abs_in(input.begin(), input.end()), abs_mask(mask.begin(), mask.end());
  for (float& v : abs_in) v = std::fabs(v);
  for (float& v : abs_mask) v = std::fabs(v);
  return conv_reference_gpu(shape, abs_in, abs_mask);
}

}  // namespace labkit::reference
