// device_ops.h — the harness's own kernels: the output digest and fresh device data
// (grader/protocol/fresh.h defines both functions; the judge recomputes them on the host).
#pragma once

#include <cstddef>
#include <cstdint>

namespace labkit::harness {

// Sum of fresh::digest_term over n floats at `device`, synchronously.
std::uint64_t device_digest(const float* device, std::size_t n);
// device[i] = fresh::fresh_value(seed, i, lo, hi) for i < n, synchronously.
void device_fill(float* device, std::size_t n, std::uint64_t seed, float lo, float hi);
// The same, enqueued on the legacy default stream; the caller synchronizes.
void enqueue_fill(float* device, std::size_t n, std::uint64_t seed, float lo, float hi);

}  // namespace labkit::harness
