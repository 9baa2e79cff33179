// labkit/compare.h — a computed output against the double-precision reference.
//
// Contract
//   * The error of element i is |got[i] - expected[i]| / scale, where scale = max |expected| over
//     the whole tensor: a tolerance relative to the output's magnitude, so one threshold serves
//     pixel-range conv1 outputs and unit-range ones alike. (The grader's full, per-element
//     scale-aware rule, design.md section 5, builds on this.)
//   * NaN and inf never pass, whatever the tolerance.
//   * An all-zero expected tensor has no scale: scale is then 1 (absolute error).
#pragma once

#include <cstddef>
#include <limits>
#include <span>

namespace labkit {

struct Comparison {
  static constexpr std::size_t npos = std::numeric_limits<std::size_t>::max();
  double scale = 0;             // max |expected|
  double max_error = 0;         // max over i of |got - expected| / scale (finite elements)
  std::size_t nonfinite = 0;    // NaN or inf elements in got
  std::size_t mismatches = 0;   // elements over the tolerance, non-finite ones included
  std::size_t first_bad = npos; // index of the first mismatch
  double first_got = 0, first_expected = 0;
  bool passed = false;
};

Comparison compare(std::span<const float> got, std::span<const double> expected, double tolerance);

}  // namespace labkit
