// grader/judge/score.h — a lab's score, as design.md section 5 defines it, line by line.
//
//   incorrect                         -> 0
//   correct                           -> correctness_share * points
//   + (1 - correctness_share) * points * clamp(ln(speedup) / ln(target_speedup), 0, 1)
//     only with the technique's evidence present and the speedup measured honestly (no work
//     hidden outside the timed region); otherwise that part is 0 and a line says why.
//   With tiers (lab.json "tiers", ascending speedups, the last one the target), the performance
//   part is paid in equal steps instead: tiers reached / tiers, times its points.
// A speedup at or below 1 earns no performance points; at or above the target, all of them.
#pragma once

#include <string>
#include <vector>

namespace labkit {

struct ScoreInput {
  double points = 0, correctness_share = 0, target_speedup = 2;
  bool correct = false;
  bool timed = false;          // false: correctness only (no speedup measured)
  double speedup = 0;
  bool evidence_ok = false;
  bool honest_timing = true;   // false: work ran outside the timed region
  std::vector<double> tiers;   // empty: ln-scaled to target_speedup
};

struct ScoreLine {
  std::string item;    // "correctness", "performance"
  double points = 0, max = 0;
  std::string why;     // "speedup 1.83x of target 2.00x: ln 1.83 / ln 2.00 = 0.87"
};

struct Score {
  double total = 0, max = 0;
  std::vector<ScoreLine> lines;
};

Score compute_score(const ScoreInput& in);

}  // namespace labkit
