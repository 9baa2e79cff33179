// `labkit sweep`'s chart: time against the swept value, one line per grading shape
// (grader/tools/sweep.h). Same look as the kit's other charts (milestone.h compare_svg, bulk.h).
#include <fmt/core.h>

#include <algorithm>
#include <cmath>

#include "grader/judge/stats.h"
#include "grader/tools/sweep.h"
#include "grader/core/text_escape.h"

namespace labkit::sweep {
namespace {

constexpr int kWidth = 780, kHeight = 440, kLeft = 80, kRight = 180, kTop = 76, kBottom = 64, kPad = 28;
constexpr const char* kColors[] = {"#4c78a8", "#f58518", "#54a24b", "#b279a2", "#9d755d", "#e45756"};

bool power_of_two(long long v) { return v > 0 && (v & (v - 1)) == 0; }

// The step of about five ticks from 0 to `top`: 1, 2, 2.5 or 5 times a power of ten.
double tick_step(double top) {
  const double raw = top / 5, mag = std::pow(10.0, std::floor(std::log10(raw)));
  for (double m : {1.0, 2.0, 2.5, 5.0})
    if (m * mag >= raw) return m * mag;
  return 10 * mag;
}

}  // namespace

std::string svg(const Sweep& s) {
  const auto esc = xml_escape;
  const auto attr = html_escape;
  const int plot_w = kWidth - kLeft - kRight, plot_h = kHeight - kTop - kBottom;
  const int bottom = kTop + plot_h;

  // x: log2 of the value when every value is a power of two, else the value's place in the list.
  std::vector<long long> values;
  for (const Row& r : s.rows) values.push_back(std::stoll(r.value));
  const bool log_axis = values.size() > 1 && std::all_of(values.begin(), values.end(), power_of_two);
  std::vector<double> at;  // the position of each row's value along x, 0..1
  if (log_axis) {
    const auto [lo, hi] = std::minmax_element(values.begin(), values.end());
    const double l0 = std::log2(double(*lo)), l1 = std::log2(double(*hi));
    for (long long v : values) at.push_back(l1 > l0 ? (std::log2(double(v)) - l0) / (l1 - l0) : 0.5);
  } else {
    for (std::size_t i = 0; i < values.size(); ++i) at.push_back(values.size() > 1 ? double(i) / double(values.size() - 1) : 0.5);
  }
  auto x_of = [&](std::size_t row) { return kLeft + kPad + at[row] * (plot_w - 2 * kPad); };

  // The shapes in the judge's order, and the y range (0 to the slowest time, lab or baseline).
  std::vector<std::string> shapes;
  double top = 0;
  for (const Row& r : s.rows) {
    if (!r.built) continue;
    for (const ShapeTiming& t : r.result.timing) {
      if (std::find(shapes.begin(), shapes.end(), t.name) == shapes.end()) shapes.push_back(t.name);
      top = std::max({top, t.lab_ms, t.base_ms});
    }
  }
  if (top <= 0) top = 1;
  const double step = tick_step(top);
  top = std::ceil(top / step - 1e-9) * step;
  auto y_of = [&](double ms) { return bottom - ms / top * plot_h; };

  const std::string what = time_label(s);
  std::string out = fmt::format(
      "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{}\" height=\"{}\" font-family=\"sans-serif\" font-size=\"13\">\n"
      "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n"
      "<text x=\"10\" y=\"22\" font-size=\"16\" font-weight=\"bold\">{}{}: {} against {} on {}</text>\n"
      "<text x=\"10\" y=\"42\" fill=\"#555\">batch {}; the lab's median per build, lower is faster; dashed: the baseline "
      "timed beside it</text>\n",
      kWidth, kHeight, esc(s.lab), s.role == "lab" ? "" : esc(" (" + s.role + ")"), esc(what), esc(s.param),
      esc(s.device.empty() ? "no GPU" : s.device), s.batch);

  // Axes, grid and ticks.
  for (double v = 0; v <= top + step / 2; v += step) {
    const double y = y_of(v);
    out += fmt::format("<line x1=\"{}\" y1=\"{:.1f}\" x2=\"{}\" y2=\"{:.1f}\" stroke=\"#e4e4e4\"/>\n", kLeft, y,
                       kLeft + plot_w, y);
    out += fmt::format("<text x=\"{}\" y=\"{:.1f}\" text-anchor=\"end\" fill=\"#555\">{:.4g}</text>\n", kLeft - 6, y + 4, v);
  }
  out += fmt::format("<line x1=\"{0}\" y1=\"{1}\" x2=\"{0}\" y2=\"{2}\" stroke=\"#333\"/>\n", kLeft, kTop, bottom);
  out += fmt::format("<line x1=\"{0}\" y1=\"{1}\" x2=\"{2}\" y2=\"{1}\" stroke=\"#333\"/>\n", kLeft, bottom, kLeft + plot_w);
  for (std::size_t i = 0; i < s.rows.size(); ++i) {
    const double x = x_of(i);
    out += fmt::format("<line x1=\"{0:.1f}\" y1=\"{1}\" x2=\"{0:.1f}\" y2=\"{2}\" stroke=\"#333\"/>\n", x, bottom, bottom + 5);
    out += fmt::format("<text x=\"{:.1f}\" y=\"{}\" text-anchor=\"middle\">{}</text>\n", x, bottom + 19, esc(s.rows[i].value));
  }
  out += fmt::format("<text x=\"{}\" y=\"{}\" text-anchor=\"middle\">{}{}</text>\n", kLeft + plot_w / 2, kHeight - 14,
                     esc(s.param), log_axis ? " (log2 axis)" : "");
  out += fmt::format("<text transform=\"translate(22,{}) rotate(-90)\" text-anchor=\"middle\">{} (ms)</text>\n",
                     kTop + plot_h / 2, esc(what));

  // One series per grading shape: its line through the measured points, and its baseline.
  for (std::size_t k = 0; k < shapes.size(); ++k) {
    const char* color = kColors[k % std::size(kColors)];
    const std::string name = shape_label(s, shapes[k]);
    std::vector<std::pair<double, double>> points;  // (x, ms)
    std::vector<double> base;
    std::string circles;
    for (std::size_t i = 0; i < s.rows.size(); ++i) {
      const Row& r = s.rows[i];
      if (!r.built) continue;
      for (const ShapeTiming& t : r.result.timing) {
        if (t.name != shapes[k] || t.lab_ms <= 0) continue;
        points.emplace_back(x_of(i), t.lab_ms);
        if (t.base_ms > 0) base.push_back(t.base_ms);
        circles += fmt::format(
            "<circle class=\"point\" cx=\"{:.1f}\" cy=\"{:.1f}\" r=\"4\" fill=\"{}\" data-value=\"{}\" data-ms=\"{}\">"
            "<title>{} {}={}: {:.4f} ms, {:.2f}x</title></circle>\n",
            x_of(i), y_of(t.lab_ms), color, attr(r.value), t.lab_ms, esc(name), esc(s.param), esc(r.value), t.lab_ms,
            t.speedup);
      }
    }
    std::sort(points.begin(), points.end());
    std::string coords;
    for (const auto& [x, ms] : points) coords += fmt::format("{}{:.1f},{:.1f}", coords.empty() ? "" : " ", x, y_of(ms));
    out += fmt::format("<g class=\"series\" data-shape=\"{}\">\n", attr(name));
    out += fmt::format("<polyline class=\"line\" fill=\"none\" stroke=\"{}\" stroke-width=\"2\" points=\"{}\"/>\n", color, coords);
    out += circles;
    if (!base.empty()) {
      const double b = stats::median(base);
      out += fmt::format("<line class=\"baseline\" data-ms=\"{}\" x1=\"{}\" y1=\"{:.1f}\" x2=\"{}\" y2=\"{:.1f}\" stroke=\"{}\" "
                         "stroke-dasharray=\"6 4\"/>\n", b, kLeft, y_of(b), kLeft + plot_w, y_of(b), color);
    }
    out += "</g>\n";
    const int ly = kTop + 10 + static_cast<int>(k) * 22;
    out += fmt::format("<line x1=\"{0}\" y1=\"{1}\" x2=\"{2}\" y2=\"{1}\" stroke=\"{3}\" stroke-width=\"2\"/>"
                       "<text x=\"{4}\" y=\"{5}\">{6}</text>\n",
                       kLeft + plot_w + 16, ly, kLeft + plot_w + 40, color, kLeft + plot_w + 46, ly + 4, esc(name));
  }
  if (shapes.empty())
    out += fmt::format("<text x=\"{}\" y=\"{}\" text-anchor=\"middle\" fill=\"#b00\">no value was timed</text>\n",
                       kLeft + plot_w / 2, kTop + plot_h / 2);

  // Values that did not pass: their verdict, in red, above the value.
  for (std::size_t i = 0; i < s.rows.size(); ++i) {
    const std::string v = row_verdict(s.rows[i]);
    if (v == verdict::kPassed) continue;
    out += fmt::format("<text class=\"failed\" x=\"{:.1f}\" y=\"{}\" text-anchor=\"middle\" fill=\"#b00\" "
                       "font-size=\"12\">{}</text>\n", x_of(i), kTop - 8, esc(v));
  }
  return out + "</svg>\n";
}

}  // namespace labkit::sweep
