// grader/core/random.h — reproducible random inputs, the same on every machine and compiler.
//
// std::uniform_real_distribution is implementation-defined, so fixtures generated with it could
// differ between standard libraries. SplitMix64 plus a fixed conversion to [0, 1) does not.
// seed_for(base, name) gives each named case its own stream, so adding a case never changes the
// data of the others. fresh_seed() is the one unreproducible number: a grade's seed when none
// is given (printed, so the run can be replayed with --seed).
#pragma once

#include <chrono>
#include <cstdint>
#include <random>
#include <span>
#include <string_view>

namespace labkit {

class SplitMix64 {
 public:
  explicit SplitMix64(std::uint64_t seed) : state_(seed) {}
  std::uint64_t next() {
    std::uint64_t z = (state_ += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }
  // Uniform in [0, 1) with 53 random bits.
  double uniform() { return double(next() >> 11) * 0x1.0p-53; }

 private:
  std::uint64_t state_;
};

inline std::uint64_t fresh_seed() {
  std::random_device rd;
  const auto now = std::chrono::high_resolution_clock::now().time_since_epoch().count();
  return (std::uint64_t(rd()) << 32 ^ rd()) ^ std::uint64_t(now) * 0x9E3779B97F4A7C15ull;
}

inline std::uint64_t seed_for(std::uint64_t base, std::string_view name) {
  std::uint64_t h = 0xCBF29CE484222325ull ^ base;  // FNV-1a over the name, salted with base
  for (unsigned char ch : name) h = (h ^ ch) * 0x100000001B3ull;
  return h;
}

// Fills out with values uniform in [lo, hi). Never all zeros for lo < hi: tests must not run on
// zeros, which hide unwritten outputs and wrong indexing.
inline void fill_uniform(std::span<float> out, float lo, float hi, std::uint64_t seed) {
  SplitMix64 rng(seed);
  const double width = double(hi) - double(lo);
  for (float& v : out) {
    float x = static_cast<float>(double(lo) + width * rng.uniform());
    v = x < hi ? x : lo;  // rounding to float can land on hi; keep the interval half-open
  }
}

}  // namespace labkit
