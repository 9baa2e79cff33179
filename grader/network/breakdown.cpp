// Where a network run's Total Execution Time went (grader/network/milestone.h breakdown_cells): the part
// of the milestone report that says what to cut when the total, not the convs, is the problem.
#include <fmt/core.h>

#include <algorithm>

#include "grader/network/milestone.h"

namespace labkit::milestone {

Cells breakdown_cells(int batch, const std::vector<Entry>& rows, bool csv) {
  Cells t;
  t.header = csv ? std::vector<std::string>{"implementation", "total_execution_time_s", "load_s", "conv1_layer_s",
                                            "conv2_layer_s", "cpu_layers_s", "other_s"}
                 : std::vector<std::string>{"Implementation", "Total Execution Time", "Loading data and model",
                                            "Conv 1 layer", "Conv 2 layer", "CPU layers", "Other"};
  auto s = [csv](double v) { return csv ? fmt::format("{:.4f}", v) : fmt::format("{:.3f} s", v); };
  for (const Entry& e : rows) {
    if (!e.run) continue;  // the comparison above already says why
    const network::RunResult& r = *e.run;
    const double l1 = r.conv[0].layer_ms / 1e3, l2 = r.conv[1].layer_ms / 1e3;
    // Never negative: the parts are timed separately and can exceed a short total by a hair.
    const double other = std::max(0.0, r.total_s - r.load_s - l1 - l2 - r.cpu_layers_s);
    t.rows.push_back({e.name, s(r.total_s), s(r.load_s), s(l1), s(l2), s(r.cpu_layers_s), s(other)});
  }
  t.caption = fmt::format(
      "**Where the Total Execution Time went** at batch {} on {}: loading the test set and the model; each conv "
      "layer's prolog, op and epilog (host to host; a lab's through its harness); ReLU, pooling and the fully "
      "connected layers on the CPU; other: the program's start, CUDA's and the harness's start-up, moving the "
      "tensors to and from the lab's process and checking them",
      batch, device_of(rows));
  return t;
}

}  // namespace labkit::milestone
