// tool_run.h — the lab graded once more behind a tool in its sandbox: what the memory check
// (compute-sanitizer, memory_check.h) and the counter check (Nsight Compute, counter_check.h) share.
//
// Contract
//   * ToolCheckOptions: the grade's own options and how to grade (labkit grade's grade_one), the
//     grading shapes' batch under the tool, a time limit per run (at most the grade's own), a
//     progress line on stderr, and where to keep the tool's logs (empty: nowhere).
//   * under_tool(): the judge's options for one run behind `wrapper`: correctness only, on the
//     committed fixtures, one random case of the grade's seed and the grading shapes at o.batch;
//     nothing timed, no CUPTI tracing in the harness, no network case, no host evidence
//     (judge::Options::under_sanitizer); `show` read-only in the sandbox; the judge's pipe
//     `pipe_fd` as `log_fd` inside; how the tool ended reported in `end`; 30 s after the judge's
//     bye for the tool to write its log once its target has ended.
#pragma once

#include <filesystem>
#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "grader/judge/judge.h"
#include "registry.h"

namespace labkit::cli {

struct ToolCheckOptions {
  int batch = 1;
  double timeout_s = 300;
  bool progress = true;
  std::filesystem::path keep_logs;
  std::function<nlohmann::json(const LabEntry&, const judge::Options&)> grade;
  judge::Options judge;
};

judge::Options under_tool(const ToolCheckOptions& o, std::vector<std::string> wrapper, std::vector<std::string> show,
                          int pipe_fd, int log_fd, SessionEnd* end);

}  // namespace labkit::cli
