// grader/judge/stats.h — the few statistics the grader's numbers rest on.
//
// Contract
//   * median: of any non-empty sample (0 for an empty one).
//   * median_ci95: a distribution-free 95% confidence interval for the median, from order
//     statistics (the binomial(n, 1/2) normal approximation): ranks n/2 -/+ 0.98 sqrt(n), rounded
//     outwards. No assumption about the shape of the distribution; GPU timings are skewed
//     (occasional slow samples), so a mean +/- stddev interval would be wrong.
//   * relative_noise: half-width of that interval over the median, the precision of the estimate.
//     It shrinks as samples accumulate, which is what the stopping rule needs.
//   * relative_stddev: stddev / mean of the samples (nvbench's "noise"), recorded for reports.
#pragma once

#include <span>
#include <vector>

namespace labkit::stats {

struct Interval {
  double median = 0, low = 0, high = 0;
};

double median(std::vector<double> values);
Interval median_ci95(std::vector<double> values);
double relative_noise(std::span<const double> values);
double relative_stddev(std::span<const double> values);
double geometric_mean(std::span<const double> values);  // of positive values

}  // namespace labkit::stats
