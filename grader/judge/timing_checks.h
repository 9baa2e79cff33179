// timing_checks.h (judge-private) — the baseline on the judge's side, and what the judge refuses
// to believe about a lab's times and outputs.
//
//   * Baselines: the baseline's side of the pairs, out of the lab's reach (a conv lab's in the kit's
//     own harness, conv_timing.h; the map lab's in the judge's own process), its samples for the
//     pairs, and its "clean" times: measured with
//     no lab process alive, before the lab starts and after it has ended. check_interference()
//     compares the baseline's times during the pairs with the clean ones: a lab that leaves work
//     on the GPU to slow the baseline down gets timing-implausible. A first finding is measured
//     again (grade_conv.cpp: the lab's process started anew, every shape's pairs timed again,
//     compared with the clean rounds either side of them), and only when every measurement finds
//     it (kInterferenceMeasurements) is it the verdict:
//     on a node grading several students at once, another grade's host traffic slowed an honest
//     layer's baseline by 43% for a few seconds (4 H200s of one host, 2026-11-28). Each shape
//     records the measured ratio (beside / clean) and the limit applied (ShapeTiming).
//   * The lab is still while the baseline is timed: still_side() / map_still_side() wrap each
//     baseline sample of the pairs in Still (grader/judge/session.h: every process of the lab
//     stopped) and a GpuDrain (gpu_drain.h: the lab's GPU work already queued finishes first);
//     the lab's own samples run with it running. What that took goes to GradeResult::still; a
//     drain that hit its cap is noted there and in the interference verdict's message, and the
//     interference check decides.
//   * check_lab_times(): every reported time must fit inside the judge's own clock around its
//     request; their median must account for that clock (less the channel's round trip and the
//     digest) within an allowance; and it must not be below the shape's physical floor. For an
//     op, the GPU time CUPTI recorded in each timed call must also fit inside its CUDA events
//     (3% and 0.01 ms a call): hidden-work when it does not.
//   * check_guards(): a reply's guard bytes (labkit/guard_regions.h): out-of-bounds when changed.
#pragma once

#include <memory>
#include <nlohmann/json.hpp>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

#include "grader/tools/activity.h"
#include "labkit/conv.h"
#include "grader/harness/conv_run.h"
#include "grader/judge/device.h"
#include "grader/judge/grade_result.h"
#include "grader/judge/lab_spec.h"
#include "grader/judge/pair_timing.h"
#include "grader/judge/session.h"
#include "remote.h"

namespace labkit::judge {

// How much slower the baseline may run beside the lab (during the pairs, the lab stopped around
// each baseline sample) than with no lab process alive: timing-implausible above. These come from
// the measured spread of honest labs (the grade JSON's timing.shapes[].baseline_beside_over_clean,
// over grades of the solutions): too tight fails honest labs, too loose leaves the rest to a cheat.
// Op Time, with the lab stopped: 138 shapes of 6 rounds of `labkit grade --all --solutions` on
// H200s (2026-11-28, three grades at once on one host) lay in [0.993, 1.005]; before the lab was
// stopped an H100 gave +0.4% to +2.3%. 1.05 is ten times the worst excess seen with the lab
// stopped. Layer Time: the 10 solution's layer (host copies over PCIe) gave 0.35 to 1.035 in the
// same rounds, the clean runs themselves moving with the other grades' host traffic, and +6.7% to
// +9.5% on an H100 before the stop: it keeps its 1.25 until a quieter measurement bounds it.
inline constexpr double kInterferenceLimit = 1.05;       // Op Time
inline constexpr double kLayerInterferenceLimit = 1.25;  // Layer Time
// How many measurements a finding takes before it is the verdict: every one must find it. Two
// were not enough for an honest layer among four grades at once on four H200s of one host
// (2026-11-28: course-streams-prolog 43%, then in another run -4%/+107%); each measurement again
// waits kInterferencePauseS times its number first, so that a neighbour's burst of host traffic
// can end, and the lab's time limit moves on by what the measurement and the pause took.
inline constexpr int kInterferenceMeasurements = 3;
inline constexpr double kInterferencePauseS = 2.0;

class GpuDrain;

// A timed call whose output is wrong: reported as an incorrect case.
struct TimedCallWrong {
  CaseReport report;
};

class Baselines {
 public:
  // Construct before the lab's process starts: the GPU drain's idle probe is measured here.
  Baselines(TimedRegion timed, L2Flush& flush);
  ~Baselines();
  // A conv baseline timed in the kit's own harness (conv_timing.h).
  void add_remote(const ConvShape& shape, TimedSide side);
  // The map lab's baseline: its in-place workload, restored before every sample.
  void add_map(int dimx, int dimy, int niterations, std::span<const float> input);
  void time_clean();  // call once before the lab starts and once after it has ended
  TimedSide side(const ConvShape& shape);
  TimedSide map_side();
  // The same sides, each sample taken with `lab` stopped and the GPU drained (see above).
  TimedSide still_side(const ConvShape& shape, Session& lab, StillReport& report);
  TimedSide map_still_side(Session& lab, StillReport& report);
  // Sets timing-implausible on `result` when the baseline ran slower during the pairs (true when
  // this call set it). Takes the clean round after the pairs itself.
  bool check_interference(GradeResult& result);
  // A finding of check_interference() is measured again before it is the verdict (up to
  // kInterferenceMeasurements in all): the grade's verdict is cleared, its ratios kept for the
  // last finding's message. The caller times the pairs again and calls check_interference().
  void measure_again(GradeResult& result);

  struct Entry;

 private:
  TimedRegion timed_;
  L2Flush& flush_;
  std::vector<std::unique_ptr<Entry>> entries_;
  int clean_rounds_ = 0;
  std::unique_ptr<GpuDrain> drain_;
  double idle_probe_ms_ = 0;
  int capped_ = 0;  // drains that gave up, over the whole grade
  std::vector<std::vector<double>> earlier_;  // beside / clean per shape of each measurement taken again
};

double median_round_trip(Session& s);

// check_lab_times()'s finding that the judge's clock saw more than the reported time accounts for
// (not the absolute rules: a time above the clock, below the floor). A whole shape's requests can
// run slow together, for a reason outside the lab (measured on an H100: 3 honest runs in 80, by
// 0.15 ms on Op Time and by a third of the overhead on Layer Time), so the judge measures the
// shape again, the kit's overhead included, and only a second finding is the verdict.
struct WallClockDisagrees : LabFailure {
  using LabFailure::LabFailure;
  double gap_ms = 0, allowed_ms = 0;  // what the phase of the second measurement names
};
void check_lab_times(ShapeTiming& st, const RemoteLog& log, const RemoteCosts& costs, bool layer);
void check_guards(const nlohmann::json& reply, const std::string& call);
LabFailure output_changed(const std::string& call, bool layer);
activity::Summary activity_from_json(const nlohmann::json& j);
// Sets the "incorrect" verdict when a case failed; true when every case passed.
bool all_passed(GradeResult& result);

}  // namespace labkit::judge
