// The memory check in every grade (memory_check.h).
//
// compute-sanitizer runs inside the lab's sandbox, and the lab's harness is its target: the lab's
// code shares the sandbox (and the user) with the tool's front end, inherits the tool's log fd,
// and may write anywhere it can. How a lab could fake a clean memcheck, and what closes each way:
//   1. Print a clean run ("========= ERROR SUMMARY: 0 errors") on its stdout, or write it into the
//      tool's log (fd 7 is inherited; /proc/<pid>/fd/7 opens it too). The verdict's basis is the
//      tool's exit status (--error-exitcode 86 when it found errors), which nothing written into
//      the log changes; the log only names the finding. The log is a pipe the judge owns, so the
//      lab can only add lines: a second summary never lowers the count (the largest is kept), and
//      forged findings only fail the lab.
//   2. Take the tool's lines out of the log: /proc/self/fd/7 reopened for reading is a read end of
//      the same pipe (tried on an H100: it opens). The status still says 86, and that is
//      sanitizer-error ("its log holds none of them"); a run with status 0 and no summary is a
//      failure, not a pass.
//   3. Hide a tool's line behind text written without a newline: lines are parsed unanchored (the
//      last "=========" on a line; grader/tools/sanitizer.h).
//   4. Flood the log, so that the judge blocks or runs out of memory: a thread drains the pipe
//      while the lab runs, keeps 8 MiB, counts the rest; more than 8 MiB is protocol-error.
//   5. Kill or signal the tool. Its target's parent is the tool's launcher, its grandparent the
//      front end, all in the sandbox's pid namespace. Tried on an H100 (compute-sanitizer 2025.3.1,
//      CUDA 13.0): SIGTERM or SIGINT to the front end ends it (status 143, 130) with no summary;
//      any signal to the launcher leaves the front end's status at 86 when errors were found, else
//      1 ("couldn't find exit code"); SIGKILL of the front end takes the whole sandbox down
//      (bwrap 137). Clean requires status 0 from a run that ended by itself after the judge's bye,
//      with a summary: a kill at any time, at exit included, is a failure (protocol-error, or the
//      lab's own verdict where its cases failed under the tool). SIGSTOP: the judge waits 30 s after
//      bye, then kills it: not ended by itself, a failure.
//   6. End early (exit(0) in a call or in a static initializer): the session's own protocol-error;
//      a status 0 before the bye is not a finished run.
//   7. Make the tool fail to start, hoping for a kit-error: only a run whose log stayed empty and
//      that did not finish is kit-error, which earns nothing and is shown to the instructor.
// Not closed (docs/grading.md says so):
//   8. A lab that writes out of bounds only when it is not under the tool (it can tell: the tool's
//      injection library is in its address space, and kernels run 10-100x slower). The normal
//      grade's guard regions still catch writes past the kit's own buffers.
//   9. Tampering with the tool itself: its in-process agent lives in the lab's address space, and
//      the front end is a process of the same user (process_vm_writev and /proc/<pid>/mem were
//      allowed on the H100 machine: no Yama). Rewriting the tool's memory is deliberate attack on
//      the grader, written in kernel.cu for anyone to read.
#include "memory_check.h"

#include <fcntl.h>
#include <fmt/core.h>
#include <poll.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <fstream>
#include <stdexcept>
#include <thread>

#include "lab_process.h"
#include "log_pipe.h"
#include "grader/judge/grade_result.h"
#include "grader/judge/lab_spec.h"
#include "grader/tools/sanitizer.h"
#include "labkit_config.h"
#include "sanitize.h"

namespace labkit::cli {
namespace {

using nlohmann::json;
namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

std::string joined(const std::vector<std::string>& names) {
  std::string s;
  for (const std::string& n : names) s += (s.empty() ? "" : ", ") + n;
  return s;
}

}  // namespace

bool needs_memory_check(const json& r) {
  const std::string v = r.value("verdict", "");
  return v == verdict::kPassed || v == verdict::kMissingEvidence;
}

void memory_check_skipped(json& r, const std::string& why) {
  r["sanitizer"] = {{"check", "memory"}, {"skipped", why}};
}

void memory_check(const LabEntry& lab, json& r, const MemoryCheckOptions& o) {
  const LabSpec spec = load_lab_spec(lab.lab_json, lab.id);
  if (spec.sanitize.empty()) return memory_check_skipped(r, "lab.json: \"sanitize\": []");
  const fs::path front = sanitizer::front_end(o.sanitizer);
  const std::string source = lab.folder + "/kernel.cu";
  const auto start = Clock::now();
  json tools = json::array();
  sanitizer::Decision failed;
  std::string failed_tool;
  for (const std::string& tool : spec.sanitize) {
    if (o.progress) fmt::print(stderr, "  memory check: compute-sanitizer --tool {} ...\n", tool);
    const auto t0 = Clock::now();
    LogPipe pipe(sanitizer::kMaxLogBytes);
    std::vector<std::string> show;
    for (const fs::path& f : sanitizer::folders(front)) show.push_back(f.string());
    SessionEnd end;
    const judge::Options so =
        under_tool(o, sanitizer::wrapper(front, tool, fmt::format("/proc/self/fd/{}", sanitizer::kLogFd)), show,
                   pipe.write_fd(), sanitizer::kLogFd, &end);
    const json run = o.grade(lab, so);
    const std::string log = pipe.finish(std::chrono::seconds(2));
    const double seconds = std::chrono::duration<double>(Clock::now() - t0).count();
    const sanitizer::Report rep = sanitizer::parse_log(tool, log, source);
    sanitizer::Run how{tool,
                       end.started,
                       end.by_itself,
                       end.after_bye,
                       end.how.exited,
                       end.how.exit_code,
                       end.how.signal,
                       end.started ? end.how.describe() : "never started",
                       run.value("verdict", ""),
                       run.value("message", ""),
                       pipe.bytes()};
    const sanitizer::Decision d = sanitizer::decide(rep, how);
    json t = report_json(rep, seconds);
    t["status"] = how.how;
    t["verdict"] = d.verdict.empty() ? "clean" : d.verdict;
    tools.push_back(t);
    if (!o.keep_logs.empty()) {
      fs::create_directories(o.keep_logs);
      std::ofstream(o.keep_logs / fmt::format("{}-memory-{}.log", lab.id, tool)) << log;
    }
    if (!d.verdict.empty()) {
      failed = d;
      failed_tool = tool;
      break;
    }
  }
  const double seconds = std::chrono::duration<double>(Clock::now() - start).count();
  r["sanitizer"] = {{"check", "memory"}, {"tools", tools}, {"batch", o.batch}, {"seconds", seconds}};
  if (!r.contains("phases") || !r["phases"].is_array()) r["phases"] = json::array();
  r["phases"].push_back({{"phase", fmt::format("memory check (compute-sanitizer {})", joined(spec.sanitize))},
                         {"seconds", seconds}});
  r["seconds"] = r.value("seconds", 0.0) + seconds;
  if (failed.verdict.empty()) {
    r["message"] = r.value("message", "") + fmt::format("\nMemory check: no errors (compute-sanitizer {}; {:.1f} s).",
                                                        joined(spec.sanitize), seconds);
    return;
  }
  const std::string before = r.value("verdict", "");
  r["verdict"] = failed.verdict;
  r["exit_code"] = verdict::exit_code(failed.verdict);
  r["message"] = sanitizer::relative_to(failed.message, LABKIT_SOURCE_ROOT) +
                 fmt::format("\nWithout the sanitizer the grade was {}.", before);
  const std::string replay = fmt::format("`labkit grade {}{} --sanitize` lists every finding with its line.", lab.id,
                                         lab.role == "solution" ? " --solutions" : lab.role == "test" ? " --tests" : "");
  r["hint"] = failed.hint.empty() ? replay : failed.hint + " " + replay;
  if (r.contains("score") && r["score"].is_object()) {
    r["score"]["total"] = 0;
    r["score"]["lines"] = json::array({{{"item", "memory"}, {"points", 0}, {"max", r["score"].value("max", 0.0)},
                                        {"why", fmt::format("{} under compute-sanitizer {}: no credit", failed.verdict, failed_tool)}}});
  }
}

}  // namespace labkit::cli
