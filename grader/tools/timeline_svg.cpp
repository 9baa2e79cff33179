// The streams timeline's picture (grader/tools/timeline.h svg, svg_file): one lane per stream and copy
// direction, a rect per record, the overlap shaded. Every string in it may be the lab's (a kernel's
// name) or a file's: it goes through xml_chars and xml_escape into element text, never into an
// attribute; attributes hold only numbers and the kit's own words.
#include <fmt/core.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <tuple>

#include "grader/core/text_escape.h"
#include "grader/tools/timeline.h"

namespace labkit::timeline {
namespace {

constexpr int kWidth = 960, kLabels = 170, kRight = 24, kTop = 62, kLane = 16, kGap = 5, kBottom = 46;

std::string text(const std::string& s) { return xml_escape(xml_chars(s)); }

// Lanes within a stream, top to bottom: the order a segment's work runs in.
int lane_order(const std::string& kind) {
  if (kind == "HtoD") return 0;
  if (kind == "kernel") return 1;
  if (kind == "DtoH") return 2;
  if (kind == "copy") return 3;
  return 4;  // memset
}
constexpr const char* kLaneNames[] = {"HtoD copies", "kernels", "DtoH copies", "other copies", "memsets"};
constexpr const char* kColors[] = {"#54a24b", "#4c78a8", "#f58518", "#9d755d", "#bab0ac"};
constexpr const char* kKinds[] = {"HtoD", "kernel", "DtoH", "copy", "memset"};  // data-kind: never the record's own string

// The step of about eight ticks from 0 to `top`: 1, 2, 2.5 or 5 times a power of ten.
double tick_step(double top) {
  const double raw = top / 8, mag = std::pow(10.0, std::floor(std::log10(raw)));
  for (double m : {1.0, 2.0, 2.5, 5.0})
    if (m * mag >= raw) return m * mag;
  return 10 * mag;
}

std::string megabytes(std::uint64_t bytes) {
  return bytes >= 1000000 ? fmt::format("{:.2f} MB", double(bytes) / 1e6) : fmt::format("{:.1f} kB", double(bytes) / 1e3);
}

// What a bar's tooltip says.
std::string describe(const Record& r) {
  const double ms = r.end_ms - r.start_ms;
  const std::string when = fmt::format("stream {}, {:.3f} to {:.3f} ms ({:.3f} ms)", r.stream, r.start_ms, r.end_ms, ms);
  if (r.kind == "kernel") return fmt::format("kernel {}, {}", r.name.empty() ? "(no name)" : r.name, when);
  if (r.kind == "memset") return fmt::format("memset of {}, {}", megabytes(r.bytes), when);
  std::string what = fmt::format("{} copy of {}", r.kind == "copy" ? r.name : r.kind, megabytes(r.bytes));
  if (ms > 0 && r.bytes > 0) what += fmt::format(" at {:.1f} GB/s", double(r.bytes) / (ms * 1e-3) / 1e9);
  return what + ", " + when;
}

// One chart; `where`: the attributes that place it (a nested <svg> of svg_file) or the namespace.
// `scale_ms`: the time the plot's width stands for (charts side by side share one); 0: this layer's.
std::string chart(const Timeline& t, const std::string& where, double scale_ms, int& height) {
  const std::string who = t.side == "baseline" ? "Baseline" : "Your lab";
  const std::string side = t.side == "baseline" ? "baseline" : "lab";
  if (!t.available || t.records.empty()) {
    height = 64;
    return fmt::format(
        "<svg {} class=\"timeline\" data-side=\"{}\" width=\"{}\" height=\"{}\" viewBox=\"0 0 {} {}\" "
        "font-family=\"sans-serif\" font-size=\"13\">\n<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n"
        "<text x=\"10\" y=\"22\" font-size=\"15\" font-weight=\"bold\">{}: the recorded layer{}</text>\n"
        "<text x=\"10\" y=\"44\" fill=\"#555\">{}</text>\n</svg>\n",
        where, side, kWidth, height, kWidth, height, who, t.shape.empty() ? "" : ", " + text(t.shape),
        !t.available ? text("not recorded: " + (t.why.empty() ? std::string("no reason given") : t.why))
                     : "no copy or kernel was recorded");
  }
  // Lanes: (stream, direction), in that order; records past kMaxLanes lanes are counted, not drawn.
  std::map<std::pair<std::uint32_t, int>, int> lanes;
  for (const Record& r : t.records) lanes.emplace(std::pair{r.stream, lane_order(r.kind)}, 0);
  int n = 0;
  for (auto& [key, index] : lanes) index = n++;
  const int shown = std::min<int>(n, int(kMaxLanes));
  std::size_t hidden = 0;
  for (const Record& r : t.records) hidden += lanes.at({r.stream, lane_order(r.kind)}) >= shown;

  double span = std::max(t.span_ms, scale_ms);
  for (const Record& r : t.records) span = std::max(span, r.end_ms);
  if (!(span > 0)) span = 1e-3;
  const double plot = kWidth - kLabels - kRight;
  const auto x_of = [&](double ms) { return kLabels + std::clamp(ms / span, 0.0, 1.0) * plot; };
  const int lanes_bottom = kTop + shown * (kLane + kGap);
  height = lanes_bottom + kBottom;

  const Overlap o = overlap_of(t);
  std::string caption =
      o.busy_ms > 0
          ? fmt::format("overlap {:.3f} ms of {:.3f} ms busy ({:.1f}%): a kernel running while a kernel or a copy runs on "
                        "another stream (shaded); {} stream{}, the layer {:.3f} ms",
                        o.overlap_ms, o.busy_ms, 100 * o.overlap_ms / o.busy_ms, o.streams, o.streams == 1 ? "" : "s", t.span_ms)
          : fmt::format("no GPU time recorded; the layer {:.3f} ms", t.span_ms);
  if (hidden > 0) caption += fmt::format("; {} record{} on {} more lanes not drawn", hidden, hidden == 1 ? "" : "s", n - shown);
  if (t.left_out > 0) caption += fmt::format("; {} record{} lost or left out", t.left_out, t.left_out == 1 ? "" : "s");

  std::string out = fmt::format(
      "<svg {} class=\"timeline\" data-side=\"{}\" width=\"{}\" height=\"{}\" viewBox=\"0 0 {} {}\" "
      "font-family=\"sans-serif\" font-size=\"12\">\n<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n"
      "<text x=\"10\" y=\"22\" font-size=\"15\" font-weight=\"bold\">{}: the recorded layer{}</text>\n"
      "<text class=\"caption\" x=\"10\" y=\"42\" fill=\"#333\">{}</text>\n",
      where, side, kWidth, height, kWidth, height, who, t.shape.empty() ? "" : ", " + text(t.shape), text(caption));

  // Ticks and grid, behind everything.
  const double step = tick_step(span);
  for (double v = 0; v <= span * (1 + 1e-9); v += step) {
    const double x = x_of(v);
    out += fmt::format("<line x1=\"{0:.1f}\" y1=\"{1}\" x2=\"{0:.1f}\" y2=\"{2}\" stroke=\"#e4e4e4\"/>\n"
                       "<text x=\"{0:.1f}\" y=\"{3}\" text-anchor=\"middle\" fill=\"#555\">{4:.4g}</text>\n",
                       x, kTop - 6, lanes_bottom, lanes_bottom + 14, v);
  }
  out += fmt::format("<text x=\"{:.1f}\" y=\"{}\" text-anchor=\"middle\" fill=\"#555\">ms since the layer's start "
                     "(hover a bar for its name and times)</text>\n",
                     kLabels + plot / 2, lanes_bottom + 34);
  for (const auto& [a, b] : o.spans) {
    const double x0 = x_of(a), x1 = x_of(b);
    out += fmt::format("<rect class=\"overlap\" x=\"{:.2f}\" y=\"{}\" width=\"{:.2f}\" height=\"{}\" fill=\"#ffd54f\" "
                       "fill-opacity=\"0.45\"><title>overlap {:.3f} to {:.3f} ms</title></rect>\n",
                       x0, kTop - 4, std::max(x1 - x0, 0.5), lanes_bottom - kTop + 2, a, b);
  }
  // Lane labels, the kit's words and numbers only.
  for (const auto& [key, index] : lanes) {
    if (index >= shown) continue;
    const int y = kTop + index * (kLane + kGap);
    out += fmt::format("<text x=\"{}\" y=\"{}\" text-anchor=\"end\" fill=\"#333\">stream {} {}</text>\n", kLabels - 8,
                       y + kLane - 4, key.first, kLaneNames[key.second]);
  }
  for (const Record& r : t.records) {
    const int lane = lanes.at({r.stream, lane_order(r.kind)});
    if (lane >= shown) continue;
    const double x0 = x_of(r.start_ms), x1 = x_of(r.end_ms);
    out += fmt::format("<rect class=\"bar\" data-kind=\"{}\" x=\"{:.2f}\" y=\"{}\" width=\"{:.2f}\" height=\"{}\" "
                       "fill=\"{}\" stroke=\"#222\" stroke-width=\"0.3\"><title>{}</title></rect>\n",
                       kKinds[lane_order(r.kind)], x0, kTop + lane * (kLane + kGap), std::max(x1 - x0, 0.75), kLane,
                       kColors[lane_order(r.kind)], text(describe(r)));
  }
  return out + "</svg>\n";
}

}  // namespace

std::string svg(const Timeline& t, double scale_ms) {
  int height = 0;
  return chart(t, "xmlns=\"http://www.w3.org/2000/svg\"", scale_ms, height);
}

double common_scale(const std::vector<Timeline>& timelines) {
  double scale = 0;
  for (const Timeline& t : timelines) {
    scale = std::max(scale, t.span_ms);
    for (const Record& r : t.records) scale = std::max(scale, r.end_ms);
  }
  return scale;
}

std::string svg_file(const std::vector<Timeline>& timelines, const std::string& heading) {
  constexpr int kHead = 64;
  std::string body;
  int y = kHead;
  const double scale = common_scale(timelines);
  for (const Timeline& t : timelines) {
    int height = 0;
    body += chart(t, fmt::format("x=\"0\" y=\"{}\"", y), scale, height);
    y += height + 10;
  }
  return fmt::format(
      "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
      "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{0}\" height=\"{1}\" viewBox=\"0 0 {0} {1}\" "
      "font-family=\"sans-serif\">\n<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n"
      "<text x=\"10\" y=\"24\" font-size=\"17\" font-weight=\"bold\">labkit grade: {2}</text>\n"
      "<text x=\"10\" y=\"46\" font-size=\"13\" fill=\"#555\">One recorded layer, the lab's and the baseline's: a lane per "
      "stream and copy direction; shaded: overlap</text>\n{3}</svg>\n",
      kWidth, y, text(heading), body);
}

}  // namespace labkit::timeline
