// `labkit calibrate` — proposes each lab's target_speedup for this GPU from its instructor
// solution: the solution is graded with timing (a child process, as `labkit grade` does) and the
// target is set below the low end of its speedup's 95% interval, with a margin in log-speedup
// (the score grows with ln(speedup) / ln(target), labkit/score.h). Writes nothing unless --write.
#include <fmt/core.h>

#include <random>

#include <cmath>
#include <fstream>
#include <memory>
#include <regex>
#include <sstream>

#include "commands.h"
#include "lab_process.h"
#include "labkit/cuda_check.h"
#include "labkit/device.h"
#include "labkit/exit_codes.h"
#include "labkit/lab_spec.h"
#include "labkit/grade_result.h"
#include "labkit/judge.h"
#include "labkit/subprocess.h"
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
  int batch = 0;
  double timeout_s = 600;
};

double proposed_target(double low, double margin) {
  const double t = std::pow(std::max(low, 1.0), 1.0 - margin);
  return std::max(kMinTarget, std::floor(t * 100) / 100);
}

// Replaces the value of "target_speedup" in the file's text, so that its layout and every other
// key stay as the instructor wrote them; then reads the file back as a lab.json.
void write_target(const std::filesystem::path& file, double target) {
  std::ifstream in(file);
  std::stringstream s;
  s << in.rdbuf();
  const std::string text = s.str();
  static const std::regex key(R"(("target_speedup"\s*:\s*)(-?[0-9][0-9.eE+-]*))");
  std::smatch m;
  if (!std::regex_search(text, m, key))
    throw std::runtime_error(fmt::format("{}: no \"target_speedup\": <number> to replace", file.string()));
  const std::string updated = m.prefix().str() + m[1].str() + fmt::format("{:.2f}", target) + m.suffix().str();
  {
    std::ofstream out(file);
    out << updated;
    if (!out) throw std::runtime_error(fmt::format("{}: cannot write", file.string()));
  }
  load_lab_spec(file);  // throws, naming the file, if the result is not a valid lab.json
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
  fmt::print("labkit calibrate on {}: each solution graded with timing{}; proposed target = "
             "max({:.2f}, low^{:.2f}) (margin {:.2f} in log-speedup)\n\n",
             device_info().name, o.batch > 0 ? fmt::format(" at batch {}", o.batch) : "", kMinTarget, 1 - o.margin,
             o.margin);
  fmt::print("{:<20} {:>8} {:>9} {:>18} {:>9}  {}\n", "lab", "target", "solution", "95% interval", "proposed", "note");
  int failures = 0;
  std::vector<std::pair<const LabEntry*, double>> proposals;
  for (const LabEntry& lab : selected) {
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
    const double current = load_lab_spec(lab.lab_json).target_speedup;
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
    proposals.push_back({&lab, target});
  }
  if (o.write) {
    for (const auto& [lab, target] : proposals) {
      const double before = load_lab_spec(lab->lab_json).target_speedup;
      write_target(lab->lab_json, target);
      fmt::print("wrote {}: target_speedup {:.2f} -> {:.2f}\n", lab->lab_json.string(), before, target);
    }
  } else if (!proposals.empty()) {
    fmt::print("\nNothing written. `labkit calibrate --write` sets these targets in labs/*/lab.json.\n");
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
  cmd->add_flag("--write", o->write, "write the proposed targets into labs/*/lab.json");
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
