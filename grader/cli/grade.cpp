// `labkit grade` — grades labs, each in its own child process with a time limit, and aggregates:
// the per-lab reports, a summary table, --json, and a Gradescope results.json. A lab that hangs or
// crashes is a verdict for that lab; the others are still graded.
#include <fmt/core.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <csignal>
#include <fstream>
#include <memory>
#include <nlohmann/json.hpp>

#include "commands.h"
#include "labkit/exit_codes.h"
#include "labkit/grade_result.h"
#include "labkit/lab_spec.h"
#include "labkit/report.h"
#include "labkit/subprocess.h"
#include "lab_process.h"
#include "labkit_config.h"
#include "labkit/cuda_check.h"
#include "labkit/sanitizer.h"
#include "sanitize.h"
#include "registry.h"

namespace labkit::cli {
namespace {

using nlohmann::json;

// Ctrl-C reaches only labkit (each lab runs in its own process group): the handler raises this
// flag and subprocess::run stops the lab's group, so no kernel keeps the GPU busy after we exit.
std::atomic<bool> g_interrupted{false};
extern "C" void on_interrupt(int) { g_interrupted.store(true); }

struct GradeOptions {
  std::vector<std::string> labs;
  bool all = false, solutions = false, tests = false;
  double timeout_s = 600;
  bool json = false;
  std::string gradescope;
  std::string seed;
  int batch = 0;
  bool correctness_only = false;
  std::string fixtures;  // another fixture manifest (an instructor's hidden cases)
  bool sanitize = false;
  std::vector<std::string> sanitize_tools = sanitizer::kTools;
  std::string sanitizer_path, sanitize_logs;
  int sanitize_batch = 8;
};

int run_grade(const GradeOptions& o) {
  const std::string role = o.solutions ? "solution" : o.tests ? "test" : "lab";
  std::vector<LabEntry> selected;
  const auto registry = read_registry();
  if (o.all) {
    for (const LabEntry& l : registry)
      if (l.role == role) selected.push_back(l);
  }
  for (const std::string& id : o.labs) {
    auto it = std::find_if(registry.begin(), registry.end(),
                           [&](const LabEntry& l) { return l.role == role && l.id == id; });
    if (it == registry.end()) {
      fmt::print(stderr, "labkit grade: no {} named \"{}\" in this build (see `labkit list{}`)\n", role, id,
                 o.tests ? " --tests" : "");
      return exit_code::kUsage;
    }
    selected.push_back(*it);
  }
  if (selected.empty()) {
    fmt::print(stderr, "labkit grade: nothing to grade: name a lab or pass --all\n");
    return exit_code::kUsage;
  }

  SanitizeOptions san;
  if (o.sanitize) {
    if (!cuda_device_available()) {
      fmt::print(stderr, "labkit grade: skipped: no usable CUDA device (compute-sanitizer checks kernels as they run on a GPU)\n");
      return exit_code::kNoDevice;
    }
    san.sanitizer = find_tool("compute-sanitizer", o.sanitizer_path);
    if (san.sanitizer.empty()) {
      fmt::print(stderr, "labkit grade: {}: install it (it ships with the CUDA toolkit) or name it with --compute-sanitizer PATH\n",
                 o.sanitizer_path.empty() ? "compute-sanitizer not found on PATH or in " LABKIT_CUDA_ROOT "/bin"
                                          : o.sanitizer_path + " is not an executable");
      return exit_code::kNoDevice;
    }
    san.tools = o.sanitize_tools;
    san.batch = o.sanitize_batch;
    san.timeout_s = o.timeout_s;
    san.seed = o.seed;
    san.fixtures = o.fixtures;
    san.cancel = &g_interrupted;
    san.progress = !o.json;
    san.keep_logs = o.sanitize_logs;
  }

  struct sigaction sa{};
  sa.sa_handler = on_interrupt;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGINT, &sa, nullptr);
  sigaction(SIGTERM, &sa, nullptr);

  std::vector<json> results;
  for (const LabEntry& lab : selected) {
    if (o.sanitize) {
      if (!o.json) fmt::print(stderr, "checking {} ({}) under compute-sanitizer, batch {} ...\n", lab.id, lab.role, o.sanitize_batch);
      json r = run_sanitized(lab, san);
      if (r.value("cancelled", false) || g_interrupted) {
        fmt::print(stderr, "labkit grade: interrupted: {} was stopped; no report or results file was written\n", lab.id);
        return 130;
      }
      if (!o.json) fmt::print("{}\n", format_text(r, isatty(STDOUT_FILENO)));
      results.push_back(std::move(r));
      continue;
    }
    std::vector<std::string> argv{lab.exe, "--json"};
    // The child's own watchdog fires first and names the phase; ours is the backstop.
    argv.insert(argv.end(), {"--timeout", fmt::format("{:g}", std::max(1.0, o.timeout_s - 5))});
    if (!o.seed.empty()) argv.insert(argv.end(), {"--seed", o.seed});
    if (o.batch > 0) argv.insert(argv.end(), {"--batch", std::to_string(o.batch)});
    if (o.correctness_only) argv.push_back("--correctness-only");
    if (!o.fixtures.empty()) argv.insert(argv.end(), {"--fixtures", o.fixtures});
    if (!o.json) fmt::print(stderr, "grading {} ({}) ...\n", lab.id, lab.role);
    subprocess::Options so;
    so.timeout = std::chrono::milliseconds(static_cast<long long>(o.timeout_s * 1000));
    so.cancel = &g_interrupted;
    const subprocess::Result p = subprocess::run(argv, so);
    if (p.cancelled || g_interrupted) {
      fmt::print(stderr, "labkit grade: interrupted: {} was stopped; no report or results file was written\n", lab.id);
      return 130;  // the shell's code for "ended by SIGINT"
    }
    json r = result_of(lab, p);
    if (!o.json) fmt::print("{}\n", format_text(r, isatty(STDOUT_FILENO)));
    results.push_back(std::move(r));
  }

  double total = 0, max = 0;
  bool all_passed = true, any_kit_error = false, all_no_device = true;
  for (const json& r : results) {
    const std::string v = r.value("verdict", "");
    total += r["score"].value("total", 0.0);
    max += r["score"].value("max", 0.0);
    all_passed &= v == verdict::kPassed;
    any_kit_error |= v == verdict::kKitError;
    all_no_device &= v == verdict::kNoDevice;
  }
  if (o.json) {
    fmt::print("{}\n", json{{"results", results}, {"score", total}, {"max_score", max}}.dump(2));
  } else if (results.size() > 1) {
    fmt::print("{:<20} {:<17} {:>9} {:>14}\n", "lab", "verdict", "speedup", "score");
    for (const json& r : results) {
      const double speedup = r.contains("timing") ? r["timing"].value("speedup", 0.0) : 0.0;
      fmt::print("{:<20} {:<17} {:>8} {:>6.2f} / {:<5.2f}\n", r["lab"].value("id", ""), r.value("verdict", ""),
                 speedup > 0 ? fmt::format("{:.2f}x", speedup) : "-", r["score"].value("total", 0.0),
                 r["score"].value("max", 0.0));
    }
    fmt::print("{:<20} {:<17} {:>9} {:>6.2f} / {:<5.2f}\n", "total", "", "", total, max);
  }
  if (!o.gradescope.empty()) {
    std::ofstream out(o.gradescope);
    out << gradescope(results).dump(2) << "\n";
    if (!out) {
      fmt::print(stderr, "labkit grade: cannot write {}\n", o.gradescope);
      return exit_code::kKitError;
    }
  }
  if (any_kit_error) return exit_code::kKitError;
  if (all_no_device) return exit_code::kNoDevice;
  return all_passed ? exit_code::kPass : exit_code::kFail;
}

}  // namespace

void add_grade(CLI::App& app, int& status) {
  auto o = std::make_shared<GradeOptions>();
  auto* cmd = app.add_subcommand("grade", "Grade labs: each in its own process with a time limit");
  cmd->add_option("labs", o->labs, "lab ids, e.g. 03-tiling");
  cmd->add_flag("--all", o->all, "every lab of this build");
  cmd->add_flag("--solutions", o->solutions, "grade the instructor solutions instead of labs/");
  cmd->add_flag("--tests", o->tests, "grade the grader's own test labs (tests/labs)");
  cmd->add_option("--timeout", o->timeout_s, "seconds per lab before it is stopped")->check(CLI::Range(2.0, 86400.0));
  cmd->add_flag("--json", o->json, "print every result as JSON");
  cmd->add_option("--gradescope", o->gradescope, "write a Gradescope results.json here");
  cmd->add_option("--seed", o->seed, "replay a run: the seed its report printed");
  cmd->add_option("--batch", o->batch, "batch size of the grading shapes")->check(CLI::Range(1, 10000));
  cmd->add_flag("--correctness-only", o->correctness_only, "check outputs, skip timing");
  cmd->add_option("--fixtures", o->fixtures, "grade on this fixture manifest instead of the committed one (hidden cases)")
      ->check(CLI::ExistingFile);
  cmd->add_flag("--sanitize", o->sanitize,
                "run the correctness cases under compute-sanitizer (memcheck, racecheck, synccheck, initcheck)");
  cmd->add_option("--sanitize-tools", o->sanitize_tools, "the compute-sanitizer tools --sanitize runs")
      ->delimiter(',')
      ->check(CLI::IsMember(sanitizer::kTools));
  cmd->add_option("--sanitize-batch", o->sanitize_batch, "batch of the grading shapes under --sanitize")
      ->check(CLI::Range(1, 1000));
  cmd->add_option("--compute-sanitizer", o->sanitizer_path, "the compute-sanitizer program to use");
  cmd->add_option("--sanitize-logs", o->sanitize_logs, "keep compute-sanitizer's own logs in this folder");
  cmd->callback([o, &status] {
    try {
      status = run_grade(*o);
    } catch (const std::exception& e) {
      fmt::print(stderr, "labkit grade: {}\n", e.what());
      status = exit_code::kKitError;
    }
  });
}

}  // namespace labkit::cli
