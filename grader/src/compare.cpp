#include "labkit/compare.h"

#include <algorithm>
#include <cmath>

namespace labkit {

Comparison compare(std::span<const float> got, std::span<const double> expected, double tolerance) {
  Comparison r;
  const std::size_t n = std::min(got.size(), expected.size());
  for (double e : expected) r.scale = std::max(r.scale, std::fabs(e));
  if (r.scale == 0) r.scale = 1;
  for (std::size_t i = 0; i < n; ++i) {
    const double g = got[i];
    const bool finite = std::isfinite(g);
    const double err = finite ? std::fabs(g - expected[i]) / r.scale : 0;
    if (!finite) ++r.nonfinite;
    r.max_error = std::max(r.max_error, err);
    if (!finite || err > tolerance) {
      if (r.mismatches++ == 0) {
        r.first_bad = i;
        r.first_got = g;
        r.first_expected = expected[i];
      }
    }
  }
  // A size mismatch is a mismatch of every missing element.
  r.mismatches += std::max(got.size(), expected.size()) - n;
  r.passed = r.mismatches == 0;
  return r;
}

}  // namespace labkit
