// grader/tools/timeline.h — the streams timeline a student sees: the copies and kernels of one recorded
// layer (a layer-timed lab's host evidence, grader/tools/activity.h), per stream and copy direction, in
// time, for the lab and for the baseline. The judge keeps it in the grade result (GradeResult's
// "timeline"); the grade page, the SVG file beside the terminal report and the report's summary
// lines are drawn from that JSON alone, so a saved or collected result draws the same picture.
//
// Contract
//   * Times are ms since the layer's start: the harness notes CUPTI's clock when the lab's prolog
//     is called and after the device is idle at the end ("layer_ns"); without a plausible note, the
//     first record's start and the last one's end.
//   * Everything in a Timeline may come from the lab (its process sends the records) or from a
//     file anyone wrote: from_json() reads it leniently (a malformed record is left out and
//     counted), names are cut to kMaxNameBytes on a character boundary, at most kMaxRecords
//     records are kept, and the renderer (timeline_svg.cpp) escapes every string as XML text and
//     never puts one in an attribute. Nothing here is graded: the verdict comes from the host
//     evidence line, computed by the judge from the same records (activity::summarize).
//   * overlap_of(): the overlap as activity::summarize defines it (a kernel running while a
//     kernel or a copy runs on another stream; memsets do not count), its pieces for shading, the
//     busy time and the streams that ran a copy or a kernel.
//   * svg(): one chart: one lane per stream and direction (HtoD, kernels, DtoH, other copies,
//     memsets; at most kMaxLanes lanes, the rest counted in the caption), time on x with ms ticks,
//     one rect of class "bar" per record (data-kind: its kind) whose <title> names it, the overlap
//     shaded (rects of class "overlap"), a caption with the overlap fraction. The root <svg> has
//     class "timeline" and data-side "lab" or "baseline" (tests/web reads them). svg_file(): the
//     charts one above the other in one standalone SVG document, under a heading naming the lab,
//     on one time scale (the longer layer's), so the lab's and the baseline's compare at a glance.
#pragma once

#include <cstddef>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "grader/tools/activity.h"

namespace labkit::timeline {

inline constexpr std::size_t kMaxRecords = 1000;
inline constexpr std::size_t kMaxNameBytes = 160;
inline constexpr std::size_t kMaxLanes = 48;

struct Record {
  std::string kind = "kernel";  // "kernel", "HtoD", "DtoH", "memset", or "copy" (another direction)
  std::uint32_t stream = 0;     // CUPTI's stream id
  double start_ms = 0, end_ms = 0;
  std::string name;             // kernels: the name CUPTI gives (mangled); copies: the direction
  std::uint64_t bytes = 0;      // copies and memsets
};

struct Timeline {
  std::string side = "lab";  // "lab" or "baseline"
  std::string shape;         // the grading case recorded, e.g. "conv1 B=1000"
  bool available = false;    // false: nothing was recorded (`why`)
  std::string why;
  double span_ms = 0;            // the layer, from its start to its end
  std::vector<Record> records;   // by start
  std::size_t left_out = 0;      // records lost (CUPTI), not sent (the harness's limits) or not kept here
};

struct Overlap {
  std::vector<std::pair<double, double>> spans;  // ms, in time order
  double overlap_ms = 0, busy_ms = 0;
  int streams = 0;  // streams that ran a copy or a kernel
};

// From the judge's reading of the harness's record (grader/tools/activity.h). layer_start_ns and
// layer_end_ns: the harness's note of the layer on the records' clock (0: none).
Timeline from_activity(const activity::Summary& s, std::uint64_t layer_start_ns, std::uint64_t layer_end_ns,
                       std::string side, std::string shape);
nlohmann::json to_json(const Timeline& t);
Timeline from_json(const nlohmann::json& j);
Overlap overlap_of(const Timeline& t);

// `scale_ms`: the time the plot's width stands for, so that charts shown together share one scale
// (common_scale); 0: this layer's own length.
std::string svg(const Timeline& t, double scale_ms = 0);
double common_scale(const std::vector<Timeline>& timelines);
// `heading`: what the file shows, e.g. "10-streams (lab)"; escaped like every other string. The
// charts share one time scale.
std::string svg_file(const std::vector<Timeline>& timelines, const std::string& heading);

}  // namespace labkit::timeline
