// grader/tools/sanitizer.h — reading compute-sanitizer's log for `labkit grade LAB --sanitize`.
//
// Contract
//   * The log is what `compute-sanitizer --tool T --log-file F` wrote: lines prefixed "=========",
//     found anywhere on a line (the last prefix on it: the lab's process may write into the log,
//     and text it left without a newline must not hide the tool's line).
//     A finding is one unindented line after the prefix ("Invalid __global__ write of size 4
//     bytes", "Error: Race reported between Write access at ... ", "Barrier error detected...",
//     "Uninitialized __global__ memory read...", "Program hit cudaError...") with the indented
//     lines under it; host backtraces are dropped. Each "at <function>(<params>)+0x<offset> in
//     <file>:<line>" is rewritten "at <file>:<line> in <function>" (an "Error: " prefix dropped).
//   * completed is true only when the log has a summary: "ERROR SUMMARY: N errors", or
//     racecheck's "RACECHECK SUMMARY: H hazards displayed (N errors, W warnings)"; otherwise the
//     sanitizer itself failed (no device support, crash) and problem holds the log's first lines.
//   * location is the first "file:line" in the finding, preferring the lab's kernel.cu
//     (prefer_source, its path from the kit's root): a path ending with it, or its base name alone,
//     which is how compute-sanitizer 2025 prints it ("kernel.cu:23"), becomes prefer_source:line.
//     Lab executables are built with -lineinfo so kernels have line tables. Empty when the finding
//     names no line.
//
//   * The memory check of every grade (grader/cli/memory_check.h) runs one tool at a time inside
//     the lab's sandbox with the lab's harness as its target; decide() turns that run into a
//     verdict. Its basis is the tool's exit status (kFoundErrors when it found errors), which the
//     lab's process cannot choose; the log only names the finding. Clean means all of: the run
//     ended by itself after the judge's bye, with status 0, a summary in the log, no more than
//     kMaxLogBytes of log, and the sanitized grade's own verdict passed or missing-evidence (its
//     cases right). Status kFoundErrors: out-of-bounds when the log holds an is_out_of_bounds()
//     finding, else sanitizer-error (its log lost its findings included). Any other end (a signal,
//     another status, before bye, killed by the judge, no summary): out-of-bounds when the log
//     holds such a finding, else the sanitized grade's own failure, else protocol-error; kit-error
//     only when the tool wrote nothing at all and the run never got going (it could not start).
#pragma once

#include <cstddef>
#include <filesystem>
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
  bool banner = false;              // the tool's first line, "COMPUTE-SANITIZER", is in the log
  int errors = 0;                   // from ERROR SUMMARY (the largest, where there are several)
  int findings_total = 0;           // findings in the log (only the first max_findings are kept)
  std::vector<Finding> findings;
  int out_of_bounds = 0;            // findings that are is_out_of_bounds()
  Finding first_out_of_bounds;      // the first of them (headline empty when none)
  std::string problem;
};

Report parse_log(const std::string& tool, std::string_view log, std::string_view prefer_source,
                 std::size_t max_findings = 3);

// An invalid __global__, __shared__ or __local__ access (memcheck), misaligned ones excepted: the
// finding the memory check turns into the verdict out-of-bounds.
bool is_out_of_bounds(const Finding& f);

// What the finding means for a student, in one sentence ("" when the kind is not known).
std::string explain(const Finding& f);

// The lab-relative form of paths in the log: every occurrence of root + "/" removed.
std::string relative_to(std::string text, std::string_view root);

// ---- The memory check (grader/cli/memory_check.h) ----

// The tool's status when it found errors (--error-exitcode): none of the harness's own (0, 1, 77,
// 99), bwrap's (1, 128 + N) or the tool's for a target that failed (its target's status, 1).
inline constexpr int kFoundErrors = 86;
// The fd (in the lab's process tree) of the judge's pipe the tool logs to: --log-file /proc/self/fd/7.
inline constexpr int kLogFd = 7;
// More log than this is a lab writing into it on purpose (memcheck prints at most 100 findings).
inline constexpr std::size_t kMaxLogBytes = std::size_t(8) << 20;

// The program to run for `found` (PATH's or the toolkit's compute-sanitizer): CUDA's
// bin/compute-sanitizer is a shell script that execs ../compute-sanitizer/compute-sanitizer; that
// binary is run directly, so the sandbox needs no shell. Otherwise `found` itself.
std::filesystem::path front_end(const std::filesystem::path& found);
// What the sandbox must show read-only for the front end to run: its folder (its injection
// libraries and launcher helpers live beside it), canonical. Empty when it does not exist.
std::vector<std::filesystem::path> folders(const std::filesystem::path& front_end);

// The command line put in front of the harness for one tool: its log to `log_file` (a path, or
// /proc/self/fd/N for the judge's pipe), status kFoundErrors when it found errors, the first 100
// findings with device backtraces. One definition for --sanitize and the memory check.
std::vector<std::string> wrapper(const std::filesystem::path& program, const std::string& tool,
                                 const std::string& log_file);

// One tool's run over the lab's correctness cases, as the judge saw it.
struct Run {
  std::string tool;
  bool started = false;    // the lab's process (the tool in front of it) was started
  bool by_itself = false;  // ... and ended on its own, not killed by the judge
  bool after_bye = false;  // ... after the judge's bye
  bool exited = false;     // with a status (else a signal; bubblewrap's 128 + N is signal N)
  int exit_code = 0, signal = 0;
  std::string how;                // "exited with code 0", "was killed by SIGKILL (...)"
  std::string verdict, message;   // the sanitized grade's own result
  std::size_t log_bytes = 0;      // the log pipe carried this much
};

struct Decision {
  std::string verdict;  // empty: clean
  std::string message, hint;
  Finding finding;      // the finding named (headline empty when none)
};

Decision decide(const Report& log, const Run& run);

}  // namespace labkit::sanitizer
