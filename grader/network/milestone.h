// grader/network/milestone.h — the milestone report's tables from network runs (grader/network/network_run.h):
// what `labkit report` prints and writes.
//
//   milestone_table    one implementation, one row per batch: Batch Size | Op Time 1 | Op Time 2 |
//                      Total Execution Time | Accuracy (the table every milestone report starts with)
//   compare_table      one batch, one row per implementation: conv1, conv2 and their sum in ms,
//                      the speedup of that sum over the first row (the baseline), the roofline
//                      floor of the sum at the row's precision class with the bound that decides
//                      it, the share of that floor the row reached (grader/judge/roofline.h share_text:
//                      never a percentage above 100), Total Execution Time, Accuracy, and how many
//                      images it classifies differently from the first row
//   breakdown_cells    where each run's Total Execution Time went (loading, conv layers, CPU
//                      layers, the rest), under the comparison's largest batch
//   startup_cells      where each harness's start-up went (the rows through a harness), under it
//   compare_svg        the comparison at one batch as a bar chart (conv1 and conv2 stacked, one
//                      bar per implementation), with the physical floor of conv1 + conv2 as a
//                      line where a run recorded it (a lab's conv: the judge computes it), and
//                      on each bar a tick at its own roofline floor, its share of it and the bound
//                      after its total
//   render             the whole text report of a Report (what `labkit report` prints): the
//                      milestone tables, the comparison per batch (`compare`), or the course
//                      table per batch (`course_reference` set; grader/network/course.h)
//   read_report        a Report back from a saved `--format json` report (`labkit report --from`)
//
// `labkit report --html` (grader/judge/pages.h report_page) draws its tables from the same Report.
//
// Formats: md (GitHub Markdown), csv (one header line, plain numbers, units in the column names),
// tex (a tabular environment) and json (the runs themselves, every field of network_run.h).
// A row whose run failed is a Failure: its message is printed in place of its numbers (md, tex)
// or in an "error" column (csv, json) — never dropped.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "grader/network/network_run.h"

namespace labkit::milestone {

enum class Format { md, csv, tex, json };
Format parse_format(const std::string& name);  // throws std::invalid_argument listing the formats

// One run, or why it did not happen.
struct Entry {
  std::string name;   // row label: "baseline", "06-fusion (solution)"
  int batch = 0;
  std::optional<network::RunResult> run;
  std::string error;  // set when run is empty
  bool layer_timed = false;  // lab.json "timed": "layer": its Op Time is not what it optimizes
};

// A whole report: runs[s][k] is implementation s at batches[k].
struct Report {
  std::vector<int> batches;
  std::vector<std::vector<Entry>> runs;
  bool compare = false;  // one table per batch across implementations (else one per implementation)
  // Set: the course's table per batch (grader/network/course.h) against the row of this name, instead of
  // the tables above (`labkit report --course`).
  std::string course_reference;
};

std::string render(const Report& r, Format f);
// Throws std::runtime_error naming the file and what it lacks (not JSON, a run without name or
// batch, an implementation missing at one of the batches).
Report read_report(const std::string& file);
// The run whose device names the GPU (and driver) of a report; "CPU" when every run was on the CPU.
std::string device_of(const std::vector<Entry>& rows);

// A table's cells as md/tex (csv = false) or csv (csv = true) print them; a failed run's row is
// [label, message]. The caption is Markdown (the implementation or batch in **bold**).
struct Cells {
  std::string caption;
  std::vector<std::string> header;
  std::vector<std::vector<std::string>> rows;
};
Cells milestone_cells(const std::string& name, const std::vector<Entry>& rows, bool csv);
Cells compare_cells(int batch, const std::vector<Entry>& rows, bool csv);
// Where each run's Total Execution Time went at one batch: loading, each conv layer (prolog + op +
// epilog), the CPU layers and the rest (start-up, moving tensors between processes). Printed
// under the comparison's last batch (md).
Cells breakdown_cells(int batch, const std::vector<Entry>& rows, bool csv);
// The harness start-up phases of the rows that ran through one (RunResult::startup_ms); no rows:
// none did.
Cells startup_cells(int batch, const std::vector<Entry>& rows);
// Cells as md, csv or tex (json is rendered from the runs: runs_json).
std::string render_cells(const Cells& c, Format f);
// The runs as the json format writes them: every field of network_run.h plus name and batch, or
// {"error"} for a failed run.
nlohmann::json runs_json(const std::vector<Entry>& rows);

std::string milestone_table(const std::string& name, const std::vector<Entry>& rows, Format f);
std::string compare_table(int batch, const std::vector<Entry>& rows, Format f);
std::string compare_svg(int batch, const std::vector<Entry>& rows, const std::string& subtitle);

}  // namespace labkit::milestone
