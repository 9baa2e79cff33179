// The files of `labkit grade` besides its report (saved_results.h).
#include "saved_results.h"

#include <fmt/core.h>

#include <cctype>
#include <filesystem>
#include <fstream>
#include <stdexcept>

#include "grader/tools/timeline.h"

namespace labkit::cli {
namespace {

using nlohmann::json;

// A file name made of the kit's safe characters (a lab id read from a file may hold anything).
std::string file_part(const std::string& s) {
  std::string out;
  for (char c : s.substr(0, 80)) out += std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' || c == '.' ? c : '_';
  return out.empty() || out[0] == '.' ? "lab" + out : out;
}

std::string text_of(const json& j, const char* key, const std::string& fallback) {
  return j.is_object() && j.contains(key) && j[key].is_string() ? j[key].get<std::string>() : fallback;
}

}  // namespace

std::string write_timeline(const json& r, const std::string& dir) {
  if (!r.is_object() || !r.contains("timeline") || !r["timeline"].is_array() || r["timeline"].empty()) return "";
  const json& lab = r.contains("lab") ? r["lab"] : json::object();
  const std::string id = text_of(lab, "id", ""), role = text_of(lab, "role", "lab");
  const std::filesystem::path file =
      std::filesystem::path(dir) / (file_part(id) + (role == "lab" ? "" : "-" + file_part(role)) + "-timeline.svg");
  std::vector<timeline::Timeline> charts;
  for (const json& t : r["timeline"]) charts.push_back(timeline::from_json(t));
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  std::ofstream out(file, std::ios::binary);
  out << timeline::svg_file(charts, fmt::format("{} ({})", id, role));
  if (!out) {
    fmt::print(stderr, "labkit grade: cannot write the timeline to {}{}\n", file.string(), ec ? ": " + ec.message() : "");
    return "";
  }
  return std::filesystem::absolute(file).string();
}

std::vector<json> read_results(const std::string& file) {
  std::ifstream in(file, std::ios::binary);
  if (!in) throw std::runtime_error(file + ": cannot read it");
  json j;
  try {
    j = json::parse(in);
  } catch (const json::exception& e) {
    throw std::runtime_error(file + ": not JSON (" + e.what() + ")");
  }
  const json& list = j.is_object() && j.contains("results") ? j["results"] : j;
  std::vector<json> out;
  if (list.is_object() && list.contains("lab")) out.push_back(list);
  if (list.is_array())
    for (const json& r : list)
      if (r.is_object() && r.contains("lab")) out.push_back(r);
  if (out.empty()) throw std::runtime_error(file + ": no grade result in it (save one with `labkit grade LAB --json > FILE`)");
  return out;
}

}  // namespace labkit::cli
