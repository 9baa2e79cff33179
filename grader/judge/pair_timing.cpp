#include "grader/judge/pair_timing.h"

#include <cuda_runtime_api.h>

#include <chrono>
#include <memory>

#include "labkit/cuda_check.h"
#include "grader/core/event_timer.h"

namespace labkit {
namespace {

using Clock = std::chrono::steady_clock;

}  // namespace

TimedSide TimedSide::local(std::function<void()> body, std::function<void()> reset, L2Flush& flush) {
  auto ev = std::make_shared<EventPair>();
  return {[=, &flush] {
    if (reset) reset();
    flush();
    LABKIT_CUDA_CHECK(cudaDeviceSynchronize());
    const auto t0 = Clock::now();
    LABKIT_CUDA_CHECK(cudaEventRecord(ev->start));
    body();
    LABKIT_CUDA_CHECK(cudaEventRecord(ev->stop));
    // The whole device, not the stop event: work the body left running on other streams must be
    // finished before the host clock stops.
    LABKIT_CUDA_CHECK(cudaDeviceSynchronize());
    const auto t1 = Clock::now();
    return Sample{ev->elapsed_ms(), std::chrono::duration<double, std::milli>(t1 - t0).count()};
  }};
}

PairTiming time_pairs(const TimedSide& baseline, const TimedSide& lab, Measure measure,
                      const StoppingRule& rule, int warmup) {
  PairTiming t;
  const auto begin = Clock::now();
  for (int i = 0; i < warmup; ++i) {
    baseline.sample();
    lab.sample();
  }
  const auto timed_begin = Clock::now();
  for (int i = 0;; ++i) {
    Sample b, l;
    if (i % 2 == 0) {
      b = baseline.sample();
      l = lab.sample();
    } else {
      l = lab.sample();
      b = baseline.sample();
    }
    t.base_event_ms.push_back(b.event_ms);
    t.lab_event_ms.push_back(l.event_ms);
    t.base_host_ms.push_back(b.host_ms);
    t.lab_host_ms.push_back(l.host_ms);
    const bool by_events = measure == Measure::events;
    const double lab_ms = by_events ? l.event_ms : l.host_ms;
    const double base_ms = by_events ? b.event_ms : b.host_ms;
    t.base_samples.push_back(base_ms);
    t.lab_samples.push_back(lab_ms);
    // An empty body can time at 0 ms; a ratio needs a positive denominator.
    t.ratios.push_back(base_ms / std::max(lab_ms, 1e-6));

    const int n = i + 1;
    const double elapsed = std::chrono::duration<double>(Clock::now() - timed_begin).count();
    if (n >= rule.min_samples) {
      t.noise = stats::relative_noise(t.ratios);
      if (t.noise < rule.max_noise) {
        t.converged = true;
        break;
      }
    }
    if (n >= rule.max_samples || elapsed >= rule.max_seconds) break;
  }
  t.seconds = std::chrono::duration<double>(Clock::now() - begin).count();
  t.speedup = stats::median_ci95(t.ratios);
  t.noise = stats::relative_noise(t.ratios);
  t.ratio_stddev = stats::relative_stddev(t.ratios);
  const double base_event = stats::median(t.base_event_ms), lab_event = stats::median(t.lab_event_ms);
  const double base_host = stats::median(t.base_host_ms), lab_host = stats::median(t.lab_host_ms);
  t.base_ms = measure == Measure::events ? base_event : base_host;
  t.lab_ms = measure == Measure::events ? lab_event : lab_host;
  t.lab_extra_host_ms = (lab_host - lab_event) - (base_host - base_event);
  t.hidden_work = t.lab_extra_host_ms > kHiddenWorkMinMs &&
                  t.lab_extra_host_ms > kHiddenWorkFraction * lab_event;
  return t;
}

}  // namespace labkit
