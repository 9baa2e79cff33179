// sanitize.h — `labkit grade LAB --sanitize`: the lab's correctness cases under compute-sanitizer,
// one run per tool (memcheck, racecheck, synccheck, initcheck), the findings folded into the lab's
// result: any error makes the verdict "sanitizer-error" with the first findings at kernel.cu:line.
#pragma once

#include <atomic>
#include <functional>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "grader/tools/sanitizer.h"
#include "registry.h"

namespace labkit::cli {

struct SanitizeOptions {
  std::filesystem::path sanitizer;  // compute-sanitizer
  std::vector<std::string> tools;
  int batch = 8;                    // grading shapes' batch: every kernel runs 10-100x slower
  // Grades the lab's correctness cases once with its harness behind `wrapper` (compute-sanitizer
  // and its options); every tool replays the same seed.
  std::function<nlohmann::json(const std::vector<std::string>& wrapper)> grade;
  bool progress = true;             // a line on stderr per tool
  std::filesystem::path keep_logs;  // when set: the sanitizer's logs are kept here, <lab>-<tool>.log
};

// The lab's result (grader/judge/grade_result.h JSON) with a "sanitizer" object added.
nlohmann::json run_sanitized(const LabEntry& lab, const SanitizeOptions& o);

// One tool's log as the report shows it (memory_check.h too): its findings with paths relative to
// the kit, each with what it means, and the seconds the run took.
nlohmann::json report_json(const sanitizer::Report& r, double seconds);

}  // namespace labkit::cli
