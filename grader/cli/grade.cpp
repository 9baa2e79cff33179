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
};

// The last `lines` lines of a child's stderr, for the report of a lab that could not report.
std::string tail(const std::string& text, std::size_t lines) {
  std::size_t start = text.ends_with('\n') ? text.size() - 1 : text.size();
  for (std::size_t n = 0; n < lines && start != std::string::npos && start > 0; ++n)
    start = text.rfind('\n', start - 1);
  return start == std::string::npos || start == 0 ? text : text.substr(start + 1);
}

// The child's JSON, or a result made from how it ended when it could not report itself.
json result_of(const LabEntry& lab, const subprocess::Result& p) {
  if (p.started && !p.timed_out && p.signal == 0) {
    try {
      json j = json::parse(p.out);
      if (j.is_object() && j.contains("verdict")) return j;
    } catch (const json::parse_error&) {
    }
  }
  std::string v = verdict::kCrashed, message, hint;
  if (!p.started) {
    v = verdict::kKitError;
    message = p.error;
  } else if (p.timed_out) {
    v = verdict::kTimeout;
    message = fmt::format("The grading of {} {}.", lab.id, p.describe());
    hint = verdict::kNeverReturnsHint;
  } else if (const auto at = p.err.find("labkit: the lab crashed:"); at != std::string::npos) {
    // The runner's crash handler named the signal, the phase and the case (grader/runner/watchdog.h).
    message = "T" + p.err.substr(at + 9, p.err.find('\n', at) - at - 9);
    if (message.find("SIGSEGV") != std::string::npos) hint = verdict::kHostSegfaultHint;
  } else {
    message = fmt::format("The lab's process {} before it could report.", p.describe());
    if (p.signal == SIGSEGV) hint = verdict::kHostSegfaultHint;
  }
  const std::string err = tail(p.err, 6);
  if (!err.empty()) message += "\nIts last words:\n" + err;
  // The lab's points still count in the class's maximum: a crash scores 0 of them, not 0 of 0.
  std::string title = lab.id;
  double points = 0;
  try {
    const LabSpec spec = load_lab_spec(lab.lab_json);
    title = spec.title;
    points = spec.points;
  } catch (const LabSpecError&) {  // the child reports a broken lab.json itself
  }
  return {{"lab", {{"id", lab.id}, {"role", lab.role}, {"kind", lab.kind}, {"title", title}}},
          {"verdict", v}, {"message", message}, {"hint", hint},
          {"score", {{"total", 0}, {"max", points}, {"lines", json::array()}}},
          {"seconds", p.seconds}, {"exit_code", verdict::exit_code(v)}};
}

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

  struct sigaction sa{};
  sa.sa_handler = on_interrupt;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGINT, &sa, nullptr);
  sigaction(SIGTERM, &sa, nullptr);

  std::vector<json> results;
  for (const LabEntry& lab : selected) {
    std::vector<std::string> argv{lab.exe, "--json"};
    // The child's own watchdog fires first and names the phase; ours is the backstop.
    argv.insert(argv.end(), {"--timeout", fmt::format("{:g}", std::max(1.0, o.timeout_s - 5))});
    if (!o.seed.empty()) argv.insert(argv.end(), {"--seed", o.seed});
    if (o.batch > 0) argv.insert(argv.end(), {"--batch", std::to_string(o.batch)});
    if (o.correctness_only) argv.push_back("--correctness-only");
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
