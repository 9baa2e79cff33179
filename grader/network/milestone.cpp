// milestone.cpp — tables and chart of `labkit report` (see grader/network/milestone.h).
#include "grader/network/milestone.h"

#include "grader/network/course.h"
#include "grader/judge/roofline.h"
#include "grader/core/text_escape.h"

#include <fmt/core.h>

#include <algorithm>
#include <optional>
#include <stdexcept>

namespace labkit::milestone {
namespace {

using nlohmann::json;

std::string ms(double v) { return fmt::format("{:.3f} ms", v); }
std::string sec(double v) { return fmt::format("{:.2f} s", v); }
std::string acc(double v) { return fmt::format("{:.4f}", v); }

// LaTeX's specials in names and messages.
std::string tex_escape(const std::string& s) {
  std::string out;
  for (char c : s) {
    if (c == '_' || c == '%' || c == '&' || c == '#' || c == '$') out += '\\';
    out += c;
  }
  return out;
}

std::string one_line(std::string s) {
  std::replace(s.begin(), s.end(), '\n', ' ');
  return s;
}

// A plain table in one of the text formats: a header, rows of cells, failures spanning the row.
struct Table {
  std::vector<std::string> header;
  std::vector<std::vector<std::string>> rows;  // a row of one cell after the label is a failure

  std::string render(Format f, const std::string& caption) const {
    std::string out;
    const std::size_t n = header.size();
    switch (f) {
      case Format::md: {
        if (!caption.empty()) out += caption + "\n\n";
        out += "| " + join(header, " | ") + " |\n|";
        for (std::size_t i = 0; i < n; ++i) out += i == 0 ? ":---|" : "---:|";
        out += "\n";
        for (const auto& r : rows) {
          auto cells = r;
          if (cells.size() == 2 && n > 2) {  // failure: the message, then empty cells
            cells[1] = "failed: " + one_line(cells[1]);
            cells.resize(n);
          }
          out += "| " + join(cells, " | ") + " |\n";
        }
        return out;
      }
      case Format::csv: {
        std::vector<std::string> h = header;
        h.push_back("error");
        std::vector<std::string> q;
        for (const auto& c : h) q.push_back(csv_field(c));
        out += join(q, ",") + "\n";
        for (const auto& r : rows) {
          std::vector<std::string> cells;
          if (r.size() == 2 && n > 2) {
            cells.push_back(csv_field(r[0]));
            cells.resize(n, "");
            cells.push_back(csv_field(one_line(r[1])));
          } else {
            for (const auto& c : r) cells.push_back(csv_field(c));
            cells.push_back("");
          }
          out += join(cells, ",") + "\n";
        }
        return out;
      }
      case Format::tex: {
        out += "\\begin{tabular}{l" + std::string(n - 1, 'r') + "}\n\\hline\n";
        std::vector<std::string> h;
        for (const auto& c : header) h.push_back(tex_escape(c));
        out += join(h, " & ") + " \\\\\n\\hline\n";
        for (const auto& r : rows) {
          if (r.size() == 2 && n > 2) {
            out += tex_escape(r[0]) + " & \\multicolumn{" + std::to_string(n - 1) + "}{l}{failed: " +
                   tex_escape(one_line(r[1])) + "} \\\\\n";
          } else {
            std::vector<std::string> cells;
            for (const auto& c : r) cells.push_back(tex_escape(c));
            out += join(cells, " & ") + " \\\\\n";
          }
        }
        out += "\\hline\n\\end{tabular}\n";
        if (!caption.empty()) {
          std::string plain = one_line(caption);
          std::erase(plain, '*');  // the Markdown bold of the caption
          out = "% " + plain + "\n" + out;
        }
        return out;
      }
      case Format::json: break;
    }
    throw std::logic_error("Table::render: json is rendered from the runs");
  }

  static std::string join(const std::vector<std::string>& v, const std::string& sep) {
    std::string out;
    for (std::size_t i = 0; i < v.size(); ++i) out += (i ? sep : "") + v[i];
    return out;
  }
};

double conv_total(const network::RunResult& r) { return r.conv[0].op_ms + r.conv[1].op_ms; }

// The roofline floor of conv1 + conv2 at the run's precision class (grader/judge/roofline.h), and how
// much of it the run reached; absent where a layer has none (the CPU, older files).
struct Floor {
  double ms = 0, pct = 0;
  std::string bound;  // "memory (DRAM bandwidth)", or per layer where they differ; "": a file older than the bounds
  std::string short_bound;  // "memory", "compute", "conv1 memory, conv2 compute"
};

std::string first_word(const std::string& s) { return s.substr(0, s.find(' ')); }

std::optional<Floor> floor_of(const network::RunResult& r) {
  const network::LayerTiming &a = r.conv[0], &b = r.conv[1];
  if (a.roofline_ms <= 0 || b.roofline_ms <= 0 || conv_total(r) <= 0) return std::nullopt;
  Floor f;
  f.ms = a.roofline_ms + b.roofline_ms;
  f.pct = 100 * f.ms / conv_total(r);
  if (a.roofline_bound == b.roofline_bound) {
    f.bound = a.roofline_bound;
    f.short_bound = first_word(a.roofline_bound);
  } else {
    f.bound = "conv1 " + a.roofline_bound + ", conv2 " + b.roofline_bound;
    f.short_bound = "conv1 " + first_word(a.roofline_bound) + ", conv2 " + first_word(b.roofline_bound);
  }
  return f;
}

}  // namespace

json runs_json(const std::vector<Entry>& rows) {
  json out = json::array();
  for (const Entry& e : rows) {
    json j = e.run ? network::to_json(*e.run) : json{{"error", e.error}};
    j["name"] = e.name;
    j["batch"] = e.batch;
    if (e.layer_timed) j["layer_timed"] = true;
    out.push_back(j);
  }
  return out;
}

std::string render_cells(const Cells& c, Format f) { return Table{c.header, c.rows}.render(f, c.caption); }

// The first GPU run's device, for captions: every run of a report is on one machine.
std::string device_of(const std::vector<Entry>& rows) {
  for (const Entry& e : rows)
    if (e.run && e.run->device != "CPU") return e.run->device;
  return "CPU";
}

Format parse_format(const std::string& name) {
  if (name == "md") return Format::md;
  if (name == "csv") return Format::csv;
  if (name == "tex") return Format::tex;
  if (name == "json") return Format::json;
  throw std::invalid_argument("unknown format '" + name + "': use md, csv, tex or json");
}

std::string milestone_table(const std::string& name, const std::vector<Entry>& rows, Format f) {
  if (f == Format::json) return json{{"name", name}, {"runs", runs_json(rows)}}.dump(2) + "\n";
  return render_cells(milestone_cells(name, rows, f == Format::csv), f);
}

Cells milestone_cells(const std::string& name, const std::vector<Entry>& rows, bool csv) {
  Cells t;
  t.header = csv ? std::vector<std::string>{"batch_size", "op_time_1_ms", "op_time_2_ms", "total_execution_time_s", "accuracy"}
                 : std::vector<std::string>{"Batch Size", "Op Time 1", "Op Time 2", "Total Execution Time", "Accuracy"};
  for (const Entry& e : rows) {
    if (!e.run) {
      t.rows.push_back({std::to_string(e.batch), e.error});
      continue;
    }
    const auto& r = *e.run;
    if (csv) {
      t.rows.push_back({std::to_string(e.batch), fmt::format("{:.6f}", r.conv[0].op_ms), fmt::format("{:.6f}", r.conv[1].op_ms),
                        fmt::format("{:.4f}", r.total_s), fmt::format("{:.4f}", r.accuracy)});
    } else {
      t.rows.push_back({std::to_string(e.batch), ms(r.conv[0].op_ms), ms(r.conv[1].op_ms), sec(r.total_s), acc(r.accuracy)});
    }
  }
  t.caption = fmt::format("**{}** on {}", name, device_of(rows));
  return t;
}

std::string compare_table(int batch, const std::vector<Entry>& rows, Format f) {
  if (f == Format::json) return json{{"batch", batch}, {"runs", runs_json(rows)}}.dump(2) + "\n";
  return render_cells(compare_cells(batch, rows, f == Format::csv), f);
}

Cells compare_cells(int batch, const std::vector<Entry>& rows, bool csv) {
  const network::RunResult* base = !rows.empty() && rows.front().run ? &*rows.front().run : nullptr;
  Cells t;
  t.header = csv ? std::vector<std::string>{"implementation", "conv1_ms", "conv2_ms", "conv_total_ms", "speedup",
                                            "precision", "floor_ms", "floor_bound", "pct_of_floor",
                                            "total_execution_time_s", "accuracy", "differs_from_first"}
                 : std::vector<std::string>{"Implementation", "Conv 1", "Conv 2", "Conv total", "Speedup", "Floor",
                                            "% of floor", "Total Execution Time", "Accuracy",
                                            "Differs from " + (rows.empty() ? std::string("first") : rows.front().name)};
  for (const Entry& e : rows) {
    if (!e.run) {
      t.rows.push_back({e.name, e.error});
      continue;
    }
    const auto& r = *e.run;
    const double speedup = base ? conv_total(*base) / conv_total(r) : 0;
    const std::string diff = base ? std::to_string(network::count_differing(base->predictions, r.predictions)) : "";
    // The floor of the row's own precision class: 100% is as fast as that class can go here.
    const std::optional<Floor> f = floor_of(r);
    const std::string share = f ? roofline::share_text(f->pct) : "";
    if (csv) {
      t.rows.push_back({e.name, fmt::format("{:.6f}", r.conv[0].op_ms), fmt::format("{:.6f}", r.conv[1].op_ms),
                        fmt::format("{:.6f}", conv_total(r)), base ? fmt::format("{:.3f}", speedup) : "", r.precision,
                        f ? fmt::format("{:.6f}", f->ms) : "", f ? f->bound : "",
                        !f ? "" : f->pct > 100 ? share : fmt::format("{:.1f}", f->pct), fmt::format("{:.4f}", r.total_s),
                        fmt::format("{:.4f}", r.accuracy), diff});
    } else {
      t.rows.push_back({e.name, ms(r.conv[0].op_ms), ms(r.conv[1].op_ms), ms(conv_total(r)),
                        base ? fmt::format("{:.2f}x", speedup) : "",
                        !f ? "" : f->bound.empty() ? fmt::format("{}, {}", ms(f->ms), r.precision)
                                                   : fmt::format("{}, {}: {}", ms(f->ms), r.precision, f->bound),
                        share,
                        sec(r.total_s), acc(r.accuracy), diff.empty() ? "" : diff + " images"});
    }
  }
  t.caption = fmt::format("**Batch {}** on {}: Op Times in ms, speedup of the conv total over {}; Floor: the roofline "
                          "floor of conv1 + conv2 at the row's precision class (fp32: fp32 FMA peak or DRAM bandwidth; "
                          "tf32, fp16, any: that tensor peak or DRAM bandwidth; grader/judge/roofline.h) and the bound that "
                          "decides it; % of floor: that floor over their time (100% is as fast as the class can go)",
                          batch, device_of(rows), rows.empty() ? "the first row" : rows.front().name);
  return t;
}

std::string compare_svg(int batch, const std::vector<Entry>& rows, const std::string& subtitle) {
  const int label_w = 220, bar_w = 480, row_h = 26, top = 64, right = 440;
  const int width = label_w + bar_w + right, height = top + row_h * static_cast<int>(rows.size()) + 56;
  double longest = 0;
  for (const Entry& e : rows)
    if (e.run) longest = std::max(longest, conv_total(*e.run));
  if (longest <= 0) longest = 1;
  const auto esc = xml_escape;
  std::string svg = fmt::format(
      "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{}\" height=\"{}\" font-family=\"sans-serif\" font-size=\"13\">\n"
      "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n"
      "<text x=\"10\" y=\"22\" font-size=\"16\" font-weight=\"bold\">Op Time at batch {} (ms, conv1 + conv2; shorter is faster)</text>\n"
      "<text x=\"10\" y=\"42\" fill=\"#555\">{}</text>\n",
      width, height, batch, esc(subtitle));
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const Entry& e = rows[i];
    const int y = top + static_cast<int>(i) * row_h;
    svg += fmt::format("<text x=\"{}\" y=\"{}\" text-anchor=\"end\">{}</text>\n", label_w - 8, y + 17, esc(e.name));
    if (!e.run) {
      svg += fmt::format("<text x=\"{}\" y=\"{}\" fill=\"#b00\">failed: {}</text>\n", label_w, y + 17,
                         esc(one_line(e.error).substr(0, 80)));
      continue;
    }
    const double w1 = bar_w * e.run->conv[0].op_ms / longest, w2 = bar_w * e.run->conv[1].op_ms / longest;
    // One group per implementation: its bar (conv1 and conv2 stacked) and its total.
    svg += fmt::format("<g class=\"bar\" data-name=\"{}\" data-ms=\"{}\">\n", html_escape(e.name), conv_total(*e.run));
    svg += fmt::format("<rect x=\"{}\" y=\"{}\" width=\"{:.1f}\" height=\"{}\" fill=\"#4c78a8\"/>\n", label_w, y + 4, w1, row_h - 8);
    svg += fmt::format("<rect x=\"{:.1f}\" y=\"{}\" width=\"{:.1f}\" height=\"{}\" fill=\"#f58518\"/>\n", label_w + w1, y + 4, w2, row_h - 8);
    // Its total, and the share of its own roofline floor (grader/judge/roofline.h): a tick where the floor
    // is, the share and the bound after the total.
    const std::optional<Floor> f = floor_of(*e.run);
    std::string share;
    const std::string bound = f && !f->short_bound.empty() ? ", " + f->short_bound : "";
    if (f && f->pct > 100) share = fmt::format(" · {} ({} floor{})", roofline::kAboveFloor, e.run->precision, bound);
    else if (f) share = fmt::format(" · {} of its {} floor{}", roofline::share_text(f->pct), e.run->precision,
                                    bound.empty() ? "" : " (" + bound.substr(2) + ")");
    svg += fmt::format("<text x=\"{:.1f}\" y=\"{}\">{:.3f}{}</text>\n</g>\n", label_w + w1 + w2 + 6, y + 17, conv_total(*e.run),
                       esc(share));
    if (f) {
      const double x = label_w + bar_w * std::min(f->ms / longest, 1.0);
      svg += fmt::format("<g class=\"roofline\" data-name=\"{}\" data-ms=\"{}\" data-pct=\"{}\"><line x1=\"{:.1f}\" y1=\"{}\" "
                         "x2=\"{:.1f}\" y2=\"{}\" stroke=\"#2a7\" stroke-width=\"2\"/></g>\n",
                         html_escape(e.name), f->ms, f->pct, x, y + 1, x, y + row_h - 1);
    }
  }
  // The judge's plausibility bound depends on the shapes and the GPU only: any run that recorded
  // both layers' gives it for the whole chart (floor_ms, red, labelled above the bars). The
  // roofline floors differ by precision class: each bar has its own tick (green, above).
  const int bottom = top + row_h * static_cast<int>(rows.size());
  auto floor_line = [&](double network::LayerTiming::*field, const char* cls, const char* color, const char* dash,
                        const char* label, int label_y) {
    for (const Entry& e : rows) {
      if (!e.run || e.run->conv[0].*field <= 0 || e.run->conv[1].*field <= 0) continue;
      const double floor = e.run->conv[0].*field + e.run->conv[1].*field;
      const double x = label_w + bar_w * std::min(floor / longest, 1.0);
      svg += fmt::format("<g class=\"{}\" data-ms=\"{}\"><line x1=\"{:.1f}\" y1=\"{}\" x2=\"{:.1f}\" y2=\"{}\" "
                         "stroke=\"{}\" stroke-dasharray=\"{}\"/>\n<text x=\"{:.1f}\" y=\"{}\" fill=\"{}\">{} {:.3f} "
                         "ms</text></g>\n",
                         cls, floor, x, top - 4, x, bottom, color, dash, x + 4, label_y, color, label, floor);
      return;
    }
  };
  floor_line(&network::LayerTiming::floor_ms, "floor", "#b00", "4 3", "physical floor", top - 8);
  const int ly = height - 18;
  svg += fmt::format("<rect x=\"{}\" y=\"{}\" width=\"12\" height=\"12\" fill=\"#4c78a8\"/><text x=\"{}\" y=\"{}\">conv1</text>\n",
                     label_w, ly - 10, label_w + 16, ly);
  svg += fmt::format("<rect x=\"{}\" y=\"{}\" width=\"12\" height=\"12\" fill=\"#f58518\"/><text x=\"{}\" y=\"{}\">conv2</text>\n",
                     label_w + 80, ly - 10, label_w + 96, ly);
  svg += fmt::format("<line x1=\"{}\" y1=\"{}\" x2=\"{}\" y2=\"{}\" stroke=\"#2a7\" stroke-width=\"2\"/><text x=\"{}\" "
                     "y=\"{}\">roofline floor of the row's precision class</text>\n",
                     label_w + 166, ly - 12, label_w + 166, ly + 2, label_w + 174, ly);
  return svg + "</svg>\n";
}

namespace {
// Under a batch's tables (md): where the Total Execution Time went, then, for the rows that ran
// through a harness, where its start-up went.
std::string where_it_went(int batch, const std::vector<Entry>& rows, const std::string& gap) {
  std::string text = render_cells(breakdown_cells(batch, rows, false), Format::md) + gap;
  if (const Cells startup = startup_cells(batch, rows); !startup.rows.empty()) text += render_cells(startup, Format::md) + gap;
  return text;
}
}  // namespace

std::string render(const Report& r, Format f) {
  const std::string gap = f == Format::json ? "" : "\n";
  std::string text;
  if (!r.course_reference.empty()) {
    for (std::size_t k = 0; k < r.batches.size(); ++k) {
      std::vector<Entry> column;
      for (const auto& row : r.runs) column.push_back(row.at(k));
      text += course_table(r.batches[k], column, r.course_reference, f) + gap;
    }
  } else if (r.compare) {
    for (std::size_t k = 0; k < r.batches.size(); ++k) {
      std::vector<Entry> column;
      for (const auto& row : r.runs) column.push_back(row.at(k));
      text += compare_table(r.batches[k], column, f) + gap;
      if (f == Format::md && k + 1 == r.batches.size()) text += where_it_went(r.batches[k], column, gap);
    }
  } else {
    for (const auto& row : r.runs) {
      text += milestone_table(row.empty() ? "" : row.front().name, row, f) + gap;
      if (f == Format::md && !row.empty() && row.back().run) text += where_it_went(row.back().batch, {row.back()}, gap);
    }
  }
  if (f == Format::md) {
    for (const auto& row : r.runs)
      if (!row.empty() && row.front().layer_timed)
        text += fmt::format("Note: {} is graded on Layer Time (prolog + op + epilog, host to host, on pinned host "
                            "arrays, as this program's are); the Op Time above is not what it optimizes.\n\n", row.front().name);
  }
  return text;
}

}  // namespace labkit::milestone
