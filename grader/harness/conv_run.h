// grader/harness/conv_run.h — running a conv implementation's three phases on host data, checked.
//
// Contract
//   * run_conv_checked: the host output is poisoned (every byte 0xFF, a NaN pattern), prolog
//     runs, the device output is poisoned too so an element forward does not write cannot pass
//     by luck, then forward, a device sync, a read-back of the device input and mask (they must
//     be unchanged), then epilog. The host output is copied the moment epilog returns, before
//     the kit synchronizes anything: an epilog that returns before its copy finished shows up as
//     unwritten elements. The host input and mask are compared with the originals last.
//   * HostMemory::pinned gives page-locked host arrays (registered anonymous memory, or
//     cudaMallocHost where registering fails), as the kit does for layer-timed labs (copies from
//     pageable memory cannot overlap with kernels).
//   * time_conv_forward: Op Time samples in milliseconds, CUDA events around forward alone, the
//     L2 flushed before every sample, after `warmup` untimed calls. The output buffer is the
//     implementation's own, from its prolog.
//   * The current phase is published through grader/core/phase.h for the grader's watchdog.
//     CUDA failures and anything the phases throw propagate as exceptions.
#pragma once

#include <memory>
#include <span>
#include <vector>

#include "labkit/conv.h"
#include "grader/judge/device.h"
#include "grader/core/pinned_range.h"

namespace labkit {

namespace fresh {
template <class T>
class AnonymousArray;  // grader/protocol/host_pages.h
}

enum class HostMemory { pageable, pinned };

// Host arrays of floats, pageable or pinned; freed on destruction.
class HostArray {
 public:
  HostArray(std::size_t n, HostMemory kind);
  // Pinned, on pages already made (populated) by the caller, registered here: the harness makes
  // the network program's arrays while CUDA starts and registers them once it has.
  explicit HostArray(std::unique_ptr<fresh::AnonymousArray<float>> pages);
  ~HostArray();
  HostArray(const HostArray&) = delete;
  HostArray& operator=(const HostArray&) = delete;
  float* data() { return data_; }
  std::span<float> span() { return {data_, n_}; }
  std::span<const float> span() const { return {data_, n_}; }

 private:
  void adopt(std::unique_ptr<fresh::AnonymousArray<float>> pages);  // register, or cudaMallocHost
  float* data_ = nullptr;
  std::size_t n_ = 0;
  HostMemory kind_;
  std::unique_ptr<fresh::AnonymousArray<float>> mapped_;  // pinned: the kit's mapping, registered
  PinnedRange pin_;
};

struct ConvRunResult {
  std::vector<float> output;   // [B][M][H_out][W_out], as epilog delivered it
  bool input_on_device = false;       // device input and mask after prolog hold the host's
  bool input_unchanged = false;       // device input after forward
  bool mask_unchanged = false;        // device mask after forward
  bool host_input_unchanged = false;  // the host arrays the phases were given, at the end
  bool host_mask_unchanged = false;
};

ConvRunResult run_conv_checked(const ConvOps& ops, const ConvShape& shape,
                               std::span<const float> input, std::span<const float> mask,
                               HostMemory host_memory = HostMemory::pageable);

std::vector<double> time_conv_forward(const ConvOps& ops, const ConvShape& shape,
                                      std::span<const float> input, std::span<const float> mask,
                                      int warmup, int samples, L2Flush& flush);

}  // namespace labkit
