// `labkit grade` — the judge: grades labs one after another in this process, each lab's code in
// its own sandboxed harness process (grader/judge/judge.h), and aggregates: the per-lab reports, a
// summary table, --json, a Gradescope results.json, and --html: a page per lab (grader/judge/pages.h;
// one lab: the file named, several: a folder of <lab>.html). A result with a streams timeline
// (grader/tools/timeline.h) also gets its picture as an SVG file, named after the report (--svg DIR;
// by default build/timelines when the report is printed). --from draws all of that from a saved
// --json output instead of grading. Nothing a lab prints is read as a result.
#include <filesystem>
#include <fmt/core.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <random>

#include "commands.h"
#include "lab_process.h"
#include "counter_check.h"
#include "memory_check.h"
#include "labkit/cuda_check.h"
#include "grader/core/exit_codes.h"
#include "grader/judge/grade_result.h"
#include "grader/judge/html.h"
#include "grader/judge/judge.h"
#include "grader/judge/pages.h"
#include "grader/core/random.h"
#include "grader/judge/report.h"
#include "grader/tools/sanitizer.h"
#include "labkit_config.h"
#include "registry.h"
#include "saved_results.h"
#include "sanitize.h"

namespace labkit::cli {
namespace {

using nlohmann::json;

// The grading shapes' batch in the memory check: the smallest (the fixtures hold the same shapes
// at batch 2); under racecheck a kernel runs 10-100x slower (docs/grading.md, "The memory check").
constexpr int kMemoryCheckBatch = 1;

// Kit self-tests (meson's suites) ask for an outcome instead of the natural verdict.
enum class Expect { verdict, full_marks, zero, missing_evidence };

struct GradeOptions {
  std::vector<std::string> labs;
  bool all = false, solutions = false, tests = false;
  judge::Options judge;
  std::string sandbox;  // empty: LABKIT_SANDBOX or bubblewrap
  bool json = false;
  std::string gradescope, html;
  std::string seed;
  Expect expect = Expect::verdict;
  bool sanitize = false;
  bool quick = false;  // no memory check
  std::vector<std::string> sanitize_tools = sanitizer::kTools;
  std::string sanitizer_path, sanitize_logs;
  std::string ncu_path;
  bool no_counters = false;  // no executed-counter check
  int sanitize_batch = 8;
  std::string contract;  // empty: each lab's own (lab.json "contract")
  std::string svg;       // the timelines' folder; empty: LABKIT_BUILD_ROOT/timelines unless --json
  std::string from;      // a saved `labkit grade --json` output to draw instead of grading
};

// Where the timelines' pictures go by default: the build folder, which the student owns.
const std::string kTimelines = std::string(LABKIT_BUILD_ROOT) + "/timelines";

// One result as the terminal shows it: the report, then where its timeline's picture went.
void report_one(const GradeOptions& o, const json& r) {
  if (!o.json) fmt::print("{}\n", format_text(r, isatty(STDOUT_FILENO)));
  const std::string svg = o.svg.empty() && o.json ? "" : write_timeline(r, o.svg.empty() ? kTimelines : o.svg);
  if (!svg.empty())
    fmt::print(o.json ? stderr : stdout, "Timeline picture (the lab's recorded layer above the baseline's; open it in a "
                                          "browser): {}\n", svg);
}

int expected_exit(Expect expect, const json& r) {
  const std::string v = r.value("verdict", "");
  const int natural = verdict::exit_code(v);
  if (natural == exit_code::kNoDevice || natural == exit_code::kKitError || expect == Expect::verdict) return natural;
  const double total = r["score"].value("total", 0.0), max = r["score"].value("max", 0.0);
  switch (expect) {
    case Expect::full_marks: return v == verdict::kPassed && total + 1e-9 >= max ? exit_code::kPass : exit_code::kFail;
    case Expect::zero: return total == 0 && !r.value("message", "").empty() ? exit_code::kPass : exit_code::kFail;
    case Expect::missing_evidence: return r["evidence"].value("ok", true) ? exit_code::kFail : exit_code::kPass;
    default: return natural;
  }
}

json grade_one(const LabEntry& lab, const judge::Options& o) {
  try {
    GradeResult r = judge::judge_lab(lab_under_test(lab), o);
    return to_json(r);
  } catch (const std::exception& e) {
    GradeResult r;
    r.id = lab.id;
    r.role = lab.role;
    r.kind = lab.kind;
    r.verdict = verdict::kKitError;
    r.message = fmt::format("The kit failed while grading {}: {}", lab.id, e.what());
    r.exit_code = exit_code::kKitError;
    return to_json(r);
  }
}

// Grades the labs named; -1, or the exit status of a usage or kit error before any grading.
int grade_labs(GradeOptions& o, std::vector<json>& results) {
  const std::string role = o.solutions ? "solution" : o.tests ? "test" : "lab";
  std::vector<LabEntry> selected;
  const auto registry = read_registry();
  if (o.all)
    for (const LabEntry& l : registry)
      if (l.role == role) selected.push_back(l);
  for (const std::string& id : o.labs) {
    auto it = std::find_if(registry.begin(), registry.end(), [&](const LabEntry& l) { return l.role == role && l.id == id; });
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
  judge::Options& jo = o.judge;
  if (!o.contract.empty()) jo.contract = contract_from_string(o.contract);
  jo.seed_given = !o.seed.empty();
  if (jo.seed_given) {
    try {
      jo.seed = std::stoull(o.seed);
    } catch (const std::exception&) {
      fmt::print(stderr, "labkit grade: --seed {}: not a number (copy the seed a report printed)\n", o.seed);
      return exit_code::kUsage;
    }
  } else {
    jo.seed = fresh_seed();
  }
  // Without a GPU nothing of the lab runs: only its PTX evidence is read, and no sandbox is needed.
  const bool device = cuda_device_available();
  if (device && !jo.evidence_only) {
    try {
      choose_sandbox(o.sandbox, jo);
    } catch (const std::exception& e) {
      fmt::print(stderr, "labkit grade: {}\n", e.what());
      return exit_code::kKitError;
    }
  }

  SanitizeOptions san;
  if (o.sanitize) {
    if (!device) {
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
    san.progress = !o.json;
    san.keep_logs = o.sanitize_logs;
  }

  // The memory check of every grade (memory_check.h): compute-sanitizer in the lab's sandbox.
  const bool memory = device && !jo.evidence_only && !o.sanitize && !o.quick;
  // What the memory check and the counter check share: the lab graded again behind a tool.
  ToolCheckOptions tool_check;
  tool_check.judge = jo;
  tool_check.batch = kMemoryCheckBatch;
  tool_check.timeout_s = std::min(jo.timeout_s, 300.0);
  tool_check.progress = !o.json;
  tool_check.keep_logs = o.sanitize_logs;
  tool_check.grade = [](const LabEntry& lab, const judge::Options& so) { return grade_one(lab, so); };
  MemoryCheckOptions mem;
  if (memory) {
    mem.sanitizer = find_tool("compute-sanitizer", o.sanitizer_path);
    if (mem.sanitizer.empty()) {
      fmt::print(stderr,
                 "labkit grade: {}: every grade checks memory safety with it (it ships with the CUDA toolkit). Install "
                 "it, name it with --compute-sanitizer PATH, or grade without the check: --quick\n",
                 o.sanitizer_path.empty() ? "compute-sanitizer not found on PATH or in " LABKIT_CUDA_ROOT "/bin"
                                          : o.sanitizer_path + " is not an executable");
      return exit_code::kKitError;
    }
    static_cast<ToolCheckOptions&>(mem) = tool_check;
  }

  // The executed-counter check (counter_check.h), where lab.json asks for it and ncu can read the
  // GPU's counters; without ncu the grade says its evidence is the kernels that ran.
  const bool counters = memory && !o.no_counters;
  CounterCheckOptions cnt;
  if (counters) {
    static_cast<ToolCheckOptions&>(cnt) = tool_check;
    cnt.ncu = find_tool("ncu", o.ncu_path, ncu_install_dirs());
  }

  for (const LabEntry& lab : selected) {
    json r;
    if (o.sanitize) {
      if (!o.json) fmt::print(stderr, "checking {} ({}) under compute-sanitizer, batch {} ...\n", lab.id, lab.role, o.sanitize_batch);
      san.grade = [&](const std::vector<std::string>& wrapper) {
        judge::Options so = jo;
        so.wrapper = wrapper;
        so.correctness_only = true;
        so.under_sanitizer = true;
        so.batch = o.sanitize_batch;
        so.random_cases = 1;
        // The sanitizer writes its log where the judge reads it: it runs outside the sandbox, as a
        // debugging aid (docs/grading.md).
        so.sandbox = sandbox::Mode::none;
        return grade_one(lab, so);
      };
      r = run_sanitized(lab, san);
    } else {
      if (!o.json) fmt::print(stderr, "grading {} ({}) ...\n", lab.id, lab.role);
      r = grade_one(lab, jo);
      if (o.quick && device && !jo.evidence_only) {
        memory_check_skipped(r, "--quick");
        r["message"] = r.value("message", "") + "\nMemory check skipped (--quick): grade without --quick before you submit.";
      } else if (memory && needs_memory_check(r)) {
        try {
          memory_check(lab, r, mem);
        } catch (const std::exception& e) {
          r["verdict"] = verdict::kKitError;
          r["message"] = fmt::format("The kit failed in the memory check of {}: {}", lab.id, e.what());
          if (r.contains("score") && r["score"].is_object()) r["score"]["total"] = 0;
        }
      } else if (memory) {
        memory_check_skipped(r, fmt::format("not needed: the verdict is {}", r.value("verdict", "")));
      }
      if (counters) {
        try {
          if (needs_counter_check(r, load_lab_spec(lab.lab_json, lab.id))) counter_check(lab, r, cnt);
        } catch (const std::exception& e) {
          r["verdict"] = verdict::kKitError;
          r["message"] = fmt::format("The kit failed in the counter check of {}: {}", lab.id, e.what());
          if (r.contains("score") && r["score"].is_object()) r["score"]["total"] = 0;
        }
      }
    }
    r["exit_code"] = expected_exit(o.expect, r);
    report_one(o, r);
    results.push_back(std::move(r));
  }
  return -1;
}

int run_grade(GradeOptions& o) {
  std::vector<json> results;
  if (!o.from.empty()) {
    if (!o.labs.empty() || o.all) {
      fmt::print(stderr, "labkit grade: --from draws a saved result: it grades nothing, so name no lab and no --all\n");
      return exit_code::kUsage;
    }
    try {
      results = read_results(o.from);
    } catch (const std::exception& e) {
      fmt::print(stderr, "labkit grade: --from {}\n", e.what());
      return exit_code::kUsage;
    }
    for (json& r : results) {
      r["exit_code"] = verdict::exit_code(r.value("verdict", std::string(verdict::kKitError)));
      report_one(o, r);
    }
  } else if (const int status = grade_labs(o, results); status >= 0) {
    return status;
  }

  double total = 0, max = 0;
  bool all_ok = true, any_kit_error = false, all_no_device = true;
  for (const json& r : results) {
    total += r["score"].value("total", 0.0);
    max += r["score"].value("max", 0.0);
    all_ok &= r.value("exit_code", 1) == exit_code::kPass;
    any_kit_error |= r.value("verdict", "") == verdict::kKitError;
    all_no_device &= r.value("verdict", "") == verdict::kNoDevice;
  }
  if (o.json) {
    fmt::print("{}\n", json{{"results", results}, {"score", total}, {"max_score", max}}.dump(2, ' ', false, json::error_handler_t::replace));
  } else if (results.size() > 1) {
    fmt::print("{:<20} {:<19} {:>9} {:>14}\n", "lab", "verdict", "speedup", "score");
    for (const json& r : results) {
      const double speedup = r.contains("timing") ? r["timing"].value("speedup", 0.0) : 0.0;
      fmt::print("{:<20} {:<19} {:>8} {:>6.2f} / {:<5.2f}\n", r["lab"].value("id", ""), r.value("verdict", ""),
                 speedup > 0 ? fmt::format("{:.2f}x", speedup) : "-", r["score"].value("total", 0.0),
                 r["score"].value("max", 0.0));
    }
    fmt::print("{:<20} {:<19} {:>9} {:>6.2f} / {:<5.2f}\n", "total", "", "", total, max);
  }
  if (!o.gradescope.empty()) {
    std::ofstream out(o.gradescope);
    out << gradescope(results).dump(2, ' ', false, json::error_handler_t::replace) << "\n";
    if (!out) {
      fmt::print(stderr, "labkit grade: cannot write {}\n", o.gradescope);
      return exit_code::kKitError;
    }
  }
  if (!o.html.empty()) {
    // One lab: the file named. Several: a folder holding a page per lab.
    if (results.size() == 1 && !o.all) {
      html::write_page(o.html, pages::grade_page(results.front()));
    } else {
      std::filesystem::create_directories(o.html);
      for (const json& r : results)
        html::write_page((std::filesystem::path(o.html) / (r["lab"].value("id", "lab") + ".html")).string(), pages::grade_page(r));
    }
    if (!o.json) fmt::print(stderr, "labkit grade: page{} written to {}\n", results.size() == 1 && !o.all ? "" : "s", o.html);
  }
  if (any_kit_error) return exit_code::kKitError;
  if (all_no_device) return exit_code::kNoDevice;
  return all_ok ? exit_code::kPass : exit_code::kFail;
}

}  // namespace

void add_grade(CLI::App& app, int& status) {
  auto o = std::make_shared<GradeOptions>();
  o->judge.fixtures = LABKIT_FIXTURES_SMALL;
  o->judge.data_dir = LABKIT_DATASET_DIR;
  o->judge.model_dir = LABKIT_MODEL_DIR;
  o->judge.timeout_s = 600;
  auto* cmd = app.add_subcommand("grade", "Grade labs: each lab's code in its own sandboxed process, judged here");
  cmd->add_option("labs", o->labs, "lab ids, e.g. 03-tiling");
  cmd->add_flag("--all", o->all, "every lab of this build");
  cmd->add_flag("--solutions", o->solutions, "grade the instructor solutions instead of labs/");
  cmd->add_flag("--tests", o->tests, "grade the grader's own test labs (tests/labs)");
  cmd->add_option("--timeout", o->judge.timeout_s, "seconds per lab before it is stopped")->check(CLI::Range(2.0, 86400.0));
  cmd->add_flag("--json", o->json, "print every result as JSON");
  cmd->add_option("--gradescope", o->gradescope, "write a Gradescope results.json here");
  cmd->add_option("--html", o->html, "write the report as a web page (with --all or several labs: a folder, a page per lab)");
  cmd->add_option("--svg", o->svg,
                  "write the streams timeline (a layer-timed lab's recorded layer, the lab's and the baseline's) as "
                  "DIR/<lab>-timeline.svg; default: the build's timelines/ folder, unless --json");
  cmd->add_option("--from", o->from,
                  "draw a saved `labkit grade --json` output (report, --html, --svg, --gradescope) instead of grading: "
                  "no GPU needed")
      ->check(CLI::ExistingFile);
  cmd->add_option("--seed", o->seed, "replay a run: the seed its report printed");
  cmd->add_option("--batch", o->judge.batch, "batch size of the grading shapes")->check(CLI::Range(1, 10000));
  cmd->add_option("--contract", o->contract,
                  "which correctness cases count: general (every shape) or course (the network's layers at the "
                  "course's batches; other shapes are warnings); default: the lab's lab.json")
      ->check(CLI::IsMember({"general", "course"}));
  cmd->add_option("--random-cases", o->judge.random_cases, "fresh random cases")->check(CLI::Range(0, 100));
  cmd->add_flag("--correctness-only", o->judge.correctness_only, "check outputs, skip timing");
  cmd->add_flag("--evidence-only", o->judge.evidence_only, "check the PTX only (no GPU needed)");
  cmd->add_option("--fixtures", o->judge.fixtures, "grade on this fixture manifest instead of the committed one (hidden cases)")
      ->check(CLI::ExistingFile);
  cmd->add_option("--data", o->judge.data_dir, "the network's test set (labs with a network accuracy check)");
  cmd->add_option("--model", o->judge.model_dir, "the network's model folder");
  cmd->add_option("--max-time", o->judge.stopping.max_seconds, "time cap per timed shape, seconds")->check(CLI::Range(0.1, 600.0));
  cmd->add_option("--max-noise", o->judge.stopping.max_noise, "stop timing when the speedup's 95% interval is within this fraction")
      ->check(CLI::Range(0.0001, 1.0));
  cmd->add_option("--min-samples", o->judge.stopping.min_samples, "least pairs timed per shape")->check(CLI::Range(3, 100000));
  cmd->add_option("--sandbox", o->sandbox, "how the lab's code is confined: bubblewrap (default) or none")
      ->check(CLI::IsMember({"bubblewrap", "bwrap", "none"}));
  std::map<std::string, Expect> expects{{"verdict", Expect::verdict}, {"full-marks", Expect::full_marks},
                                        {"zero", Expect::zero}, {"missing-evidence", Expect::missing_evidence}};
  cmd->add_option("--expect", o->expect, "kit self-tests: exit 0 when the result is this")
      ->transform(CLI::CheckedTransformer(expects, CLI::ignore_case));
  cmd->add_flag("--quick", o->quick,
                "skip the memory check every grade runs (compute-sanitizer on the small correctness cases): for "
                "iterating; the report says it was skipped");
  cmd->add_flag("--sanitize", o->sanitize,
                "instead of grading: the correctness cases under four compute-sanitizer tools (memcheck, racecheck, "
                "synccheck, initcheck), outside the sandbox, every finding listed");
  cmd->add_option("--sanitize-tools", o->sanitize_tools, "the compute-sanitizer tools --sanitize runs")
      ->delimiter(',')
      ->check(CLI::IsMember(sanitizer::kTools));
  cmd->add_option("--sanitize-batch", o->sanitize_batch, "batch of the grading shapes under --sanitize")
      ->check(CLI::Range(1, 1000));
  cmd->add_option("--ncu", o->ncu_path, "the Nsight Compute CLI for the executed-counter check (default: PATH, the toolkit)");
  cmd->add_flag("--no-counters", o->no_counters, "skip the executed-counter check (Nsight Compute) of labs that ask for it");
  cmd->add_option("--compute-sanitizer", o->sanitizer_path, "the compute-sanitizer program (memory check and --sanitize)");
  cmd->add_option("--sanitize-logs", o->sanitize_logs, "keep compute-sanitizer's own logs in this folder (memory check and --sanitize)");
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
