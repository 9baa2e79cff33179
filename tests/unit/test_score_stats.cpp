// Score (grader/judge/score.h) and the statistics under the speedup (grader/judge/stats.h).
#include <doctest/doctest.h>

#include <cmath>
#include <vector>

#include "grader/core/random.h"
#include "grader/judge/score.h"
#include "grader/judge/stats.h"

using labkit::compute_score;
using labkit::ScoreInput;

TEST_CASE("score follows design.md: nothing if wrong, share if correct, log-scaled speed part") {
  ScoreInput in{4, 0.5, 2.0, true, true, 2.0, true, true};
  CHECK(compute_score(in).total == doctest::Approx(4));
  in.speedup = std::sqrt(2.0);  // half way on the log scale
  CHECK(compute_score(in).total == doctest::Approx(2 + 2 * 0.5));
  in.speedup = 0.8;
  CHECK(compute_score(in).total == doctest::Approx(2));
  in.speedup = 5;
  CHECK(compute_score(in).total == doctest::Approx(4));  // capped
  in.evidence_ok = false;
  CHECK(compute_score(in).total == doctest::Approx(2));
  in.evidence_ok = true;
  in.honest_timing = false;
  CHECK(compute_score(in).total == doctest::Approx(2));
  in.correct = false;
  const auto s = compute_score(in);
  CHECK(s.total == 0);
  CHECK(s.max == 4);
  CHECK(s.lines.size() == 2);
}

TEST_CASE("tiers: the performance part in equal steps, one per tier reached") {
  ScoreInput in{6, 0.5, 20.0, true, true, 12.0, true, true, {4.0, 10.0, 20.0}};
  auto s = compute_score(in);
  CHECK(s.total == doctest::Approx(3 + 3 * 2.0 / 3));  // 12x reaches 4x and 10x
  CHECK(s.lines.back().why.find("reaches 2 of the tiers (4.00x, 10.00x, 20.00x)") != std::string::npos);
  in.speedup = 3.99;
  CHECK(compute_score(in).total == doctest::Approx(3));
  in.speedup = 20;
  CHECK(compute_score(in).total == doctest::Approx(6));
  in.evidence_ok = false;  // no evidence, no tier
  CHECK(compute_score(in).total == doctest::Approx(3));
}

TEST_CASE("median, its 95% interval and geometric mean") {
  CHECK(labkit::stats::median({3, 1, 2}) == 2);
  CHECK(labkit::stats::median({4, 1, 2, 3}) == 2.5);
  CHECK(labkit::stats::geometric_mean(std::vector<double>{2, 8}) == doctest::Approx(4));

  // The interval covers the true median about 95% of the time (distribution-free: skewed data).
  int covered = 0;
  const int trials = 2000;
  labkit::SplitMix64 rng(42);
  for (int t = 0; t < trials; ++t) {
    std::vector<double> x(40);
    for (double& v : x) v = -std::log(1 - rng.uniform());  // exponential, median ln 2
    const auto ci = labkit::stats::median_ci95(x);
    covered += ci.low <= std::log(2.0) && std::log(2.0) <= ci.high;
  }
  CHECK(double(covered) / trials > 0.93);
  CHECK(double(covered) / trials < 0.99);

  // Noise shrinks with more samples of the same spread.
  std::vector<double> few, many;
  for (int i = 0; i < 20; ++i) few.push_back(1 + 0.01 * rng.uniform());
  for (int i = 0; i < 2000; ++i) many.push_back(1 + 0.01 * rng.uniform());
  CHECK(labkit::stats::relative_noise(many) < labkit::stats::relative_noise(few));
}
