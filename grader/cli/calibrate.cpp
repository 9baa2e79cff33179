// `labkit calibrate` — proposes each lab's target_speedup for this GPU model from its instructor
// solution: the solution is graded with timing (through the judge, as `labkit grade` does) and
// the target is set below the low end of its speedup's 95% interval, with a margin in
// log-speedup (the score grows with ln(speedup) / ln(target), grader/judge/score.h). Writes nothing
// unless --write, which records the target and its measurement under this GPU's name in the
// lab.json's targets_by_gpu (grading on this model uses it); --default also makes it the target
// of GPUs without a calibration.
#include <fmt/core.h>

#include <random>

#include <cmath>
#include <ctime>
#include <fstream>
#include <memory>

#include "commands.h"
#include "lab_process.h"
#include "labkit/cuda_check.h"
#include "grader/judge/device.h"
#include "grader/core/exit_codes.h"
#include "grader/judge/lab_spec.h"
#include "grader/judge/grade_result.h"
#include "grader/judge/judge.h"
#include "grader/judge/subprocess.h"
#include "labkit_config.h"

namespace labkit::cli {
namespace {

using nlohmann::json;

// Below this a target rewards noise: ln(1.05) is the smallest gain the score still tells apart.
constexpr double kMinTarget = 1.05;

struct CalibrateOptions {
  std::vector<std::string> labs;
  double margin = 0.2;
  bool write = false;
  bool make_default = false;
  int batch = 0;
  double timeout_s = 600;
};

double proposed_target(double low, double margin) {
  const double t = std::pow(std::max(low, 1.0), 1.0 - margin);
  return std::max(kMinTarget, std::floor(t * 100) / 100);
}

// Today's date (UTC), for the record of a calibration.
std::string today() {
  const std::time_t now = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&now, &tm);
  char buf[16];
  std::strftime(buf, sizeof buf, "%Y-%m-%d", &tm);
  return buf;
}

int run_calibrate(const CalibrateOptions& o) {
  std::vector<LabEntry> selected;
  const auto registry = read_registry();
  for (const LabEntry& l : registry)
    if (l.role == "solution" && (o.labs.empty() || std::find(o.labs.begin(), o.labs.end(), l.id) != o.labs.end()))
      selected.push_back(l);
  for (const std::string& id : o.labs)
    if (std::none_of(selected.begin(), selected.end(), [&](const LabEntry& l) { return l.id == id; })) {
      fmt::print(stderr, "labkit calibrate: no solution named \"{}\" in this build (see `labkit list`)\n", id);
      return exit_code::kUsage;
    }
  if (selected.empty()) {
    fmt::print(stderr, "labkit calibrate: this build has no solutions/ (a student distribution?): nothing to calibrate from\n");
    return exit_code::kUsage;
  }
  if (!cuda_device_available()) {
    fmt::print(stderr, "labkit calibrate: skipped: no usable CUDA device (targets are measured on the GPU that will grade)\n");
    return exit_code::kNoDevice;
  }
  const std::string gpu = device_info().name;
  fmt::print("labkit calibrate on {}: each solution graded with timing{}; proposed target = "
             "max({:.2f}, low^{:.2f}) (margin {:.2f} in log-speedup)\n\n",
             gpu, o.batch > 0 ? fmt::format(" at batch {}", o.batch) : "", kMinTarget, 1 - o.margin,
             o.margin);
  fmt::print("{:<20} {:>8} {:>9} {:>18} {:>9}  {}\n", "lab", "target", "solution", "95% interval", "proposed", "note");
  int failures = 0;
  std::vector<std::pair<const LabEntry*, GpuTarget>> proposals;
  for (const LabEntry& lab : selected) {
    if (!load_lab_spec(lab.lab_json).tiers.empty()) {
      fmt::print("{:<20} {:>8} {:>9} {:>18} {:>9}  tiered (lab.json \"tiers\"): the same on every GPU, nothing to calibrate\n",
                 lab.id, "-", "-", "-", "-");
      continue;
    }
    fmt::print(stderr, "grading {} (solution) ...\n", lab.id);
    judge::Options jo;
    jo.fixtures = LABKIT_FIXTURES_SMALL;
    jo.data_dir = LABKIT_DATASET_DIR;
    jo.model_dir = LABKIT_MODEL_DIR;
    jo.timeout_s = o.timeout_s;
    if (o.batch > 0) jo.batch = o.batch;
    std::random_device rd;
    jo.seed = (std::uint64_t(rd()) << 32) ^ rd();
    choose_sandbox("", jo);
    json r;
    try {
      r = to_json(judge::judge_lab(lab_under_test(lab), jo));
    } catch (const std::exception& e) {
      r = {{"verdict", verdict::kKitError}, {"message", e.what()}};
    }
    const double current = load_lab_spec(lab.lab_json).target_for(gpu).target_speedup;
    const json t = r.value("timing", json::object());
    const std::string v = r.value("verdict", "");
    if (v != "passed" || !t.value("measured", false)) {
      ++failures;
      fmt::print("{:<20} {:>7.2f}x {:>9} {:>18} {:>9}  the solution did not pass ({}): no proposal\n", lab.id, current,
                 "-", "-", "-", v);
      continue;
    }
    const double s = t.value("speedup", 0.0), low = t.value("speedup_low", 0.0), high = t.value("speedup_high", 0.0);
    const double target = proposed_target(low, o.margin);
    if (std::pow(low, 1.0 - o.margin) < kMinTarget) {
      // Any target the score can use (>= kMinTarget) would be above what the solution surely reaches.
      fmt::print("{:<20} {:>7.2f}x {:>8.2f}x   [{:>6.3f}, {:>6.3f}] {:>9}  too close to 1x for a margin: no "
                 "proposal (keep {:.2f}x only if the solution suite passes)\n",
                 lab.id, current, s, low, high, "-", current);
      continue;
    }
    const std::string note = current > low ? "the current target is above what the solution surely reaches" : "";
    fmt::print("{:<20} {:>7.2f}x {:>8.2f}x   [{:>6.3f}, {:>6.3f}] {:>8.2f}x  {}\n", lab.id, current, s, low, high,
               target, note);
    GpuTarget g;
    g.gpu = gpu;
    g.target_speedup = target;
    g.solution_speedup = s;
    g.solution_low = low;
    g.solution_high = high;
    g.batch = r.value("batch", 0);
    g.margin = o.margin;
    g.driver = r.value("device", json::object()).value("driver", "");
    g.date = today();
    proposals.push_back({&lab, g});
  }
  if (o.write) {
    for (const auto& [lab, g] : proposals) {
      const double before = load_lab_spec(lab->lab_json).target_for(gpu).target_speedup;
      write_gpu_target(lab->lab_json, g);
      fmt::print("wrote {}: targets_by_gpu[\"{}\"] target_speedup {:.2f} -> {:.2f}\n", lab->lab_json.string(), gpu,
                 before, g.target_speedup);
      if (o.make_default) {
        write_default_target(lab->lab_json, g.target_speedup);
        fmt::print("wrote {}: default target_speedup {:.2f}\n", lab->lab_json.string(), g.target_speedup);
      }
    }
  } else if (!proposals.empty()) {
    fmt::print("\nNothing written. `labkit calibrate --write` records these targets for {} in labs/*/lab.json "
               "(targets_by_gpu).\n", gpu);
  }
  return failures ? exit_code::kFail : exit_code::kPass;
}

}  // namespace

void add_calibrate(CLI::App& app, int& status) {
  auto o = std::make_shared<CalibrateOptions>();
  auto* cmd = app.add_subcommand("calibrate", "Propose each lab's target_speedup from its solution on this GPU");
  cmd->add_option("labs", o->labs, "lab ids (default: every solution)");
  cmd->add_option("--margin", o->margin, "fraction of the solution's log-speedup kept in reserve")
      ->check(CLI::Range(0.0, 0.9));
  cmd->add_flag("--write", o->write, "record the proposed targets for this GPU model in labs/*/lab.json (targets_by_gpu)");
  cmd->add_flag("--default", o->make_default, "with --write: also make them the target of GPUs without a calibration")
      ->needs("--write");
  cmd->add_option("--batch", o->batch, "batch size of the grading shapes")->check(CLI::Range(1, 10000));
  cmd->add_option("--timeout", o->timeout_s, "seconds per solution")->check(CLI::Range(2.0, 86400.0));
  cmd->callback([o, &status] {
    try {
      status = run_calibrate(*o);
    } catch (const std::exception& e) {
      fmt::print(stderr, "labkit calibrate: {}\n", e.what());
      status = exit_code::kKitError;
    }
  });
}

}  // namespace labkit::cli
