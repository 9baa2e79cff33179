// grader/judge/check.h — is a lab's output right? The grader's per-element, scale-aware rule.
//
// Contract (docs/grading.md explains every number)
//   * Element i passes when |got_i - expected_i| <= rel * bound_i + abs + kUnderflowFloor.
//     conv: bound_i = sum over the element's n = C*K*K terms of |x * w| (the reference conv of
//           |input| and |mask|), rel = gamma_k = k*u/(1-k*u) with k = n + 1 (fp32) or n + 2
//           (fp16) and u the unit roundoff of the lab's precision (2^-24 fp32, 2^-11 fp16). That
//           is the textbook worst-case error of a floating-point dot product in ANY summation
//           order (sequential, tree, atomics, fused), so no correct fp32 kernel can fail it, while
//           every element carries its own scale: an output that is small because of cancellation
//           is not judged against the tensor's largest value. fp32: abs = 0.
//           fp16 (any reduced format): abs = (1+gamma_n) * n * eta/2 * ((1+u)(X + W) + 2 + eta/2),
//           X = max|input|, W = max|mask| of the case, eta the format's subnormal spacing (2^-24
//           for half): below half's normal range (2^-14) the rounding of x, w, a product or a
//           partial sum loses up to eta/2 absolute, not relative. docs/grading.md derives it.
//           Valid while no input or half partial sum overflows half (65504): an overflow is inf
//           and fails as non-finite, never passes.
//           tf32 (tensor cores): rel = (1+2^-10)^2 (1+gamma_{n+1}(2^-20)) - 1, abs = 0: inputs
//           rounded or truncated to tf32, exact products, fp32 sums in any order (the tensor
//           core's truncating accumulator included); about 0.2% of sum|x*w| for conv2.
//     map:  bound_i = |expected_i|, rel = kMapRelTolerance (fp32 elementwise math; see .cpp).
//   * NaN and inf never pass. An element still holding the poison pattern (all bits set) is
//     reported as never written, apart from NaNs the kernel computed.
//   * An all-zero output fails whenever the expected output is not all zero, by name.
//   * Up to kMaxReported first mismatches are kept with their coordinates, e.g. (b, m, h, w).
#pragma once

#include <array>
#include <cstddef>
#include <span>
#include <string>
#include <vector>

#include "labkit/conv.h"
#include "grader/judge/lab_spec.h"

namespace labkit::check {

inline constexpr std::size_t kMaxReported = 5;
inline constexpr double kUnderflowFloor = 1e-30;
inline constexpr double kMapRelTolerance = 1e-4;

struct Tolerance {
  double rel = 0;
  std::string rule;  // "|err| <= gamma_197 * sum|x*w|, ...", for reports
  double abs = 0;    // added to every element's allowance (reduced precision's subnormals)
};

// max_abs_input and max_abs_mask: the largest |value| of the case's input and mask (max_abs), used
// by the fp16 rule's absolute term and ignored by fp32's. Throws std::invalid_argument when
// either is negative or not finite, or when n + 2 >= 1/u (no gamma exists: more than 2045 terms
// in fp16).
Tolerance conv_tolerance(const ConvShape& shape, Precision precision, double max_abs_input,
                         double max_abs_mask);
double max_abs(std::span<const float> values);  // NaN if any value is NaN
Tolerance map_tolerance();

// Names and extents of the output's dimensions, outermost first: {"b","m","h","w"} for conv.
struct Layout {
  std::vector<std::string> names;
  std::vector<std::size_t> extents;
  // When set, the real index of each outermost position: a compared subset of rows reports the
  // rows' places in the whole matrix.
  std::vector<std::size_t> outer_index;
  std::string coordinates(std::size_t index) const;  // "(b=1, m=3, h=0, w=17)"
};
Layout conv_layout(const ConvShape& shape);
Layout map_layout(int dimx, int dimy);
Layout map_layout(int dimx, std::vector<std::size_t> rows);  // only these rows were compared

struct Mismatch {
  std::size_t index = 0;
  double got = 0, expected = 0, allowed = 0;
  bool unwritten = false;  // got is the poison pattern
};

enum class Outcome { ok, size_mismatch, unwritten, nonfinite, all_zero, wrong_values };
const char* to_string(Outcome);

struct Result {
  Outcome outcome = Outcome::ok;
  std::size_t elements = 0;
  std::size_t bad = 0;         // elements that fail, of every kind
  std::size_t unwritten = 0;   // still the poison pattern
  std::size_t nonfinite = 0;   // NaN/inf the kernel produced (not poison)
  double worst = 0;            // max over finite elements of |err| / allowed (<= 1 passes)
  std::vector<Mismatch> first; // the first kMaxReported failing elements, in index order
  bool passed() const { return outcome == Outcome::ok; }
  // Several lines: what failed, how many, and the first mismatches with coordinates.
  std::string describe(const Layout& layout) const;
};

// bound.size() must equal expected.size() (see the contract for what bound means).
Result compare(std::span<const float> got, std::span<const double> expected,
               std::span<const double> bound, const Tolerance& tolerance);

}  // namespace labkit::check
