// The memory check's decision on one compute-sanitizer run (grader/tools/sanitizer.h, "The memory
// check"), and where the tool lives. Why the exit status is the basis: grader/cli/memory_check.cpp.
#include <fmt/core.h>

#include <algorithm>
#include <system_error>

#include "grader/judge/grade_result.h"
#include "grader/tools/sanitizer.h"

namespace labkit::sanitizer {
namespace {

namespace fs = std::filesystem;

// "Invalid __global__ write of size 4 bytes (labs/03-tiling/kernel.cu:48)": the place, unless the
// headline already names it.
std::string named(const Finding& f) {
  if (f.location.empty() || f.headline.find(f.location) != std::string::npos) return f.headline;
  // The detail's first line says "at <file>:<line> in <function>": the most useful single line.
  for (const std::string& d : f.detail)
    if (d.starts_with("at ") && d.find(f.location) != std::string::npos) return f.headline + ", " + d;
  return f.headline + " at " + f.location;
}

// How the run ended, for a message: "was killed by SIGKILL (...) after the kit's bye; its log has
// no summary".
std::string ending(const Report& log, const Run& run) {
  std::string s;
  if (!run.started) s = "never started";
  else if (!run.by_itself)
    s = run.after_bye ? "did not end after the kit's bye and was stopped by the judge"
                      : "was stopped by the judge (a timeout or a broken channel)";
  else
    s = run.how + (run.after_bye ? " after the kit's bye" : " before the kit's last request was answered");
  if (!log.completed) s += "; its log has no summary";
  return s;
}

bool cases_right(const std::string& v) { return v == verdict::kPassed || v == verdict::kMissingEvidence; }

}  // namespace

fs::path front_end(const fs::path& found) {
  std::error_code ec;
  const fs::path real = fs::canonical(found, ec);
  if (ec) return found;
  // CUDA 12 and 13: <cuda>/bin/compute-sanitizer is `exec "$DIR"/../compute-sanitizer/compute-sanitizer "$@"`.
  const fs::path beside = real.parent_path().parent_path() / "compute-sanitizer" / "compute-sanitizer";
  if (real.parent_path().filename() == "bin" && fs::is_regular_file(beside, ec)) return fs::canonical(beside, ec);
  return real;
}

std::vector<fs::path> folders(const fs::path& front) {
  std::error_code ec;
  const fs::path real = fs::canonical(front, ec);
  if (ec) return {};
  return {real.parent_path()};
}

std::vector<std::string> wrapper(const fs::path& program, const std::string& tool, const std::string& log_file) {
  return {program.string(), "--tool", tool, "--log-file", log_file, "--error-exitcode", std::to_string(kFoundErrors),
          "--print-limit", "100", "--show-backtrace", "device"};
}

Decision decide(const Report& log, const Run& run) {
  Decision d;
  const std::string what = fmt::format("compute-sanitizer {} on the small correctness cases", run.tool);
  if (run.log_bytes > kMaxLogBytes) {
    d.verdict = verdict::kProtocolError;
    d.message = fmt::format(
        "The memory check ({}): its log carried more than {} MiB, far more than the tool writes; the lab's "
        "process wrote into the tool's log. No credit.",
        what, kMaxLogBytes >> 20);
    d.hint = "kernel.cu must not write into file descriptors it did not open, nor print without end.";
    return d;
  }
  if (run.verdict == verdict::kKitError || run.verdict == verdict::kNoDevice) {
    d.verdict = run.verdict;
    d.message = fmt::format("The memory check ({}) could not be run: {}", what, run.message);
    return d;
  }
  const bool found = run.started && run.by_itself && run.exited && run.exit_code == kFoundErrors;
  if (found || log.out_of_bounds > 0) {
    d.verdict = log.out_of_bounds > 0 ? verdict::kOutOfBounds : verdict::kSanitizerError;
    d.finding = log.out_of_bounds > 0 ? log.first_out_of_bounds : log.findings.empty() ? Finding{} : log.findings.front();
    if (d.finding.headline.empty()) {
      d.message = fmt::format(
          "The memory check ({}) found errors (the tool's status is {}), but its log holds none of them: "
          "something in the lab's process took them out of the tool's log. No credit.",
          what, kFoundErrors);
      return d;
    }
    const int n = std::max(log.errors, log.findings_total);
    d.message = fmt::format("The memory check ({}) found {}: {} ({} error{} in all). No credit: {}", what,
                            d.verdict == verdict::kOutOfBounds ? "an out-of-bounds access" : "an error", named(d.finding),
                            n, n == 1 ? "" : "s",
                            d.verdict == verdict::kOutOfBounds
                                ? "an access past the end of any buffer, the lab's own ones included, reads or corrupts "
                                  "memory that is not the lab's."
                                : "the kernel's result depends on an error that the output check may not see.");
    if (!found) d.message += fmt::format(" (compute-sanitizer {}.)", ending(log, run));
    d.hint = explain(d.finding);
    return d;
  }
  const bool normal_end =
      run.started && run.by_itself && run.after_bye && run.exited && run.exit_code == 0 && log.completed;
  if (normal_end && cases_right(run.verdict)) return d;  // clean
  if (!normal_end && run.log_bytes == 0) {
    // Not a line from the tool, not even the first it prints when it starts: it never ran.
    d.verdict = verdict::kKitError;
    d.message = fmt::format(
        "The memory check ({}) did not run: the tool wrote nothing into its log and {}. The run under it: {}",
        what, ending(log, run), run.message);
    d.hint = "Check that compute-sanitizer runs on this machine inside the sandbox (`labkit grade LAB --sanitize` runs it "
             "outside); `labkit grade --quick` grades without the memory check.";
    return d;
  }
  if (!cases_right(run.verdict)) {
    d.verdict = run.verdict;
    d.message = fmt::format("Under the memory check ({}): {}", what, run.message);
    return d;
  }
  d.verdict = verdict::kProtocolError;
  d.message = fmt::format(
      "The memory check ({}) did not finish as a run does: compute-sanitizer {}. The lab's process must not end, "
      "signal or stop the tool in front of it, nor take its lines out of its log. No credit.",
      what, ending(log, run));
  d.hint = "Remove whatever in kernel.cu kills or signals other processes, or ends the program (exit, abort, kill).";
  return d;
}

}  // namespace labkit::sanitizer
