// device_ops.h — the harness's own kernels: the output digest, fresh device data (grader/protocol/
// fresh.h defines both functions; the judge recomputes them on the host) and the refill of a timed
// request's input.
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

// The refill of an Op Time request (conv_ops.cpp, "run"), synchronously on the legacy stream:
// input[i] = fresh_value(seed, i, lo, hi), then every byte of output 0xFF. The judge times the
// same function on its own buffers (network_case.cpp) to know what a request spends on it.
void refill(float* input, std::size_t input_n, std::uint64_t seed, float lo, float hi, float* output,
            std::size_t output_n);

}  // namespace labkit::harness
