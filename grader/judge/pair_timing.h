// grader/judge/pair_timing.h — the baseline and a lab timed sample by sample, as a ratio.
//
// Contract
//   * One sample of one side: L2 flush (enqueued, then waited for), host clock read, CUDA event,
//     the timed body, CUDA event, cudaDeviceSynchronize, host clock read. The event time covers
//     the body's work on the default stream; the host time covers everything the device did
//     before the sync returned, on every stream.
//   * Pairs are interleaved (baseline then lab, then lab then baseline, ...) so a drift in clocks
//     or temperature affects both sides alike; each pair gives one ratio baseline / lab.
//   * The speedup is the median ratio with its distribution-free 95% interval (grader/judge/stats.h).
//   * Stopping (after `warmup` untimed pairs): at least rule.min_samples pairs, then stop as soon
//     as the interval's relative half-width is below rule.max_noise; give up at rule.max_seconds
//     or rule.max_samples with `converged` false (the report flags the number as noisy).
//   * Hidden work: when the lab's host time exceeds its event time by more than the baseline's
//     does (more than kHiddenWorkMinMs and kHiddenWorkFraction of the lab's event time), work ran
//     outside the events, on another stream; `hidden_work` is set. Only meaningful for Measure::
//     events, where the events are the Op Time.
//   * CUDA failures and exceptions from the bodies propagate.
#pragma once

#include <functional>
#include <vector>

#include "grader/judge/device.h"
#include "grader/judge/stats.h"

namespace labkit {

inline constexpr double kHiddenWorkMinMs = 0.05;
inline constexpr double kHiddenWorkFraction = 0.10;

enum class Measure { events, host };

struct StoppingRule {
  int min_samples = 10;
  int max_samples = 1000;
  double max_noise = 0.01;
  double max_seconds = 2.5;
};

struct PairTiming {
  std::vector<double> base_event_ms, lab_event_ms, base_host_ms, lab_host_ms;
  std::vector<double> base_samples, lab_samples;  // the chosen measure's times, pair by pair
  std::vector<double> ratios;       // baseline / lab, of the chosen measure
  stats::Interval speedup;          // median ratio and its 95% interval
  double noise = 0;                 // relative half-width of that interval
  double ratio_stddev = 0;          // relative stddev of the ratios (nvbench's noise)
  bool converged = false;
  double seconds = 0;
  double base_ms = 0, lab_ms = 0;   // medians of the chosen measure
  double lab_extra_host_ms = 0;     // median host - event time, lab minus baseline
  bool hidden_work = false;
};

// One timed sample of one side: the event time and the host time (see the contract).
struct Sample {
  double event_ms = 0, host_ms = 0;
};

// One side of the comparison. `sample` times one call. local() builds it for code of the judge's
// own process (the baseline): `reset`, if set, runs untimed first (an in-place kernel's data is
// restored), then the L2 flush, the events and `body`. A lab's side comes from the harness
// (grader/judge/remote_side.h): its host time is the judge's clock, not the lab's.
struct TimedSide {
  std::function<Sample()> sample;
  static TimedSide local(std::function<void()> body, std::function<void()> reset, L2Flush& flush);
};

PairTiming time_pairs(const TimedSide& baseline, const TimedSide& lab, Measure measure,
                      const StoppingRule& rule, int warmup);

}  // namespace labkit
