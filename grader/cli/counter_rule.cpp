// One lab.json counter against Nsight Compute's counts (counter_rule.h).
#include "counter_rule.h"

#include <fmt/core.h>
#include <fmt/ranges.h>

namespace labkit::cli {
namespace {

// The sum of `metrics` over the kernels, and whether any kernel reported one of them.
std::pair<double, bool> sum_of(const std::vector<std::string>& metrics, const std::vector<ncu::Kernel>& kernels) {
  double sum = 0;
  bool known = false;
  for (const ncu::Kernel& k : kernels)
    for (const std::string& m : metrics)
      if (const auto it = k.values.find(m); it != k.values.end()) sum += it->second, known = true;
  return {sum, known};
}

// A failure's numbers: three significant digits ("6.4%", "82.1%", "0.0123%").
std::string fine_percent(double fraction) { return fmt::format("{:.3g}%", 100 * fraction); }

}  // namespace

std::string percent(double fraction) {
  const double p = 100 * fraction;
  return p >= 1 || p == 0 ? fmt::format("{:.0f}%", p) : fmt::format("{:.2g}%", p);
}

CounterReading read_counter(const CounterEvidence& ce, const std::vector<ncu::Kernel>& kernels, double macs) {
  CounterReading r;
  const auto [count, known] = sum_of(ce.metrics, kernels);
  if (!known) {
    r.missing = fmt::format("{}", fmt::join(ce.metrics, ", "));
    return r;
  }
  const bool over_macs = ce.over.empty();
  double base = macs;
  if (!over_macs) {
    const auto [sum, over_known] = sum_of(ce.over, kernels);
    if (!over_known) {
      r.missing = fmt::format("{}", fmt::join(ce.over, ", "));
      return r;
    }
    base = sum;
  }
  r.known = true;
  r.count = count;
  r.base = base;
  if (base > 0) {
    r.fraction = count * ce.per_count / base;
  } else if (count > 0) {
    r.forged = true;  // a part of nothing
  }
  r.forged = r.forged || r.fraction > kMaxCounterFraction;
  const bool above = ce.max_fraction && r.fraction > *ce.max_fraction;
  r.ok = !r.forged && r.fraction >= ce.min_fraction && !above;

  const std::string of = over_macs ? "the multiply-adds" : fmt::format("{}", fmt::join(ce.over, " + "));
  r.summary = over_macs ? fmt::format("{} covers {} of the multiply-adds", ce.name, percent(r.fraction))
                        : fmt::format("{} is {} of {}", ce.name, percent(r.fraction), of);
  if (ce.max_fraction) r.summary += fmt::format(" (at most {})", percent(*ce.max_fraction));
  if (r.ok || r.forged) return r;
  if (above) {
    r.failure = fmt::format("{} executed is {} of {} in the profiled calls (at most {} allowed)", ce.name,
                            fine_percent(r.fraction), over_macs ? "the conv's multiply-adds" : of,
                            fine_percent(*ce.max_fraction));
    r.why = "The kernels that ran still do what this lab's technique removes.";
  } else if (over_macs) {
    r.failure = fmt::format("{} executed covers {} of the conv's multiply-adds in the profiled calls (at least {} "
                            "expected)", ce.name, fine_percent(r.fraction), fine_percent(ce.min_fraction));
    r.why = "The technique's instructions are in the code, but they do not do the conv's work (a branch never taken, "
            "a token call).";
  } else {
    r.failure = fmt::format("{} executed is {} of {} in the profiled calls (at least {} expected)", ce.name,
                            fine_percent(r.fraction), of, fine_percent(ce.min_fraction));
    r.why = "The kernels that ran do too little of the technique's work.";
  }
  return r;
}

}  // namespace labkit::cli
