// `labkit sweep`'s parameter, the check that a kernel.cu declares it, and the table
// (grader/tools/sweep.h; the chart is sweep_svg.cpp).
#include "grader/tools/sweep.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cctype>
#include <regex>
#include <sstream>

#include "grader/core/text_escape.h"

namespace labkit::sweep {
namespace {

using nlohmann::json;

bool identifier(const std::string& s) {
  if (s.empty() || std::isdigit(static_cast<unsigned char>(s[0]))) return false;
  return std::all_of(s.begin(), s.end(), [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; });
}

std::string first_line(const std::string& s) { return s.substr(0, s.find('\n')); }

// The grading shapes in the order the judge timed them (every row times the same ones).
std::vector<std::string> shapes_of(const Sweep& s) {
  std::vector<std::string> names;
  for (const Row& r : s.rows)
    for (const ShapeTiming& t : r.result.timing)
      if (r.built && std::find(names.begin(), names.end(), t.name) == names.end()) names.push_back(t.name);
  return names;
}

const ShapeTiming* timing_of(const Row& r, const std::string& shape) {
  if (!r.built) return nullptr;
  for (const ShapeTiming& t : r.result.timing)
    if (t.name == shape && t.lab_ms > 0) return &t;
  return nullptr;
}

std::pair<int, int> cases_of(const Row& r) {
  int passed = 0;
  for (const CaseReport& c : r.result.cases) passed += c.passed;
  return {passed, static_cast<int>(r.result.cases.size())};
}

std::string speedup_text(double x, bool csv) { return csv ? fmt::format("{:.4f}", x) : fmt::format("{:.2f}x", x); }

// Why a value did not pass, in one line.
std::string why(const Row& r) {
  if (!r.built) {  // the compiler's first error says the most
    std::istringstream in(r.build_log);
    for (std::string line; std::getline(in, line);)
      if (line.find("error") != std::string::npos) return "build failed: " + line;
    return "build failed: " + first_line(r.build_log);
  }
  return r.result.verdict + (r.result.message.empty() ? "" : ": " + first_line(r.result.message));
}

}  // namespace

Param parse_param(const std::string& text) {
  const std::size_t eq = text.find('=');
  if (eq == std::string::npos)
    throw ParamError(fmt::format("--param \"{}\": no '=': write NAME=V1,V2,... (e.g. TILE=8,16,32)", text));
  Param p;
  p.name = text.substr(0, eq);
  if (!identifier(p.name))
    throw ParamError(fmt::format("--param \"{}\": \"{}\" is not a macro name (letters, digits and _, not starting with a digit)",
                                 text, p.name));
  const std::string list = text.substr(eq + 1);
  if (list.empty()) throw ParamError(fmt::format("--param \"{}\": no values after '=' (e.g. {}=8,16,32)", text, p.name));
  std::stringstream items(list);
  for (std::string v; std::getline(items, v, ',');) {
    const bool digits = !v.empty() && std::all_of(v.begin(), v.end(), [](char c) { return c >= '0' && c <= '9'; });
    if (v.empty()) throw ParamError(fmt::format("--param \"{}\": an empty value (two commas in a row, or one at an end)", text));
    if (!digits || v[0] == '0' || v.size() > 10 || std::stoll(v) > 2147483647LL)
      throw ParamError(fmt::format("--param \"{}\": \"{}\" is not a positive integer (1 to 2147483647, no sign or leading 0)",
                                   text, v));
    if (std::find(p.values.begin(), p.values.end(), v) != p.values.end())
      throw ParamError(fmt::format("--param \"{}\": {} is given twice", text, v));
    p.values.push_back(v);
  }
  if (list.back() == ',') throw ParamError(fmt::format("--param \"{}\": an empty value (two commas in a row, or one at an end)", text));
  return p;
}

void require_declared(const std::string& source, const std::string& file, const std::string& name) {
  const std::regex guard("^\\s*#\\s*(ifndef\\s+" + name + "\\b|if\\s+!\\s*defined\\s*\\(?\\s*" + name + "\\b)");
  const std::regex define("^\\s*#\\s*define\\s+" + name + "\\b");
  const std::regex constant("\\bconstexpr\\b[^=;]*\\b" + name + "\\s*=");
  bool defined = false, constexpr_ = false;
  std::istringstream in(source);
  for (std::string line; std::getline(in, line);) {
    if (std::regex_search(line, guard)) return;
    defined |= std::regex_search(line, define);
    constexpr_ |= std::regex_search(line, constant);
  }
  const std::string wrap = fmt::format("#ifndef {0} / #define {0} <its value> / #endif", name);
  if (defined)
    throw ParamError(fmt::format("{}: {} is #defined without an `#ifndef {}` around it, so a sweep's -D{}=... could not "
                                 "change it; write {}", file, name, name, name, wrap));
  if (constexpr_)
    throw ParamError(fmt::format("{}: {} is a constexpr constant; a sweep overrides a macro: replace it with {}", file,
                                 name, wrap));
  throw ParamError(fmt::format("{}: declares no {} to sweep (a sweep overrides a macro the file declares as {}); the "
                               "lab's README names its parameter", file, name, wrap));
}

Format parse_format(const std::string& name) {
  if (name == "md") return Format::md;
  if (name == "csv") return Format::csv;
  if (name == "json") return Format::json;
  throw std::invalid_argument("unknown format '" + name + "': use md, csv or json");
}

std::string time_label(const Sweep& s) { return s.timed_region == "layer" ? "Layer Time" : "Op Time"; }

std::string shape_label(const Sweep& s, const std::string& name) {
  const std::string batch = fmt::format(" B={}", s.batch);
  return name.ends_with(batch) && name.size() > batch.size() ? name.substr(0, name.size() - batch.size()) : name;
}

std::string row_verdict(const Row& r) { return r.built ? r.result.verdict : "build failed"; }

json to_json(const Sweep& s) {
  json rows = json::array();
  for (const Row& r : s.rows) {
    const auto [passed, total] = cases_of(r);
    json shapes = json::array();
    for (const ShapeTiming& t : r.built ? r.result.timing : std::vector<ShapeTiming>{})
      shapes.push_back({{"name", shape_label(s, t.name)}, {"shape", t.shape}, {"lab_ms", t.lab_ms}, {"baseline_ms", t.base_ms},
                        {"speedup", t.speedup}, {"speedup_low", t.low}, {"speedup_high", t.high}, {"samples", t.samples}});
    json row{{"value", std::stoll(r.value)}, {"built", r.built}, {"verdict", row_verdict(r)}};
    if (r.built) {
      row.update({{"message", r.result.message}, {"cases_passed", passed}, {"cases_total", total}, {"shapes", shapes},
                  {"speedup", r.result.speedup}, {"score", r.result.score.total}, {"max_score", r.result.score.max}});
    } else {
      row["build_log"] = r.build_log;
    }
    rows.push_back(row);
  }
  return {{"lab", s.lab}, {"role", s.role}, {"param", s.param}, {"timed", s.timed_region}, {"device", s.device},
          {"seed", std::to_string(s.seed)}, {"batch", s.batch}, {"rows", rows}};
}

std::string render(const Sweep& s, Format f) {
  if (f == Format::json) return to_json(s).dump(2, ' ', false, json::error_handler_t::replace) + "\n";
  const std::vector<std::string> shapes = shapes_of(s);
  const bool csv = f == Format::csv;
  std::vector<std::string> header{s.param, "verdict", "cases"};
  if (csv) header = {s.param, "verdict", "cases_passed", "cases_total"};
  for (const std::string& sh : shapes) {
    header.push_back(csv ? shape_label(s, sh) + "_ms" : fmt::format("{} {} (ms)", shape_label(s, sh), time_label(s)));
    header.push_back(csv ? shape_label(s, sh) + "_speedup" : shape_label(s, sh) + " speedup");
  }
  header.push_back(csv ? "speedup" : "speedup (geomean)");
  if (csv) header.push_back("error");

  std::vector<std::vector<std::string>> rows;
  for (const Row& r : s.rows) {
    const auto [passed, total] = cases_of(r);
    std::vector<std::string> cells{r.value, row_verdict(r)};
    if (csv) cells.insert(cells.end(), {r.built ? std::to_string(passed) : "", r.built ? std::to_string(total) : ""});
    else cells.push_back(r.built && total > 0 ? fmt::format("{}/{}", passed, total) : "");
    for (const std::string& sh : shapes) {
      const ShapeTiming* t = timing_of(r, sh);
      cells.push_back(!t ? "" : (csv ? fmt::format("{:.6f}", t->lab_ms) : fmt::format("{:.4f}", t->lab_ms)));
      cells.push_back(!t ? "" : speedup_text(t->speedup, csv));
    }
    const bool timed = r.built && r.result.speedup > 0;
    cells.push_back(!timed ? "" : speedup_text(r.result.speedup, csv));
    if (csv) cells.push_back(row_verdict(r) == verdict::kPassed ? "" : why(r));
    rows.push_back(std::move(cells));
  }

  std::string out;
  if (csv) {
    auto line = [&out](const std::vector<std::string>& cells) {
      std::vector<std::string> q;
      for (const std::string& c : cells) q.push_back(csv_field(c));
      out += fmt::format("{}\n", fmt::join(q, ","));
    };
    line(header);
    for (const auto& r : rows) line(r);
    return out;
  }
  // Markdown: a cell must not break the table (| and line breaks).
  auto cell = [](std::string c) {
    std::replace(c.begin(), c.end(), '\n', ' ');
    for (std::size_t at = 0; (at = c.find('|', at)) != std::string::npos; at += 2) c.replace(at, 1, "\\|");
    return c;
  };
  out += fmt::format("**{}**{} swept over {} on {}, batch {}, seed {}: the lab's median {} in ms and its speedup over "
                     "the baseline timed beside it\n\n",
                     cell(s.lab), s.role == "lab" ? "" : " (" + s.role + ")", cell(s.param),
                     s.device.empty() ? "no GPU" : cell(s.device), s.batch, s.seed, time_label(s));
  std::vector<std::string> h;
  for (const std::string& c : header) h.push_back(cell(c));
  out += fmt::format("| {} |\n|", fmt::join(h, " | "));
  for (std::size_t i = 0; i < header.size(); ++i) out += i < 2 ? ":---|" : "---:|";
  out += "\n";
  for (const auto& r : rows) {
    std::vector<std::string> c;
    for (const std::string& x : r) c.push_back(cell(x));
    out += fmt::format("| {} |\n", fmt::join(c, " | "));
  }
  bool noted = false;
  for (const Row& r : s.rows) {
    if (row_verdict(r) == verdict::kPassed) continue;
    out += fmt::format("{}- {}={}: {}\n", noted ? "" : "\n", s.param, r.value, cell(why(r)));
    noted = true;
  }
  return out;
}

}  // namespace labkit::sweep
