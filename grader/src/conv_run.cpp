#include "labkit/conv_run.h"

#include <algorithm>
#include <cstring>
#include <stdexcept>

#include "labkit/cuda_check.h"
#include "labkit/event_timer.h"

namespace labkit {
namespace {

bool device_equals(const float* device, std::span<const float> host) {
  std::vector<float> back(host.size());
  LABKIT_CUDA_CHECK(cudaMemcpy(back.data(), device, host.size_bytes(), cudaMemcpyDeviceToHost));
  return std::memcmp(back.data(), host.data(), host.size_bytes()) == 0;
}

void check_sizes(const ConvShape& shape, std::span<const float> input, std::span<const float> mask) {
  if (!shape.valid() || input.size() != shape.input_size() || mask.size() != shape.mask_size())
    throw std::invalid_argument("conv run: input/mask sizes do not match " + to_string(shape));
}

}  // namespace

ConvRunResult run_conv_checked(const ConvOps& ops, const ConvShape& shape,
                               std::span<const float> input, std::span<const float> mask) {
  check_sizes(shape, input, mask);
  ConvRunResult r;
  r.output.assign(shape.output_size(), 0.0f);
  float *d_out = nullptr, *d_in = nullptr, *d_mask = nullptr;
  ops.prolog(r.output.data(), input.data(), mask.data(), &d_out, &d_in, &d_mask, shape);
  LABKIT_CUDA_CHECK(cudaMemset(d_out, 0xFF, shape.output_size() * sizeof(float)));
  ops.forward(d_out, d_in, d_mask, shape);
  LABKIT_CUDA_CHECK(cudaDeviceSynchronize());
  r.input_unchanged = device_equals(d_in, input);
  r.mask_unchanged = device_equals(d_mask, mask);
  ops.epilog(r.output.data(), d_out, d_in, d_mask, shape);
  LABKIT_CUDA_CHECK(cudaDeviceSynchronize());
  return r;
}

std::vector<double> time_conv_forward(const ConvOps& ops, const ConvShape& shape,
                                      std::span<const float> input, std::span<const float> mask,
                                      int warmup, int samples, L2Flush& flush) {
  check_sizes(shape, input, mask);
  std::vector<float> host_out(shape.output_size());
  float *d_out = nullptr, *d_in = nullptr, *d_mask = nullptr;
  ops.prolog(host_out.data(), input.data(), mask.data(), &d_out, &d_in, &d_mask, shape);
  const std::vector<double> ms = time_samples(
      warmup, samples, [&] { flush(); }, [&] { ops.forward(d_out, d_in, d_mask, shape); });
  ops.epilog(host_out.data(), d_out, d_in, d_mask, shape);
  return ms;
}

double median(std::vector<double> v) {
  if (v.empty()) return 0;
  auto mid = v.begin() + v.size() / 2;
  std::nth_element(v.begin(), mid, v.end());
  if (v.size() % 2) return *mid;
  return (*mid + *std::max_element(v.begin(), mid)) / 2;
}

}  // namespace labkit
