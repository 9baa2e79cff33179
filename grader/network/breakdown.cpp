// Where a network run's Total Execution Time went (grader/network/milestone.h breakdown_cells): the part
// of the milestone report that says what to cut when the total, not the convs, is the problem.
#include <fmt/core.h>

#include <algorithm>

#include "grader/network/milestone.h"

namespace labkit::milestone {

Cells breakdown_cells(int batch, const std::vector<Entry>& rows, bool csv) {
  Cells t;
  t.header = csv ? std::vector<std::string>{"implementation", "total_execution_time_s", "load_s", "startup_wait_s",
                                            "conv1_layer_s", "conv2_layer_s", "tensors_and_checks_s", "cpu_layers_s",
                                            "other_s"}
                 : std::vector<std::string>{"Implementation", "Total Execution Time", "Loading data and model",
                                            "Waiting for start-up", "Conv 1 layer", "Conv 2 layer",
                                            "Tensors moved and checked", "CPU layers", "Other"};
  auto s = [csv](double v) { return csv ? fmt::format("{:.4f}", v) : fmt::format("{:.3f} s", v); };
  for (const Entry& e : rows) {
    if (!e.run) continue;  // the comparison above already says why
    const network::RunResult& r = *e.run;
    const double l1 = r.conv[0].layer_ms / 1e3, l2 = r.conv[1].layer_ms / 1e3;
    const double wait = (r.conv[0].wait_ms + r.conv[1].wait_ms) / 1e3;
    const double moved = (r.conv[0].boundary_ms + r.conv[1].boundary_ms) / 1e3;
    // Never negative: the parts are timed separately and can exceed a short total by a hair.
    const double other = std::max(0.0, r.total_s - r.load_s - wait - l1 - l2 - moved - r.cpu_layers_s);
    t.rows.push_back({e.name, s(r.total_s), s(r.load_s), s(wait), s(l1), s(l2), s(moved), s(r.cpu_layers_s), s(other)});
  }
  t.caption = fmt::format(
      "**Where the Total Execution Time went** at batch {} on {}: loading the test set and the model; waiting for "
      "start-up before the first conv (CUDA's, and a harness's: its sandbox, its CUDA, its pinned arrays); each conv "
      "layer's prolog, op and epilog (host to host; through the harness: the judge's clock around its three "
      "requests, the harness's copies between the shared-memory file and its pinned arrays included); the tensors "
      "copied into that file and the outputs read back, digested and checked (in-process: the output's scan for "
      "NaN/inf); ReLU, pooling and the fully connected layers on the CPU; other: the program's start and exit "
      "work, and what a file older than these columns did not split",
      batch, device_of(rows));
  return t;
}

Cells startup_cells(int batch, const std::vector<Entry>& rows) {
  Cells t;
  for (const Entry& e : rows) {
    if (!e.run || e.run->startup_ms.empty()) continue;
    if (t.header.empty()) {
      t.header.push_back("Implementation");
      for (const network::StartupPhase& p : e.run->startup_ms) t.header.push_back(p.name);
    }
    std::vector<std::string> row{e.name};
    for (std::size_t k = 1; k < t.header.size(); ++k) {  // by name: a file from another kit may differ
      const auto& phases = e.run->startup_ms;
      const auto it = std::find_if(phases.begin(), phases.end(),
                                   [&](const network::StartupPhase& p) { return p.name == t.header[k]; });
      row.push_back(it == phases.end() ? "" : fmt::format("{:.0f} ms", it->ms));
    }
    t.rows.push_back(std::move(row));
  }
  t.caption = fmt::format(
      "**Where a harness's start-up went** at batch {}: its phases overlap the loading and one another, so they "
      "are not a split of the total. The judge's own CUDA start-up; building the sandbox's command (its allow-list) "
      "and spawning it; from the spawn to the harness's hello, of which its CUDA start-up and its pinned host arrays "
      "as the harness reported them; the tensor file made and mapped after the hello; and when the harness was "
      "ready, counted from the program's start (conv 1 waits for it after the loading)",
      batch);
  return t;
}

}  // namespace labkit::milestone
