// grader/judge/device.h — which GPU a number was measured on, and the L2 flush every timed sample
// starts from.
//
// Contract
//   * device_info() describes the current device; every table of times prints it.
//   * L2Flush owns a device buffer of twice the L2 size (queried, not assumed) and overwrites it
//     on a stream, so the next timed kernel reads its inputs from device memory, as it would
//     inside a real network where other layers ran in between. Without the flush, small batches
//     are served from L2 and look several times faster than they are.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <string>

namespace labkit {

struct DeviceInfo {
  int index = 0;
  std::string name;              // "NVIDIA H100 80GB HBM3"
  int cc_major = 0, cc_minor = 0;
  int sm_count = 0;
  std::size_t l2_bytes = 0;
  int peak_sm_clock_mhz = 0;     // the rated peak, not the clock at the moment of measurement
  int driver_version = 0;        // e.g. 13000 for 13.0
  int runtime_version = 0;
  // "NVIDIA H100 80GB HBM3 (sm_90, 132 SMs, L2 50 MiB, 1980 MHz peak, driver 13.0, runtime 13.0)"
  std::string summary() const;
};

DeviceInfo device_info();  // throws labkit::CudaError

class L2Flush {
 public:
  L2Flush();                 // allocates 2 x L2 bytes on the current device
  ~L2Flush();
  L2Flush(const L2Flush&) = delete;
  L2Flush& operator=(const L2Flush&) = delete;
  void operator()(cudaStream_t stream = nullptr);  // enqueue the overwrite on `stream`
  std::size_t bytes() const { return bytes_; }

 private:
  void* buffer_ = nullptr;
  std::size_t bytes_ = 0;
  unsigned char pattern_ = 0;  // changes every call, so the writes cannot be elided
};

}  // namespace labkit
