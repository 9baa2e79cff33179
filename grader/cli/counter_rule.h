// counter_rule.h — what one lab.json counter (labkit/lab_spec.h, CounterEvidence) makes of the counts
// Nsight Compute reported: the judgment of the counter check (counter_check.h), apart from running
// the tool, so that it can be tested without a GPU.
//
// Contract
//   * read_counter(ce, kernels, macs): count = the sum of ce.metrics over every kernel; base = the
//     sum of ce.over over every kernel, or `macs` (the profiled calls' multiply-adds) when ce.over
//     is empty; fraction = count * per_count / base (0 when both are 0).
//   * known is false when no kernel reported any metric of ce.metrics, or (with ce.over) none of
//     ce.over: the check is then not made; `missing` names that list.
//   * forged: fraction above kMaxCounterFraction, or a count with a zero base: no real run counts
//     that (a conv executes at most a few instructions of a kind per multiply-add, and a part never
//     exceeds 64 times its whole); the lab's process wrote the numbers.
//   * ok: min_fraction <= fraction, and fraction <= max_fraction when there is one.
//   * summary and failure: one clause each for the report. A counter over the multiply-adds reads
//     "<name> covers N% of the multiply-adds"; one over metrics "<name> is N% of <over metrics>";
//     a ceiling adds "(at most N%)". `why` says what a failure means for the lab's kind of counter.
#pragma once

#include <string>
#include <vector>

#include "grader/judge/lab_spec.h"
#include "grader/tools/ncu.h"

namespace labkit::cli {

constexpr double kMaxCounterFraction = 64;

struct CounterReading {
  bool known = false;
  std::string missing;  // the metrics no kernel reported, when !known
  double count = 0, base = 0, fraction = 0;
  bool forged = false, ok = false;
  std::string summary;  // always (when known)
  std::string failure;  // when !ok
  std::string why;      // when !ok: what the failure says about the lab's code
};

CounterReading read_counter(const CounterEvidence& ce, const std::vector<ncu::Kernel>& kernels, double macs);

// A share as the report prints it: whole percents from 1% up, two significant digits below.
std::string percent(double fraction);

}  // namespace labkit::cli
