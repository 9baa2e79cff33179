// grader/judge/executed_evidence.h — technique evidence from the kernels that did the timed work.
//
// A PTX pattern found anywhere in the module proves nothing: a never-launched kernel can hold an
// `mma ... .tf32`. Here a pattern counts only in the kernels that ran inside the lab's timed
// calls, for a share of their time.
//
// Contract
//   * The harness records kernels, copies and memsets all the time (activity::start_tracing), so
//     the lab cannot tell a timed call from another. For each timed request (conv `run`, conv
//     `layer`, map `run`) it notes CUPTI's clock before the lab's code and after the device
//     synchronize, and in its next request (outside the judge's clock) sends the records that
//     meet that window: the Window below, parsed from JSON {available, why, start_ns, end_ns,
//     dropped, names: [mangled names], records: [[kind, name index, start_ns, end_ns, stream,
//     threads]]}, at most kMaxRecords records (more count as dropped).
//   * attribute() believes a set of windows only when every check holds; the first failure is
//     `why`, and unverified records earn no evidence credit at all (a lab that breaks CUPTI does
//     not fall back to the static PTX check):
//       - the harness could record (available) and lost nothing (dropped == 0);
//       - each window ends after it starts and is no longer than the judge's own clock around the
//         timed request plus Limits::wall_slack_ms;
//       - each record has a known kind, ends after it starts and meets its window;
//       - each kernel's name is a .entry function of the lab's PTX;
//       - the union of all records inside each window, summed over the calls of one shape, covers
//         at least Limits::min_coverage of the time the lab reported for those calls (event_ms for
//         Op Time, host_ms for Layer Time; copies and memsets count towards the union).
//   * Kernel time: the part of each kernel record inside its window. Calls are grouped by the
//     grading shape they timed; a kernel's time is its mean per call of each group, summed over
//     the groups (each shape weighs as one call of it, however many pairs the stopping rule took).
//   * check(): a kernel carries a pattern when its statements and those of every function it
//     calls, transitively (evidence::call_graph), hold at least min_count matches; a `function`
//     filter must match the kernel's display name. A pattern holds when the kernels carrying it
//     take at least `share` of the kernel time; an absent pattern holds when no kernel with any
//     time contains it. No kernel time at all: no pattern holds.
#pragma once

#include <cstddef>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "grader/tools/activity.h"
#include "grader/judge/evidence.h"

namespace labkit::executed {

inline constexpr std::size_t kMaxRecords = 4096;            // a window's records the harness sends
inline constexpr std::size_t kRegionBytes = std::size_t(2) << 20;  // the tensor-file space they travel in

struct Record {
  activity::Kind kind = activity::Kind::kernel;
  std::string name;  // kernels: mangled, as CUPTI and the PTX spell it
  std::uint64_t start_ns = 0, end_ns = 0;
  std::uint32_t stream = 0;
  std::uint64_t threads = 0;
};

// One timed call as the harness reported it, with the judge's own numbers beside it.
struct Window {
  std::string group;  // the grading shape it timed, e.g. "conv2 B=1000"
  bool available = false;
  std::string why;    // when not available
  std::uint64_t start_ns = 0, end_ns = 0;
  std::size_t dropped = 0;
  // The harness's own refill or digest kernels whose records reached across the window's edge
  // and were left out (the harness's device_ops.h), and how far the farthest reached in (ns).
  std::size_t kit_edge_records = 0;
  std::uint64_t kit_edge_ns = 0;
  std::vector<Record> records;
  double wall_ms = 0;      // the judge's clock around the timed request
  double reported_ms = 0;  // event_ms (Op Time) or host_ms (Layer Time)
};

// The harness's JSON text (the contract above). Anything malformed, a kind out of range
// included, gives available = false and `why`, never an exception.
Window window_from_text(std::string_view text, std::string group, double wall_ms, double reported_ms);

struct Limits {
  double wall_slack_ms = 0.2;
  double min_coverage = 0.5;
};

struct KernelTime {
  std::string name, display;
  double ms = 0;     // per call of each group, summed over the groups
  double share = 0;  // of Attribution::kernel_ms
};

struct Attribution {
  bool verified = false;
  std::string why;         // the first failed check when not verified
  std::size_t windows = 0;
  double kernel_ms = 0;
  std::vector<KernelTime> kernels;  // longest first
  std::size_t kit_edge_records = 0;  // summed over the windows
  std::uint64_t kit_edge_ns = 0;     // the farthest
};

Attribution attribute(const std::vector<Window>& windows, const std::vector<evidence::PtxFunction>& functions,
                      const Limits& limits = {});

// The GPU time of one timed call: the union of its records (kernels, copies, memsets), each
// clipped to the window (ms). Empty when the window is not available or lost records: such a
// window proves nothing, and attribute() says why.
std::optional<double> busy_ms(const Window& w);

// The evidence report of a graded run: findings in the patterns' order, basis "executed kernels
// (CUPTI)"; unverified records make every finding fail (absent ones too) with the reason.
evidence::Report check(std::string_view ptx, const std::vector<evidence::Pattern>& patterns,
                       const std::vector<Window>& windows, double share, const Limits& limits = {});

}  // namespace labkit::executed
