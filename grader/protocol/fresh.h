// grader/protocol/fresh.h — the data of timed calls, and the digest that seals an output.
//
// Contract
//   * fresh_value(seed, i, lo, hi): element i of a fresh input, uniform in [lo, hi), a pure
//     function of (seed, i) (a counter-based hash, no state). The harness fills a timed call's
//     whole input from a seed the judge picks per call; the judge recomputes any single element
//     it needs for checking without the rest. Same bits on host and device.
//   * digest_term(bits, i): one element's share of the output digest; the digest is the sum of
//     the terms over all elements modulo 2^64, so a parallel reduction in any order gives the same
//     value. The harness computes it on the device right after conv_forward_gpu and the device
//     synchronize; the judge recomputes it from the output it fetches later. Equal digests mean
//     the output it checks is the one that existed when the timed call ended.
#pragma once

#include <cstddef>
#include <cstdint>

#ifdef __CUDACC__
#define LABKIT_HD __host__ __device__
#else
#define LABKIT_HD
#endif

namespace labkit::fresh {

LABKIT_HD inline std::uint64_t mix64(std::uint64_t z) {
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

LABKIT_HD inline float fresh_value(std::uint64_t seed, std::size_t i, float lo, float hi) {
  const std::uint64_t r = mix64(seed + 0x9E3779B97F4A7C15ull * (std::uint64_t(i) + 1));
  const double u = double(r >> 11) * 0x1.0p-53;
  const float x = static_cast<float>(double(lo) + (double(hi) - double(lo)) * u);
  return x < hi ? x : lo;  // rounding can land on hi: keep the interval half-open
}

LABKIT_HD inline std::uint64_t digest_term(std::uint32_t bits, std::size_t i) {
  return mix64((std::uint64_t(bits) << 32 ^ std::uint64_t(i)) + 0xD1B54A32D192ED03ull);
}

}  // namespace labkit::fresh
