#include "grader/judge/stats.h"

#include <algorithm>
#include <cmath>

namespace labkit::stats {

double median(std::vector<double> v) {
  if (v.empty()) return 0;
  auto mid = v.begin() + v.size() / 2;
  std::nth_element(v.begin(), mid, v.end());
  if (v.size() % 2) return *mid;
  return (*mid + *std::max_element(v.begin(), mid)) / 2;
}

Interval median_ci95(std::vector<double> v) {
  Interval r;
  if (v.empty()) return r;
  std::sort(v.begin(), v.end());
  const double n = double(v.size());
  r.median = median(v);
  // 1-based ranks of the interval's ends: n/2 -/+ 1.96 * sqrt(n)/2, widened to whole ranks.
  const double half = 1.96 * std::sqrt(n) / 2;
  const long lo = std::max(1L, static_cast<long>(std::floor(n / 2 - half)));
  const long hi = std::min(static_cast<long>(n), static_cast<long>(std::ceil(n / 2 + half + 1)));
  r.low = v[lo - 1];
  r.high = v[hi - 1];
  return r;
}

double relative_noise(std::span<const double> values) {
  const Interval ci = median_ci95({values.begin(), values.end()});
  if (ci.median == 0) return 0;
  return (ci.high - ci.low) / 2 / std::fabs(ci.median);
}

double relative_stddev(std::span<const double> values) {
  if (values.size() < 2) return 0;
  double mean = 0;
  for (double x : values) mean += x;
  mean /= double(values.size());
  double ss = 0;
  for (double x : values) ss += (x - mean) * (x - mean);
  return mean == 0 ? 0 : std::sqrt(ss / double(values.size() - 1)) / std::fabs(mean);
}

double geometric_mean(std::span<const double> values) {
  if (values.empty()) return 0;
  double log_sum = 0;
  for (double x : values) log_sum += std::log(x);
  return std::exp(log_sum / double(values.size()));
}

}  // namespace labkit::stats
