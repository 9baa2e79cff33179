// device_ops.h — the harness's own kernels: the output digest, fresh device data (grader/protocol/
// fresh.h defines both functions; the judge recomputes them on the host) and the refill of a timed
// request's input.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string_view>

namespace labkit::harness {

// The names CUPTI gives the harness's own kernels (extern "C", so unmangled). They run on the legacy
// stream and are synchronized before a timed window opens (the refill) or start after it closes
// (the digest), yet CUPTI's GPU timestamps, converted to the host's clock, can put a record's edge
// a little inside the window (seen once, in one of the ~100 timed calls of one grade of the 12
// solution on an H200): the window leaves out a kit kernel that reaches past its edge
// (timed_window.cpp).
inline constexpr std::array<std::string_view, 3> kKitKernels{"labkit_harness_fill", "labkit_harness_digest",
                                                             "labkit_harness_digest_half"};
bool is_kit_kernel(std::string_view name);

// The bytes from `device` to the end of the device allocation it points into, at most `want`
// (the driver's cuMemGetAddressRange): a lab's own buffer may be smaller than the kit's layout
// (fp16: half the bytes), or freed, or not device memory; 0 for null or a pointer the driver
// does not know. Without the driver entry point (an old driver): `want`.
std::size_t device_extent(const void* device, std::size_t want);

// The lab's device output poisoned (every byte 0xFF) as far as its allocation reaches, at most n
// floats, synchronously on the legacy stream; a failure means the buffer holds less and is
// cleared, not reported. Returns the bytes poisoned.
std::size_t poison_device_output(float* device, std::size_t n);

// Copies the floats of `device` into dst as far as its allocation reaches; the rest of dst (all
// of it for null) is left 0xFF bytes, a NaN no copy of real data matches. Returns bytes copied.
std::size_t copy_device_clamped(float* dst, std::size_t n, const float* device);

// Sum of fresh::digest_term over n floats at `device`, synchronously. A device output whose
// allocation holds at least 2n but fewer than 4n bytes is read as n halves, each widened to float
// (a lab's fp16 output buffer: its epilog's exact conversion to float then has the same digest).
std::uint64_t device_digest(const float* device, std::size_t n);
// device[i] = fresh::fresh_value(seed, i, lo, hi) for i < n, synchronously.
void device_fill(float* device, std::size_t n, std::uint64_t seed, float lo, float hi);
// The same, enqueued on the legacy default stream; the caller synchronizes.
void enqueue_fill(float* device, std::size_t n, std::uint64_t seed, float lo, float hi);

// The refill of an Op Time request (conv_ops.cpp, "run"), synchronously on the legacy stream:
// input[i] = fresh_value(seed, i, lo, hi), then every byte of output 0xFF, each as far as the lab's
// allocation reaches (device_extent: a smaller buffer is not written past). The judge times the
// same function on its own buffers (network_case.cpp) to know what a request spends on it.
void refill(float* input, std::size_t input_n, std::uint64_t seed, float lo, float hi, float* output,
            std::size_t output_n);

}  // namespace labkit::harness
