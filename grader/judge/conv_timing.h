// conv_timing.h (judge-private) — a conv lab's timed pairs: the lab's side through its harness,
// the kit's overhead per request, and where the baseline's side runs.
//
//   * remote_side(): one timed call through a harness: fresh inputs (prepare), the judge's L2
//     flush, the timed request, finish, and the check of that call's output (remote.h).
//   * KitBaseline: the baseline's side of every pair, Op Time and Layer Time alike, in the kit's
//     own harness process (the baseline behind the lab API, no student code, out of the lab's
//     reach) through the same requests as the lab's: fresh inputs written just before, the same
//     rotating pool of arrays, the same flush and clocks. Both sides of a pair are then one
//     process's call each, alike in all but the kernel. Measured with the baseline in the judge's
//     own process instead: the baseline copied as a lab timed 1.3-1.5% faster than the baseline
//     (Op Time, H200, four grades: speedup 1.013-1.015, the 95% interval above 1.0), and the
//     streams solution's Layer Time speedup moved between 1.08 and 1.33 (H100). The same samples
//     give what a timed request costs beyond its reported time and the round trip (the overhead).
//   * time_case(): one grading shape's pairs, measured again (in a new lab process) when the
//     judge's clock disagreed; the overhead held against the lab's is the kit's beside it.
//   * recorded_layer(): one layer through a harness with CUPTI recording (never timed: recording
//     slows it), for the host evidence and the streams timeline (grader/tools/timeline.h); the kit's
//     harness records the baseline's the same way (KitBaseline::record_layer).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "conv_case.h"
#include "grading.h"
#include "grader/judge/pair_timing.h"
#include "grader/tools/timeline.h"
#include "remote.h"
#include "timing_checks.h"

namespace labkit::judge {

// `trusted`: the kit's own harness timing the baseline: the same requests, but the output is
// neither sent back nor checked (nothing of it is graded).
TimedSide remote_side(Session& s, bool layer, Precision precision, const ConvCase& c, L2Flush& flush,
                      const RemoteCosts& costs, RemoteLog& log, bool trusted = false);

// Prepare (fresh inputs, pinned host arrays), the layer with "record", finish; returns the layer's
// reply (its "activity"). `discard`: the kit's harness, whose output nobody reads.
nlohmann::json recorded_layer(Session& s, const ConvCase& c, bool discard, const std::string& what);
// The timeline of a recorded layer's "activity" (its records and the harness's "layer_ns" note).
timeline::Timeline timeline_of(const nlohmann::json& activity, const std::string& side, const std::string& shape);

class KitBaseline {
 public:
  // Starts the kit's harness (before the lab's) and adds one baseline entry per grading case,
  // timing the lab's region (ctx.spec.timed).
  KitBaseline(Context& ctx, const std::vector<ConvCase>& grading, L2Flush& flush, Baselines& base);
  ~KitBaseline();
  // After base.time_clean(): each shape's overhead, from the clean samples just taken.
  std::vector<double> overheads();
  // The overhead of shape i beside the lab: from the baseline's own samples in the pairs timed
  // since begin_pairs(i) (the lab's process stopped during each), so the lab's requests are held
  // against the kit's at the same moment. The kit's CPU hash of a layer's output moved by a third
  // between moments seconds apart (H200: 6.17 ms clean, 8.10 ms beside, honest 10-streams), more
  // than the rule allows. Capped at twice `clean` + 0.1 ms: a stopped lab cannot slow the kit's
  // host work, and the cap keeps it so. `clean` where fewer than 5 samples were taken.
  void begin_pairs(std::size_t i);
  double overhead_beside(std::size_t i, double clean);
  // The baseline's layer on `c`, recorded as the lab's is for its host evidence: the timeline's
  // other half. Call it outside every timed sample; a failure comes back as a timeline that says
  // why (it is shown, never graded).
  timeline::Timeline record_layer(const ConvCase& c);
  void close();

 private:
  struct Shape;
  std::unique_ptr<Session> kit_;
  std::vector<std::unique_ptr<Shape>> shapes_;
};

// Shape `i` of the grading cases; `clean_overhead` is kit.overheads()[i].
ShapeTiming time_case(Context& ctx, const ConvCase& c, std::size_t i, double clean_overhead, KitBaseline& kit,
                      Baselines& base, L2Flush& flush, RemoteLog& log);

}  // namespace labkit::judge
