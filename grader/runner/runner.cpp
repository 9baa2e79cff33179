// The per-lab grading executable's main: options, the watchdog and crash handler, the order of
// the checks, the verdict, the score and the output. What is checked lives in grade_conv.cpp and
// grade_map.cpp; how it is printed in labkit/report.h.
#include "runner.h"

#include <CLI/CLI.hpp>
#include <fmt/core.h>
#include <unistd.h>

#include <chrono>
#include <csignal>
#include <cstring>
#include <fstream>
#include <random>

#include "labkit/clocks.h"
#include "labkit/cuda_check.h"
#include "labkit/device.h"
#include "labkit/exit_codes.h"
#include "labkit/phase.h"
#include "labkit/report.h"
#include "labkit/stats.h"
#include "labkit_config.h"
#include "watchdog.h"

namespace labkit::runner {
namespace {

enum class Expect { verdict, full_marks, zero, missing_evidence };

struct Cli {
  Options opt;
  bool json = false;
  std::string gradescope;
  Expect expect = Expect::verdict;
};

std::uint64_t fresh_seed() {
  std::random_device rd;
  const auto now = std::chrono::high_resolution_clock::now().time_since_epoch().count();
  return (std::uint64_t(rd()) << 32 ^ rd()) ^ std::uint64_t(now) * 0x9E3779B97F4A7C15ull;
}

void finish_verdict(const LabSpec& spec, GradeResult& r) {
  const bool correct = r.verdict.empty();
  const bool honest = std::none_of(r.timing.begin(), r.timing.end(), [](const ShapeTiming& t) { return t.hidden_work; });
  const bool host_ok = std::all_of(r.host_evidence.begin(), r.host_evidence.end(),
                                   [](const HostEvidenceReport& h) { return h.ok; });
  if (r.timed) {
    std::vector<double> mid, low, high;
    for (const ShapeTiming& t : r.timing) {
      mid.push_back(t.speedup);
      low.push_back(std::max(t.low, 1e-9));
      high.push_back(std::max(t.high, 1e-9));
    }
    r.speedup = stats::geometric_mean(mid);
    r.speedup_low = stats::geometric_mean(low);
    r.speedup_high = stats::geometric_mean(high);
  }
  r.score = compute_score({spec.points, spec.correctness_share, spec.target_speedup, correct, r.timed,
                           r.speedup, r.evidence.ok && host_ok, honest});
  if (!correct) {
    if (r.hint.empty())
      r.hint = !spec.hint_correctness.empty()
                   ? spec.hint_correctness
                   : fmt::format("Replay exactly this run with --seed {}, and trace the first wrong element by hand.", r.seed);
    return;
  }
  const std::size_t n = r.cases.size();
  if (!honest) {
    r.verdict = verdict::kHiddenWork;
    r.message = "The output is correct, but conv_forward_gpu returned while work was still running "
                "outside the timed region (the host clock, read after a device-wide sync, measured "
                "more than the CUDA events): the Op Time would not be the op's time.";
    r.hint = "Launch the op's kernels on the default stream, or synchronize the streams you use "
             "before conv_forward_gpu returns.";
  } else if (!r.evidence.ok || !host_ok) {
    r.verdict = verdict::kMissingEvidence;
    r.message = fmt::format("Correct on all {} cases, but the technique of this lab is not in the "
                            "code (see Evidence): the speedup earns no points without it.", n);
    r.hint = !spec.hint_evidence.empty() ? spec.hint_evidence : "Apply the technique the handout describes.";
  } else {
    r.verdict = verdict::kPassed;
    r.message = r.timed ? fmt::format("Correct on all {} cases; speedup {:.2f}x over the baseline "
                                      "(target {:.2f}x); {:.2f} of {:g} points.",
                                      n, r.speedup, spec.target_speedup, r.score.total, r.score.max)
                        : fmt::format("Correct on all {} cases (speed not measured).", n);
    if (r.score.total + 1e-9 < r.score.max)
      r.hint = !spec.hint_performance.empty() ? spec.hint_performance
                                              : "Profile the kernel (Nsight Compute) to see what limits it.";
  }
}

// A skeleton left untouched still holds its TODO(student) markers: say so, it is the likely cause.
void mention_todos(const LabUnderTest& lab, GradeResult& r) {
  std::ifstream in(lab.source_path);
  int todos = 0;
  for (std::string line; std::getline(in, line);) todos += line.find("TODO(student)") != std::string::npos;
  if (todos > 0 && r.verdict != verdict::kPassed)
    r.hint = fmt::format("{} still has {} TODO(student) block(s): fill them in first. ", lab.source, todos) + r.hint;
}

int exit_code_for(const Cli& cli, const GradeResult& r) {
  const int natural = verdict::exit_code(r.verdict);
  if (natural == exit_code::kNoDevice || natural == exit_code::kKitError) return natural;
  switch (cli.expect) {
    case Expect::verdict: return natural;
    case Expect::full_marks:
      return r.verdict == verdict::kPassed && r.score.total + 1e-9 >= r.score.max ? exit_code::kPass : exit_code::kFail;
    case Expect::zero:
      return r.score.total == 0 && !r.message.empty() ? exit_code::kPass : exit_code::kFail;
    case Expect::missing_evidence: return r.evidence.ok ? exit_code::kFail : exit_code::kPass;
  }
  return natural;
}

void emit(const Cli& cli, GradeResult& r) {
  const nlohmann::json j = to_json(r);
  if (cli.json) fmt::print("{}\n", j.dump(2));
  else fmt::print("{}", format_text(j, isatty(STDOUT_FILENO)));
  if (!cli.gradescope.empty()) {
    std::ofstream out(cli.gradescope);
    out << gradescope({j}).dump(2) << "\n";
    if (!out) fmt::print(stderr, "labkit: cannot write {}\n", cli.gradescope);
  }
  std::fflush(stdout);
}

// `labkit profile`'s child: one op under Nsight Compute; what ran, as one JSON line.
int profile(const LabUnderTest& lab, const LabSpec& spec, const Options& opt) {
  try {
    const ProfiledShape p = spec.kind == LabKind::conv ? profile_conv(lab, opt) : profile_map(lab, spec, opt);
    fmt::print("{}\n", nlohmann::json{{"side", opt.profile_side}, {"case", p.name}, {"shape", p.shape},
                                       {"shapes", p.shapes}}.dump());
    return exit_code::kPass;
  } catch (const std::out_of_range& e) {
    fmt::print(stderr, "labkit: no grading shape {} ({})\n", opt.profile_case, e.what());
    return exit_code::kUsage;
  } catch (const std::exception& e) {
    fmt::print(stderr, "labkit: the {} failed during {}: {}\n", opt.profile_side == "lab" ? "lab" : "baseline",
               g_phase.load(), e.what());
    return exit_code::kFail;
  }
}

}  // namespace

int main(int argc, char** argv, const LabUnderTest& lab) {
  Cli cli;
  cli.opt.fixtures = LABKIT_FIXTURES_SMALL;
  cli.opt.data_dir = LABKIT_DATASET_DIR;
  cli.opt.model_dir = LABKIT_MODEL_DIR;
  CLI::App app{fmt::format("Grade lab {} ({}, {}): correctness, speedup over the baseline, "
                           "evidence of the technique, score.", lab.id, lab.role, lab.source)};
  app.add_option("--seed", cli.opt.seed, "replay a run: the seed of the random cases (printed by every run)");
  app.add_option("--batch", cli.opt.batch, "batch size of the grading shapes (conv1, conv2)")->check(CLI::Range(1, 10000));
  app.add_option("--random-cases", cli.opt.random_cases, "fresh random cases")->check(CLI::Range(0, 100));
  app.add_option("--fixtures", cli.opt.fixtures, "fixture manifest")->check(CLI::ExistingFile);
  app.add_option("--data", cli.opt.data_dir, "the network's test set (labs with a network accuracy check)");
  app.add_option("--model", cli.opt.model_dir, "the network's model folder");
  app.add_option("--max-time", cli.opt.stopping.max_seconds, "time cap per timed shape, seconds")->check(CLI::Range(0.1, 600.0));
  app.add_option("--max-noise", cli.opt.stopping.max_noise, "stop timing when the speedup's 95% interval is within this fraction")->check(CLI::Range(0.0001, 1.0));
  app.add_option("--min-samples", cli.opt.stopping.min_samples, "least pairs timed per shape")->check(CLI::Range(3, 100000));
  app.add_flag("--correctness-only", cli.opt.correctness_only, "check the output, skip timing");
  app.add_flag("--evidence-only", cli.opt.evidence_only, "check the PTX only (no GPU needed)");
  app.add_option("--timeout", cli.opt.timeout_s, "seconds before a lab that does not return is stopped")->check(CLI::Range(1.0, 86400.0));
  app.add_flag("--under-sanitizer", cli.opt.under_sanitizer,
               "run by `labkit grade --sanitize`: correctness cases only, no CUPTI, no network run");
  app.add_option("--profile", cli.opt.profile_side,
                 "run by `labkit profile`: one op of this side on one grading shape, then exit")
      ->check(CLI::IsMember({"lab", "baseline"}));
  app.add_option("--profile-case", cli.opt.profile_case, "the grading shape --profile runs (0 = conv1)")
      ->check(CLI::Range(0, 15));
  app.add_flag("--json", cli.json, "print the result as JSON");
  app.add_option("--gradescope", cli.gradescope, "also write a Gradescope results.json here");
  std::map<std::string, Expect> expects{{"verdict", Expect::verdict}, {"full-marks", Expect::full_marks},
                                        {"zero", Expect::zero}, {"missing-evidence", Expect::missing_evidence}};
  app.add_option("--expect", cli.expect, "kit self-tests: exit 0 when the result is this")
      ->transform(CLI::CheckedTransformer(expects, CLI::ignore_case));
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? exit_code::kPass : exit_code::kUsage;
  }
  cli.opt.seed_given = app.count("--seed") > 0;
  if (cli.opt.under_sanitizer) cli.opt.correctness_only = true;
  if (!cli.opt.seed_given) cli.opt.seed = fresh_seed();

  const auto start = std::chrono::steady_clock::now();
  GradeResult r;
  r.id = lab.id;
  r.role = lab.role;
  r.kernel_source = lab.source;
  r.seed = cli.opt.seed;
  r.batch = cli.opt.batch;
  LabSpec spec;
  try {
    spec = load_lab_spec(lab.lab_json, lab.id);
    r.title = spec.title;
    r.kind = to_string(spec.kind);
    r.precision = to_string(spec.precision);
    r.timed_region = to_string(spec.timed);
    r.target_speedup = spec.target_speedup;
    r.score.max = spec.points;
    r.evidence = evidence::check(evidence::read_ptx_file(lab.ptx), spec.evidence);
  } catch (const std::exception& e) {
    r.verdict = verdict::kKitError;
    r.message = e.what();
    r.exit_code = exit_code::kKitError;
    emit(cli, r);
    return r.exit_code;
  }
  if (cli.opt.evidence_only) {
    r.verdict = r.evidence.ok ? verdict::kPassed : verdict::kMissingEvidence;
    if (spec.evidence.empty()) {
      std::string kinds;
      for (HostEvidence h : spec.host_evidence) kinds += std::string(kinds.empty() ? "" : ", ") + to_string(h);
      r.message = "This lab has no PTX pattern: its technique (" + (kinds.empty() ? std::string("none") : kinds) +
                  ") is checked at run time, on a GPU.";
    } else {
      r.message = r.evidence.ok ? "The PTX shows the technique (evidence only: correctness and speed not checked)."
                                : "The PTX does not show the technique (evidence only).";
    }
    r.score.max = spec.points;
    r.exit_code = exit_code_for(cli, r);
    emit(cli, r);
    return r.exit_code;
  }

  install_crash_handler();
  Watchdog watchdog(cli.opt.timeout_s, r, cli.json);
  if (!cuda_device_available()) {
    r.verdict = verdict::kNoDevice;
    r.message = "No usable CUDA device (no driver or no GPU): correctness and speed need one; "
                "only the PTX evidence could be checked here.";
    r.score.max = spec.points;
    r.exit_code = exit_code::kNoDevice;
    emit(cli, r);
    return r.exit_code;
  }
  if (!cli.opt.profile_side.empty()) {
    watchdog.disarm();  // under Nsight Compute every kernel is replayed: `labkit profile` keeps the time limit
    return profile(lab, spec, cli.opt);
  }
  try {
    const DeviceInfo d = device_info();
    r.device = d.name;
    r.driver = fmt::format("{}.{}", d.driver_version / 1000, (d.driver_version % 1000) / 10);
    r.peak_sm_clock_mhz = d.peak_sm_clock_mhz;
    const SmClock clock = read_sm_clock();
    r.max_sm_clock_mhz = clock.max_sm_mhz;
    r.verdict.clear();  // empty = correct so far; grade_* set a failure verdict
    if (spec.kind == LabKind::conv) grade_conv(lab, spec, cli.opt, r);
    else grade_map(lab, spec, cli.opt, r);
    finish_verdict(spec, r);
    mention_todos(lab, r);
  } catch (const std::exception& e) {
    r.verdict = verdict::kKitError;
    r.message = fmt::format("The kit failed during {}: {}", g_phase.load(), e.what());
  }
  watchdog.disarm();
  r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  r.exit_code = exit_code_for(cli, r);
  emit(cli, r);
  return r.exit_code;
}

}  // namespace labkit::runner
