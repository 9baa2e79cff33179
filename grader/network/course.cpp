// course.cpp — the course's table of `labkit report --course` (see grader/network/course.h).
#include "grader/network/course.h"

#include <fmt/core.h>

#include <algorithm>
#include <cmath>

namespace labkit::milestone {
namespace {

using nlohmann::json;

double conv_sum(const network::RunResult& r) { return r.conv[0].op_ms + r.conv[1].op_ms; }

const Entry* find_row(const std::vector<Entry>& rows, const std::string& name) {
  auto it = std::find_if(rows.begin(), rows.end(), [&](const Entry& e) { return e.name == name; });
  return it == rows.end() ? nullptr : &*it;
}

// Why the vs column is empty ("" when it is not).
std::string no_reference(const Entry* ref, const std::string& reference) {
  if (!ref) return fmt::format("no run of {} in this report: no ratios", reference);
  if (!ref->run) return fmt::format("the reference {} failed: no ratios", reference);
  if (conv_sum(*ref->run) <= 0) return fmt::format("the reference {} recorded no time: no ratios", reference);
  return "";
}

}  // namespace

std::string solution_row(const std::string& lab) { return lab + " (solution)"; }

std::optional<double> course_ratio(const Entry& row, const Entry* reference) {
  if (!row.run || !reference || !reference->run || conv_sum(*reference->run) <= 0) return std::nullopt;
  return conv_sum(*row.run) / conv_sum(*reference->run);
}

std::string ratio_words(double ratio) {
  if (fmt::format("{:.2f}", ratio) == "1.00" || fmt::format("{:.2f}", 1 / ratio) == "1.00") return "same (1.00x)";
  return ratio > 1 ? fmt::format("{:.2f}x slower", ratio) : fmt::format("{:.2f}x faster", 1 / ratio);
}

Cells course_cells(int batch, const std::vector<Entry>& rows, const std::string& reference, bool csv) {
  const Entry* ref = find_row(rows, reference);
  const std::string missing = no_reference(ref, reference);
  Cells t;
  t.header = csv ? std::vector<std::string>{"implementation", "op_time_1_ms", "op_time_2_ms", "conv1_plus_conv2_ms",
                                            "time_ratio_to_reference", "vs_reference", "accuracy"}
                 : std::vector<std::string>{"Implementation", "Op Time 1 (conv1)", "Op Time 2 (conv2)", "conv1 + conv2",
                                            "vs " + reference, "Accuracy"};
  for (const Entry& e : rows) {
    if (!e.run) {
      t.rows.push_back({e.name, e.error});
      continue;
    }
    const auto& r = *e.run;
    const std::optional<double> ratio = course_ratio(e, ref);
    const std::string words = !ratio ? "" : &e == ref ? "reference" : ratio_words(*ratio);
    if (csv) {
      t.rows.push_back({e.name, fmt::format("{:.6f}", r.conv[0].op_ms), fmt::format("{:.6f}", r.conv[1].op_ms),
                        fmt::format("{:.6f}", conv_sum(r)), ratio ? fmt::format("{:.4f}", *ratio) : "", words,
                        fmt::format("{:.4f}", r.accuracy)});
    } else {
      t.rows.push_back({e.name, fmt::format("{:.3f} ms", r.conv[0].op_ms), fmt::format("{:.3f} ms", r.conv[1].op_ms),
                        fmt::format("{:.3f} ms", conv_sum(r)), words, fmt::format("{:.4f}", r.accuracy)});
    }
  }
  t.caption = fmt::format("**Course comparison, batch {}** on {}: each implementation's conv1 + conv2 Op Time against "
                          "{}'s (\"2.00x slower\": its sum takes twice as long; \"2.00x faster\": half as long)",
                          batch, device_of(rows), reference);
  if (!missing.empty()) t.caption += "; " + missing;
  return t;
}

std::string course_table(int batch, const std::vector<Entry>& rows, const std::string& reference, Format f) {
  if (f != Format::json) return render_cells(course_cells(batch, rows, reference, f == Format::csv), f);
  // The runs as every json report holds them (labkit report --from reads this back), each with its
  // sum and ratio.
  const Entry* ref = find_row(rows, reference);
  json runs = runs_json(rows);
  for (std::size_t i = 0; i < rows.size(); ++i) {
    if (!rows[i].run) continue;
    runs[i]["conv1_plus_conv2_ms"] = conv_sum(*rows[i].run);
    if (const auto ratio = course_ratio(rows[i], ref)) runs[i]["time_ratio_to_reference"] = *ratio;
  }
  return json{{"batch", batch}, {"course_reference", reference}, {"runs", runs}}.dump(2) + "\n";
}

}  // namespace labkit::milestone
