// memory_check.h — the memory check in every `labkit grade`: compute-sanitizer (memcheck, and the
// tools the lab's lab.json "sanitize" names) on the lab's small correctness cases, inside the lab's
// sandbox, after a grade whose cases were right; a finding becomes the verdict (out-of-bounds for
// an access past a buffer, whoever allocated it; sanitizer-error for the rest) naming kernel.cu:line.
//
// Contract
//   * needs_memory_check(r): the grade earned points or could have (verdict passed or
//     missing-evidence); a lab that failed already needs no check.
//   * memory_check(lab, r, o): one run of the lab's harness per tool, each behind
//     `compute-sanitizer --tool T --error-exitcode 86 --log-file /proc/self/fd/7` in the sandbox
//     the grade used (its folder shown read-only there), on the committed fixtures, one random case
//     of the grade's seed and the grading shapes at batch o.batch, nothing timed, no network case,
//     no host evidence (judge::Options::under_sanitizer). Tools run in lab.json's order and stop at
//     the first that fails. Adds to r: "sanitizer" {"check": "memory", "tools": [per tool: the
//     log's findings, "status" (how the tool ended), "verdict", "seconds"], "batch", "seconds"};
//     a phase "memory check (compute-sanitizer ...)"; its seconds to r["seconds"]. A failure
//     replaces verdict, message, hint, exit_code and the score (0); a clean run appends
//     "Memory check: no errors (...)" to the message. The decision: grader/tools/sanitizer.h decide().
//   * memory_check_skipped(r, why): "sanitizer" {"check": "memory", "skipped": why}; the report
//     prints it ("memory check skipped (--quick)").
//   * Throws only for the kit's own failures (a pipe that cannot be made).
#pragma once

#include <filesystem>
#include <functional>
#include <nlohmann/json.hpp>
#include <string>

#include "grader/judge/judge.h"
#include "registry.h"
#include "tool_run.h"

namespace labkit::cli {

struct MemoryCheckOptions : ToolCheckOptions {
  std::filesystem::path sanitizer;  // compute-sanitizer as found (PATH, the toolkit, --compute-sanitizer)
};

bool needs_memory_check(const nlohmann::json& r);
void memory_check(const LabEntry& lab, nlohmann::json& r, const MemoryCheckOptions& o);
void memory_check_skipped(nlohmann::json& r, const std::string& why);

}  // namespace labkit::cli
