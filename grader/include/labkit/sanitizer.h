// labkit/sanitizer.h — reading compute-sanitizer's log for `labkit grade LAB --sanitize`.
//
// Contract
//   * The log is what `compute-sanitizer --tool T --log-file F` wrote: lines prefixed "=========".
//     A finding is one unindented line after the prefix ("Invalid __global__ write of size 4
//     bytes", "Error: Race reported between Write access at ... ", "Barrier error detected...",
//     "Uninitialized __global__ memory read...", "Program hit cudaError...") with the indented
//     lines under it; host backtraces are dropped. Each "at <function>(<params>)+0x<offset> in
//     <file>:<line>" is rewritten "at <file>:<line> in <function>" (an "Error: " prefix dropped).
//   * completed is true only when the log has the tool's summary: "ERROR SUMMARY: N errors", or
//     racecheck's "RACECHECK SUMMARY: H hazards displayed (N errors, W warnings)"; otherwise the
//     sanitizer itself failed (no device support, crash) and problem holds the log's first lines.
//   * location is the first "file:line" in the finding, preferring the lab's kernel.cu
//     (prefer_source, its path from the kit's root): a path ending with it, or its base name alone,
//     which is how compute-sanitizer 2025 prints it ("kernel.cu:23"), becomes prefer_source:line.
//     Lab executables are built with -lineinfo so kernels have line tables. Empty when the finding
//     names no line.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace labkit::sanitizer {

// The tools `--sanitize` runs, in this order: out-of-bounds first, it explains most crashes.
inline const std::vector<std::string> kTools = {"memcheck", "racecheck", "synccheck", "initcheck"};

struct Finding {
  std::string headline;             // the finding's first line, without the prefix
  std::vector<std::string> detail;  // its indented lines, trimmed
  std::string location;             // "labs/03-tiling/kernel.cu:48" or ""
};

struct Report {
  std::string tool;
  bool completed = false;
  int errors = 0;                   // from ERROR SUMMARY
  int findings_total = 0;           // findings in the log (only the first max_findings are kept)
  std::vector<Finding> findings;
  std::string problem;
};

Report parse_log(const std::string& tool, std::string_view log, std::string_view prefer_source,
                 std::size_t max_findings = 3);

// What the finding means for a student, in one sentence ("" when the kind is not known).
std::string explain(const Finding& f);

// The lab-relative form of paths in the log: every occurrence of root + "/" removed.
std::string relative_to(std::string text, std::string_view root);

}  // namespace labkit::sanitizer
