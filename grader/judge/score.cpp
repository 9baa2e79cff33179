#include "grader/judge/score.h"

#include <fmt/core.h>

#include <algorithm>
#include <cmath>

namespace labkit {

Score compute_score(const ScoreInput& in) {
  Score s;
  s.max = in.points;
  const double correct_max = in.correctness_share * in.points;
  const double perf_max = in.points - correct_max;
  if (!in.correct) {
    s.lines.push_back({"correctness", 0, correct_max, "the output is wrong: no credit"});
    s.lines.push_back({"performance", 0, perf_max, "not measured: only a correct result is timed"});
    return s;
  }
  s.lines.push_back({"correctness", correct_max, correct_max,
                     fmt::format("correct on every case: {:.0f}% of the points", 100 * in.correctness_share)});
  double perf = 0;
  std::string why;
  if (!in.timed) {
    why = "not measured (correctness-only run)";
  } else if (!in.honest_timing) {
    why = "0: work ran outside the timed region, so the speedup cannot be trusted";
  } else if (!in.evidence_ok) {
    why = "0: the technique's evidence is missing (see Evidence)";
  } else if (!in.tiers.empty()) {
    const auto reached = std::count_if(in.tiers.begin(), in.tiers.end(), [&](double t) { return in.speedup >= t; });
    perf = perf_max * double(reached) / double(in.tiers.size());
    std::string steps;
    for (const double t : in.tiers) steps += fmt::format("{}{:.2f}x", steps.empty() ? "" : ", ", t);
    why = fmt::format("speedup {:.2f}x reaches {} of the tiers ({}): {} of {:g}", in.speedup, reached, steps,
                      perf, perf_max);
  } else {
    const double fraction =
        in.speedup > 0 ? std::clamp(std::log(in.speedup) / std::log(in.target_speedup), 0.0, 1.0) : 0;
    perf = perf_max * fraction;
    if (in.speedup <= 1)
      why = fmt::format("speedup {:.2f}x is not above 1x: 0", in.speedup);
    else if (fraction >= 1)
      why = fmt::format("speedup {:.2f}x reaches the target {:.2f}x: full", in.speedup, in.target_speedup);
    else
      why = fmt::format("speedup {:.2f}x of target {:.2f}x: ln {:.2f} / ln {:.2f} = {:.2f} of {:g}",
                        in.speedup, in.target_speedup, in.speedup, in.target_speedup, fraction, perf_max);
  }
  s.lines.push_back({"performance", perf, perf_max, why});
  s.total = correct_max + perf;
  return s;
}

}  // namespace labkit
