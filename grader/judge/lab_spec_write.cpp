// Writing calibrated targets into a lab.json (grader/judge/lab_spec.h, `labkit calibrate --write`):
// the file is edited as text, line by line, so that the instructor's layout, comments-by-order
// and every other key stay as written; the result is read back as a lab.json, and the old text
// restored if it does not validate.
#include <fmt/core.h>

#include <nlohmann/json.hpp>

#include <fstream>
#include <regex>
#include <sstream>

#include "grader/judge/lab_spec.h"
#include "grader/judge/text_lines.h"

namespace labkit {
namespace {

namespace fs = std::filesystem;

std::string read_text(const fs::path& file) {
  std::ifstream in(file);
  if (!in) throw LabSpecError(fmt::format("{}: cannot open the lab description", file.string()));
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

void write_text(const fs::path& file, const std::string& text) {
  std::ofstream out(file);
  out << text;
  if (!out) throw LabSpecError(fmt::format("{}: cannot write", file.string()));
}

// Writes `updated`, validates it, and puts `original` back when it is not a valid lab.json.
void replace_checked(const fs::path& file, const std::string& original, const std::string& updated) {
  write_text(file, updated);
  try {
    load_lab_spec(file);
  } catch (...) {
    write_text(file, original);
    throw;
  }
}

std::string join_lines(const std::vector<std::string>& lines) {
  std::string out;
  for (const auto& l : lines) out += l + '\n';
  return out;
}

std::string entry_line(const GpuTarget& t) {
  nlohmann::ordered_json v;
  v["target_speedup"] = std::round(t.target_speedup * 100) / 100;
  const auto add = [&](const char* key, double x, double scale) {
    if (x > 0) v[key] = std::round(x * scale) / scale;
  };
  add("solution_speedup", t.solution_speedup, 1000);
  add("solution_low", t.solution_low, 1000);
  add("solution_high", t.solution_high, 1000);
  if (t.batch > 0) v["batch"] = t.batch;
  add("margin", t.margin, 100);
  if (!t.driver.empty()) v["driver"] = t.driver;
  if (!t.date.empty()) v["date"] = t.date;
  // One line per GPU, spaced as the kit's lab.json files are.
  std::string body = v.dump();
  std::string spaced;
  bool in_string = false;
  for (std::size_t i = 0; i < body.size(); ++i) {
    const char c = body[i];
    spaced += c;
    if (c == '"' && (i == 0 || body[i - 1] != '\\')) in_string = !in_string;
    if (!in_string && (c == ':' || c == ',')) spaced += ' ';
  }
  return fmt::format("    {}: {}", nlohmann::json(t.gpu).dump(), spaced);
}

}  // namespace

void write_gpu_target(const fs::path& file, const GpuTarget& target) {
  const std::string original = read_text(file);
  std::vector<std::string> lines = split_lines(original);
  static const std::regex open_block(R"(^\s*"targets_by_gpu"\s*:\s*\{\s*$)");
  static const std::regex close_block(R"(^\s*\}\s*(,?)\s*$)");
  static const std::regex top_target(R"(^  "target_speedup"\s*:.*,\s*$)");
  const std::string key = nlohmann::json(target.gpu).dump() + ":";

  std::size_t open = lines.size();
  for (std::size_t i = 0; i < lines.size(); ++i)
    if (std::regex_match(lines[i], open_block)) open = i;
  if (open == lines.size()) {
    if (original.find("\"targets_by_gpu\"") != std::string::npos)
      throw LabSpecError(fmt::format("{}: \"targets_by_gpu\" is not laid out one GPU per line, between a line "
                                     "`\"targets_by_gpu\": {{` and a line `}},`: edit it by hand",
                                     file.string()));
    std::size_t at = lines.size();
    for (std::size_t i = 0; i < lines.size(); ++i)
      if (std::regex_match(lines[i], top_target)) at = i;
    if (at == lines.size())
      throw LabSpecError(fmt::format("{}: no line `  \"target_speedup\": <number>,` to add \"targets_by_gpu\" after",
                                     file.string()));
    lines.insert(lines.begin() + static_cast<long>(at) + 1, {"  \"targets_by_gpu\": {", entry_line(target), "  },"});
    replace_checked(file, original, join_lines(lines));
    return;
  }
  std::size_t close = open + 1;
  while (close < lines.size() && !std::regex_match(lines[close], close_block)) ++close;
  if (close == lines.size())
    throw LabSpecError(fmt::format("{}: \"targets_by_gpu\" has no closing line `}},`", file.string()));
  std::vector<std::string> entries;
  for (std::size_t i = open + 1; i < close; ++i) {
    std::string e = lines[i];
    while (!e.empty() && (e.back() == ',' || e.back() == ' ')) e.pop_back();
    const auto first = e.find_first_not_of(' ');
    if (first == std::string::npos) continue;
    if (e.compare(first, key.size(), key) != 0) entries.push_back(e);
  }
  entries.push_back(entry_line(target));
  std::sort(entries.begin(), entries.end());
  for (std::size_t i = 0; i + 1 < entries.size(); ++i) entries[i] += ",";
  lines.erase(lines.begin() + static_cast<long>(open) + 1, lines.begin() + static_cast<long>(close));
  lines.insert(lines.begin() + static_cast<long>(open) + 1, entries.begin(), entries.end());
  replace_checked(file, original, join_lines(lines));
}

void write_default_target(const fs::path& file, double target) {
  const std::string original = read_text(file);
  static const std::regex key(R"(((?:^|\n)  "target_speedup"\s*:\s*)(-?[0-9][0-9.eE+-]*))");
  std::smatch m;
  if (!std::regex_search(original, m, key))
    throw LabSpecError(fmt::format("{}: no top-level \"target_speedup\": <number> to replace", file.string()));
  replace_checked(file, original, m.prefix().str() + m[1].str() + fmt::format("{:.2f}", target) + m.suffix().str());
}

}  // namespace labkit
