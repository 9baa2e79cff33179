#include "grader/harness/conv_run.h"

#include <algorithm>
#include <cstring>
#include <new>
#include <stdexcept>

#include "grader/protocol/host_pages.h"
#include "labkit/cuda_check.h"
#include "grader/core/pinned_range.h"
#include "grader/core/event_timer.h"
#include "grader/core/phase.h"

namespace labkit {
namespace {

bool device_equals(const float* device, std::span<const float> host) {
  std::vector<float> back(host.size());
  LABKIT_CUDA_CHECK(cudaMemcpy(back.data(), device, host.size_bytes(), cudaMemcpyDeviceToHost));
  return std::memcmp(back.data(), host.data(), host.size_bytes()) == 0;
}

bool host_equals(const float* a, std::span<const float> b) {
  return std::memcmp(a, b.data(), b.size_bytes()) == 0;
}

void check_sizes(const ConvShape& shape, std::span<const float> input, std::span<const float> mask) {
  if (!shape.valid() || input.size() != shape.input_size() || mask.size() != shape.mask_size())
    throw std::invalid_argument("conv run: input/mask sizes do not match " + to_string(shape));
}

}  // namespace

namespace {
std::unique_ptr<fresh::AnonymousArray<float>> populated_pages(std::size_t n) {
  auto pages = std::make_unique<fresh::AnonymousArray<float>>(std::max<std::size_t>(n, 1));
  fresh::populate(pages->data(), pages->bytes());
  return pages;
}
}  // namespace

// Pinned: anonymous memory (2 MiB pages where the kernel allows them), its pages made on several
// threads, then page-locked by cudaHostRegister. For conv1's 1.3 GB at batch 10000 cudaMallocHost
// took 0.63 s on an H100 host; registering memory already resident took 6 ms for 0.3 GB. Where
// registering fails, cudaMallocHost.
HostArray::HostArray(std::size_t n, HostMemory kind) : n_(n), kind_(kind) {
  if (kind == HostMemory::pageable) {
    data_ = new float[std::max<std::size_t>(n, 1)];
    return;
  }
  adopt(populated_pages(n));
}

HostArray::HostArray(std::unique_ptr<fresh::AnonymousArray<float>> pages)
    : n_(pages->span().size()), kind_(HostMemory::pinned) {
  adopt(std::move(pages));
}

void HostArray::adopt(std::unique_ptr<fresh::AnonymousArray<float>> pages) {
  PinnedRange pin(pages->data(), pages->bytes());
  if (pin.pinned()) {
    data_ = pages->data();
    mapped_ = std::move(pages);
    pin_ = std::move(pin);
    return;
  }
  LABKIT_CUDA_CHECK(cudaMallocHost(reinterpret_cast<void**>(&data_), std::max<std::size_t>(n_, 1) * sizeof(float)));
}

HostArray::~HostArray() {
  if (mapped_) {
    pin_ = PinnedRange();  // unregistered before the mapping goes
    mapped_.reset();
  } else if (kind_ == HostMemory::pinned) {
    cudaFreeHost(data_);
  } else {
    delete[] data_;
  }
}

ConvRunResult run_conv_checked(const ConvOps& ops, const ConvShape& shape,
                               std::span<const float> input, std::span<const float> mask,
                               HostMemory host_memory) {
  check_sizes(shape, input, mask);
  HostArray in(input.size(), host_memory), msk(mask.size(), host_memory),
      out(shape.output_size(), host_memory);
  std::copy(input.begin(), input.end(), in.data());
  std::copy(mask.begin(), mask.end(), msk.data());
  std::memset(out.data(), 0xFF, shape.output_size() * sizeof(float));

  ConvRunResult r;
  float *d_out = nullptr, *d_in = nullptr, *d_mask = nullptr;
  set_phase("conv_forward_gpu_prolog");
  ops.prolog(out.data(), in.data(), msk.data(), &d_out, &d_in, &d_mask, shape);
  set_phase("the kit's poisoning of the output (after prolog)");
  if (!d_out || !d_in || !d_mask)
    throw std::invalid_argument("conv_forward_gpu_prolog left a device pointer null");
  LABKIT_CUDA_CHECK(cudaMemset(d_out, 0xFF, shape.output_size() * sizeof(float)));
  LABKIT_CUDA_CHECK(cudaDeviceSynchronize());
  // Copies the prolog left running on its streams are complete after the synchronize.
  set_phase("the kit's check of the device input and mask (after prolog)");
  r.input_on_device = device_equals(d_in, input) && device_equals(d_mask, mask);
  set_phase("conv_forward_gpu");
  ops.forward(d_out, d_in, d_mask, shape);
  LABKIT_CUDA_CHECK(cudaDeviceSynchronize());
  set_phase("the kit's check of the device input and mask (after conv_forward_gpu)");
  r.input_unchanged = device_equals(d_in, input);
  r.mask_unchanged = device_equals(d_mask, mask);
  set_phase("conv_forward_gpu_epilog");
  ops.epilog(out.data(), d_out, d_in, d_mask, shape);
  r.output.assign(out.data(), out.data() + shape.output_size());
  LABKIT_CUDA_CHECK(cudaDeviceSynchronize());
  set_phase("the kit's checks (after epilog)");
  r.host_input_unchanged = host_equals(in.data(), input);
  r.host_mask_unchanged = host_equals(msk.data(), mask);
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

}  // namespace labkit
