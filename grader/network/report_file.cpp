// report_file.cpp — milestone::read_report: a report saved with `labkit report --format json`
// read back, so that its tables and pages can be drawn again without running anything (on a
// machine without a GPU, in CI, or weeks later) from the very runs the saved file holds.
//
// The saved file is what `render(report, Format::json)` wrote: one JSON document per table, one
// after the other: {"name", "runs": [...]} per implementation, or {"batch", "runs": [...]} per
// batch with --compare. Every run carries its "name" and "batch", so either form gives the grid.
#include <fmt/core.h>

#include <algorithm>
#include <fstream>
#include <stdexcept>

#include "grader/network/milestone.h"

namespace labkit::milestone {

using nlohmann::json;

Report read_report(const std::string& file) {
  std::ifstream in(file);
  if (!in) throw std::runtime_error(file + ": cannot open (expected a report saved with --format json)");
  std::vector<json> docs;
  try {
    while (in >> std::ws && in.peek() != std::char_traits<char>::eof()) {
      json j;
      in >> j;
      docs.push_back(std::move(j));
    }
  } catch (const json::exception& e) {
    throw std::runtime_error(fmt::format("{}: not a saved report: document {} is not JSON ({})", file, docs.size() + 1, e.what()));
  }
  if (docs.empty()) throw std::runtime_error(file + ": empty (expected the output of labkit report --format json)");

  Report r;
  std::vector<std::string> names;
  std::vector<Entry> entries;
  for (std::size_t d = 0; d < docs.size(); ++d) {
    const json& doc = docs[d];
    if (!doc.is_object() || !doc.contains("runs") || !doc["runs"].is_array())
      throw std::runtime_error(fmt::format("{}: document {} has no \"runs\" array", file, d + 1));
    r.compare = doc.contains("batch");
    for (const json& j : doc["runs"]) {
      if (!j.is_object() || !j.contains("name") || !j.contains("batch"))
        throw std::runtime_error(fmt::format("{}: document {}: a run without \"name\" or \"batch\"", file, d + 1));
      Entry e;
      e.name = j["name"].get<std::string>();
      e.batch = j["batch"].get<int>();
      e.layer_timed = j.value("layer_timed", false);
      try {
        if (j.contains("error")) e.error = j["error"].get<std::string>();
        else e.run = network::from_json(j);
      } catch (const json::exception& ex) {
        throw std::runtime_error(fmt::format("{}: run of {} at batch {}: {}", file, e.name, e.batch, ex.what()));
      }
      if (std::find(names.begin(), names.end(), e.name) == names.end()) names.push_back(e.name);
      if (std::find(r.batches.begin(), r.batches.end(), e.batch) == r.batches.end()) r.batches.push_back(e.batch);
      entries.push_back(std::move(e));
    }
  }
  for (const std::string& name : names) {
    std::vector<Entry> row;
    for (int batch : r.batches) {
      auto it = std::find_if(entries.begin(), entries.end(), [&](const Entry& e) { return e.name == name && e.batch == batch; });
      if (it == entries.end())
        throw std::runtime_error(fmt::format("{}: no run of {} at batch {} (every implementation needs every batch)", file, name, batch));
      row.push_back(*it);
    }
    r.runs.push_back(std::move(row));
  }
  return r;
}

}  // namespace labkit::milestone
