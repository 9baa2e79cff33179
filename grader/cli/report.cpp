// `labkit report` — the milestone report's tables (design.md section 7): runs the network with a
// lab's conv for each batch size, each run in its own child process (labkit-network: a lab's conv,
// and the baseline's, in its sandboxed harness, `labkit-network lab --harness EXE`, the baseline's
// in the kit's own harness-kit-conv; the CPU reference, cuDNN and --baseline-inprocess in
// labkit-network's own process), and prints the tables (grader/network/milestone.h). --compare
// sets baseline, every conv solution and cuDNN side by side and draws the chart. --course prints
// the course's table instead (grader/network/course.h: conv1 + conv2 at batch 10000 against
// 06-fusion's solution). --from draws the same tables from a report saved with --format json (no
// GPU needed); --html writes them, the chart and how they were measured as a web page
// (grader/judge/pages.h), from the same in-memory Report as the text. --dry-run prints the
// command lines instead of running them.
#include <fmt/core.h>

#include <cstdlib>
#include <unistd.h>

#include <atomic>
#include <csignal>
#include <fstream>
#include <memory>
#include <nlohmann/json.hpp>
#include <sstream>

#include "commands.h"
#include "grader/network/course.h"
#include "grader/core/exit_codes.h"
#include "grader/core/text_escape.h"
#include "grader/judge/html.h"
#include "grader/judge/judge.h"
#include "grader/judge/lab_spec.h"
#include "grader/network/milestone.h"
#include "grader/network/network_run.h"
#include "grader/judge/pages.h"
#include "grader/judge/subprocess.h"
#include "labkit_config.h"
#include "registry.h"

namespace labkit::cli {
namespace {

using nlohmann::json;
namespace ms = labkit::milestone;

std::atomic<bool> g_report_interrupted{false};
constexpr int kDryRun = -1;  // run_all printed the commands: nothing to render
extern "C" void on_report_interrupt(int) { g_report_interrupted.store(true); }

struct ReportOptions {
  std::vector<std::string> labs;
  bool solution = false, solutions = false, tests = false, baseline = false, cpu = false, cudnn = false;
  bool baseline_inprocess = false;             // also the baseline's conv in labkit-network's own process
  bool dry_run = false;                        // print each run's command instead of running it
  bool compare = false;
  bool course = false;                         // the course's table (grader/network/course.h)
  std::string course_reference = "06-fusion";  // the lab whose instructor solution is its reference
  std::vector<int> batches{100, 1000, 10000};
  bool batches_given = false;
  std::string format = "md";
  std::string output, svg, html, from;
  std::string data = LABKIT_DATASET_DIR, model = LABKIT_MODEL_DIR;
  int op_repeats = 5;
  double timeout_s = 600;
};

// An implementation to run: a row label and the command that runs the network with its conv.
struct Subject {
  std::string name;
  std::vector<std::string> argv;  // up to, not including, the network options
  bool layer_timed = false;       // lab.json "timed": "layer": its Op Time is not what it optimizes
  bool lab = false;               // a lab's code in its harness, not one of the kit's convs
};

bool layer_timed(const LabEntry& l) {
  try {
    return load_lab_spec(l.lab_json).timed == TimedRegion::layer;
  } catch (const LabSpecError&) {
    return false;  // the lab's own run reports a broken lab.json
  }
}

std::vector<Subject> subjects_of(const ReportOptions& o, std::string& error) {
  std::vector<Subject> out;
  auto fixed = [&](const std::string& conv, const std::string& name) {
    out.push_back({name, {LABKIT_NETWORK_EXE, conv}});
  };
  // A lab's conv runs in its harness; labkit-network is its judge (checks, times, accuracy).
  const char* sandbox_mode = std::getenv("LABKIT_SANDBOX");
  const std::string mode = sandbox_mode && *sandbox_mode ? sandbox_mode : "bubblewrap";
  auto harness_argv = [&mode](const std::string& exe, const std::string& id, const std::string& precision) {
    return std::vector<std::string>{LABKIT_NETWORK_EXE, "lab", "--harness", exe, "--lab", id, "--precision",
                                    precision, "--sandbox", mode};
  };
  // The baseline's row takes the lab's path: its conv in the kit's own harness (the baseline
  // behind the lab API, the one grading times it in), in the same sandbox, through the same
  // requests, copies and checks. Its Total Execution Time then pays what a lab's pays (the
  // harness's start, the tensors moved through the shared-memory file, the checks), and the
  // comparison is like for like. It is the kit's code, not a lab's: --op-repeats 0 is allowed.
  if (o.baseline || o.compare) out.push_back({"baseline", harness_argv(judge::kit_harness("conv"), "kit-conv", "fp32")});
  // The same conv in labkit-network's own process: what the lab path costs, by difference.
  if (o.baseline_inprocess) fixed("baseline", "baseline (in-process)");
  if (o.cpu) fixed("cpu", "cpu-reference");
  const auto registry = read_registry();
  const std::string role = o.solution || o.solutions ? "solution" : o.tests ? "test" : "lab";
  auto label = [](const LabEntry& l) { return l.role == "lab" ? l.id : l.id + " (" + l.role + ")"; };
  auto lab_argv = [&harness_argv](const LabEntry& l) {
    std::string precision = "fp32";
    try {
      precision = to_string(load_lab_spec(l.lab_json).precision);
    } catch (const LabSpecError&) {
    }
    return harness_argv(l.exe, l.id, precision);
  };
  if (o.solutions || o.compare) {
    for (const LabEntry& l : registry) {
      if (l.role != "solution" || l.kind != "conv") continue;
      if (!l.unbuilt.empty()) {  // lab.json "requires_gpu" newer than one of gpu_arch's targets
        fmt::print(stderr, "labkit report: {} left out: no harness in this build: it {}\n", label(l), l.unbuilt);
        continue;
      }
      out.push_back({label(l), lab_argv(l), layer_timed(l), true});
    }
  }
  for (const std::string& id : o.labs) {
    auto it = std::find_if(registry.begin(), registry.end(), [&](const LabEntry& l) { return l.role == role && l.id == id; });
    if (it == registry.end()) {
      error = fmt::format("no {} named \"{}\" in this build (see `labkit list`)", role, id);
      return {};
    }
    if (it->kind != "conv") {
      error = fmt::format("{} is not a conv lab: the network has no place for it (only conv labs have milestone tables)", id);
      return {};
    }
    if (!it->unbuilt.empty()) {
      error = fmt::format("{} has no harness in this build: it {}", id, it->unbuilt);
      return {};
    }
    out.push_back({label(*it), lab_argv(*it), layer_timed(*it), true});
  }
  if (o.cudnn || o.compare) {
    if (LABKIT_HAVE_CUDNN) fixed("cudnn", "cudnn");
    else if (o.cudnn) {
      error = "cuDNN was not found when the kit was configured (meson option cudnn, or no libcudnn.so)";
      return {};
    }
  }
  // A lab's Op Time comes from the repeats, whose input the harness writes inside each timed call
  // (docs/grading.md, "Fresh data in every timed call"). With none, it would be the network's own
  // call, whose input the lab's prolog has already seen: a conv computed there would pass for the op.
  const bool has_lab = std::any_of(out.begin(), out.end(), [](const Subject& s) { return s.lab; });
  if (o.op_repeats < 1 && (has_lab || o.course)) {  // --course adds its reference solution below
    error = "--op-repeats 0: a lab's Op Time is the median of the repeats, whose input the kit writes inside each "
            "timed call; the network's own call cannot be trusted as Op Time (the lab's prolog has seen its input). "
            "Pass --op-repeats 1 or more";
    return {};
  }
  if (o.course && !out.empty()) {  // the reference runs beside what was asked for, first
    auto it = std::find_if(registry.begin(), registry.end(),
                           [&](const LabEntry& l) { return l.role == "solution" && l.id == o.course_reference; });
    if (it == registry.end() || it->kind != "conv") {
      error = fmt::format("--course-reference {}: {}", o.course_reference,
                          it == registry.end() ? "no instructor solution of that name in this build (a student copy has "
                                                 "none; `labkit list` shows the labs)"
                                               : "not a conv lab: the course compares conv implementations");
      return {};
    }
    if (!it->unbuilt.empty()) {
      error = fmt::format("--course-reference {}: no harness in this build: it {}", o.course_reference, it->unbuilt);
      return {};
    }
    if (std::none_of(out.begin(), out.end(), [&](const Subject& s) { return s.name == label(*it); }))
      out.insert(out.begin(), Subject{label(*it), lab_argv(*it), layer_timed(*it), true});
  }
  return out;
}

// --course on a saved report: keeps the batches asked for (10000 unless --batches) and checks that
// the reference is among its rows. Throws std::runtime_error naming the file and what it lacks.
void select_course(ms::Report& report, const ReportOptions& o) {
  const std::string ref = ms::solution_row(o.course_reference);
  std::string held, names;
  for (int b : report.batches) held += (held.empty() ? "" : ", ") + std::to_string(b);
  std::vector<std::size_t> keep;
  for (int b : o.batches) {
    auto it = std::find(report.batches.begin(), report.batches.end(), b);
    if (it == report.batches.end())
      throw std::runtime_error(fmt::format("{}: no runs at batch {} (it holds batch {}): pass --batches with one of those",
                                           o.from, b, held));
    keep.push_back(static_cast<std::size_t>(it - report.batches.begin()));
  }
  for (auto& row : report.runs) {
    std::vector<ms::Entry> kept;
    for (std::size_t k : keep) kept.push_back(row.at(k));
    row = std::move(kept);
    if (!row.empty()) names += (names.empty() ? "" : ", ") + row.front().name;
  }
  report.batches = o.batches;
  if (std::none_of(report.runs.begin(), report.runs.end(),
                   [&](const auto& row) { return !row.empty() && row.front().name == ref; }))
    throw std::runtime_error(fmt::format("{}: no run of {}, the course's reference (it holds: {}); --course-reference "
                                         "LAB names another lab whose instructor solution it holds",
                                         o.from, ref, names));
  report.course_reference = ref;
}

// The whole command line of one run.
std::vector<std::string> command_of(const Subject& s, int batch, const ReportOptions& o) {
  std::vector<std::string> argv = s.argv;
  argv.insert(argv.end(), {"--network", "--batch", std::to_string(batch), "--data", o.data, "--model", o.model,
                           "--op-repeats", std::to_string(o.op_repeats)});
  return argv;
}

// One run in a child: its JSON, or the reason it has none.
ms::Entry run_one(const Subject& s, int batch, const ReportOptions& o, int& exit_status) {
  ms::Entry e{s.name, batch, std::nullopt, "", s.layer_timed};
  const std::vector<std::string> argv = command_of(s, batch, o);
  subprocess::Options so;
  so.timeout = std::chrono::milliseconds(static_cast<long long>(o.timeout_s * 1000));
  so.cancel = &g_report_interrupted;
  // Modules load when the process starts, not inside the first timed call (CUDA loads lazily by
  // default, which would put a module load into Op Time 1).
  so.env.emplace_back("CUDA_MODULE_LOADING", "EAGER");
  const subprocess::Result p = subprocess::run(argv, so);
  exit_status = p.exit_code;
  try {
    const json j = json::parse(p.out);
    if (j.contains("error")) {
      e.error = j.at("error").get<std::string>();
      return e;
    }
    e.run = network::from_json(j);
    return e;
  } catch (const json::exception&) {
  }
  exit_status = exit_code::kFail;
  e.error = fmt::format("{} {} before it reported", s.name, p.describe());
  if (!p.err.empty()) e.error += ": " + p.err.substr(0, p.err.find('\n'));
  return e;
}

// model.json records the test set the weights were measured on: say when this one is another.
void warn_on_other_data(const ReportOptions& o, const std::vector<ms::Entry>& entries) {
  std::ifstream in(std::filesystem::path(o.model) / "model.json");
  if (!in) return;
  try {
    const std::string want = json::parse(in).value("test_checksum", "");
    for (const ms::Entry& e : entries) {
      if (e.run && !want.empty() && e.run->data_checksum != want) {
        fmt::print(stderr, "labkit report: note: the test set {} (checksum {}) is not the one the model was measured on "
                           "(model.json: {}): accuracies are not comparable with model.json's\n",
                   e.run->data_source, e.run->data_checksum, want);
        return;
      }
    }
  } catch (const json::exception&) {
    fmt::print(stderr, "labkit report: note: {}/model.json is not valid JSON\n", o.model);
  }
}

// Runs every subject at every batch; returns the exit status, and the report in `report`.
// --dry-run: prints each run's row label and command line instead (exit 0, nothing rendered).
int run_all(const ReportOptions& o, ms::Report& report) {
  std::string error;
  const std::vector<Subject> subjects = subjects_of(o, error);
  if (!error.empty()) {
    fmt::print(stderr, "labkit report: {}\n", error);
    return exit_code::kUsage;
  }
  if (subjects.empty()) {
    fmt::print(stderr, "labkit report: nothing to run: name a lab (--lab 03-tiling), or pass --solutions, "
                       "--baseline, --cpu, --compare or --from FILE\n");
    return exit_code::kUsage;
  }
  if (o.dry_run) {
    for (const Subject& s : subjects)
      for (int batch : o.batches) {
        std::string line = s.name + ":";
        for (const std::string& w : command_of(s, batch, o)) line += " " + shell_word(w, true);
        fmt::print("{}\n", line);
      }
    return kDryRun;
  }

  struct sigaction sa{};
  sa.sa_handler = on_report_interrupt;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGINT, &sa, nullptr);
  sigaction(SIGTERM, &sa, nullptr);

  // report.runs[s][k]: subject s at batches[k].
  report.batches = o.batches;
  report.compare = o.compare;
  report.runs.assign(subjects.size(), {});
  const std::size_t total_runs = subjects.size() * o.batches.size();
  std::size_t done = 0;
  bool any_failed = false, all_no_device = true;
  for (std::size_t s = 0; s < subjects.size(); ++s) {
    for (int batch : o.batches) {
      fmt::print(stderr, "labkit report: [{}/{}] {} at batch {} ...\n", ++done, total_runs, subjects[s].name, batch);
      int status = 0;
      ms::Entry e = run_one(subjects[s], batch, o, status);
      if (g_report_interrupted) {
        fmt::print(stderr, "labkit report: interrupted; nothing was written\n");
        return 130;
      }
      all_no_device &= status == exit_code::kNoDevice;
      any_failed |= status != exit_code::kPass && status != exit_code::kNoDevice;
      if (e.run) fmt::print(stderr, "labkit report:        {:.3f} + {:.3f} ms, {:.2f} s, accuracy {:.4f}\n",
                            e.run->conv[0].op_ms, e.run->conv[1].op_ms, e.run->total_s, e.run->accuracy);
      else fmt::print(stderr, "labkit report:        failed: {}\n", e.error);
      report.runs[s].push_back(std::move(e));
    }
  }
  if (all_no_device) {
    fmt::print(stderr, "labkit report: skipped: no usable CUDA device (the CPU reference, --cpu, runs without one)\n");
    return exit_code::kNoDevice;
  }
  std::vector<ms::Entry> flat;
  for (const auto& row : report.runs) flat.insert(flat.end(), row.begin(), row.end());
  warn_on_other_data(o, flat);
  return any_failed ? exit_code::kFail : exit_code::kPass;
}

bool write_text(const std::string& file, const std::string& text) {
  std::ofstream out(file);
  out << text;
  if (!out) fmt::print(stderr, "labkit report: cannot write {}\n", file);
  return static_cast<bool>(out);
}

int run_report(const ReportOptions& o) {
  const ms::Format format = ms::parse_format(o.format);
  ms::Report report;
  int status = exit_code::kPass;
  if (!o.from.empty()) {
    if (!o.labs.empty() || o.solution || o.solutions || o.tests || o.baseline || o.baseline_inprocess || o.cpu ||
        o.cudnn || o.dry_run) {
      fmt::print(stderr, "labkit report: --from draws a saved report: it runs nothing, so name no lab or implementation\n");
      return exit_code::kUsage;
    }
    report = ms::read_report(o.from);
    report.compare = o.compare;  // the saved runs, laid out as asked (either form holds every run)
    if (o.course) {
      try {
        select_course(report, o);
      } catch (const std::runtime_error& e) {
        fmt::print(stderr, "labkit report: {}\n", e.what());
        return exit_code::kUsage;
      }
    }
  } else {
    status = run_all(o, report);
    if (status == kDryRun) return exit_code::kPass;
    if (status != exit_code::kPass && status != exit_code::kFail) return status;
    if (o.course) report.course_reference = ms::solution_row(o.course_reference);
  }

  // The chart: with --compare; with --course only when --svg asks for it.
  if (o.course ? !o.svg.empty() && !report.runs.empty() : report.compare) {
    std::vector<ms::Entry> last;
    for (const auto& row : report.runs) last.push_back(row.back());
    const std::string svg_path = o.svg.empty() ? "report-compare.svg" : o.svg;
    if (!write_text(svg_path, ms::compare_svg(report.batches.back(), last, ms::device_of(last)))) return exit_code::kFail;
    fmt::print(stderr, "labkit report: chart written to {}\n", svg_path);
  }
  const std::string text = ms::render(report, format);
  fmt::print("{}", text);
  if (!o.output.empty() && !write_text(o.output, text)) return exit_code::kFail;
  if (!o.html.empty()) {
    html::write_page(o.html, pages::report_page(report, o.from));
    fmt::print(stderr, "labkit report: page written to {}\n", o.html);
  }
  return status;
}

}  // namespace

void add_report(CLI::App& app, int& status) {
  auto o = std::make_shared<ReportOptions>();
  auto* cmd = app.add_subcommand("report", "Milestone tables: Op Time 1 and 2, Total Execution Time and Accuracy of "
                                           "the network with a lab's conv, for batch 100, 1000 and 10000");
  cmd->add_option("--lab", o->labs, "a conv lab, e.g. 06-fusion (yours, from labs/; repeatable)");
  cmd->add_flag("--solution", o->solution, "use the instructor solution of the --lab labs");
  cmd->add_flag("--solutions", o->solutions, "every conv solution");
  cmd->add_flag("--tests", o->tests, "the --lab names are the grader's test labs (tests/labs)");
  cmd->add_flag("--baseline", o->baseline, "the baseline conv, in the kit's own harness: the same path as a lab's");
  cmd->add_flag("--baseline-inprocess", o->baseline_inprocess,
                "also the baseline conv in the network program's own process (row \"baseline (in-process)\"): "
                "the difference is what the lab path costs");
  cmd->add_flag("--dry-run", o->dry_run, "print each run's row and command line instead of running it");
  cmd->add_flag("--cpu", o->cpu, "the CPU reference conv (no GPU needed; slow at batch 10000)");
  cmd->add_flag("--cudnn", o->cudnn, "cuDNN's conv");
  cmd->add_flag("--compare", o->compare, "one table per batch across baseline, every conv solution and cuDNN, and an SVG chart");
  auto* batches = cmd->add_option("--batches", o->batches, "batch sizes (default 100,1000,10000; with --course 10000)")
                      ->delimiter(',')->check(CLI::Range(1, 1000000));
  cmd->add_flag("--course", o->course, "the course's table instead: conv1 + conv2 Op Time of each implementation "
                                       "against the --course-reference solution, at batch 10000");
  cmd->add_option("--course-reference", o->course_reference, "the lab whose instructor solution --course compares "
                                                             "against")->capture_default_str();
  cmd->add_option("--format", o->format, "md, csv, tex or json")->check(CLI::IsMember({"md", "csv", "tex", "json"}));
  cmd->add_option("--output", o->output, "also write the tables to this file");
  cmd->add_option("--svg", o->svg, "where --compare writes its chart (default report-compare.svg; with --course, "
                                   "a chart only when this is given)");
  cmd->add_option("--html", o->html, "also write the report as one self-contained web page: tables, chart, GPU, method");
  cmd->add_option("--from", o->from, "draw a report saved with --format json instead of running anything (no GPU needed)")
      ->check(CLI::ExistingFile);
  cmd->add_option("--data", o->data, "test set folder (IDX files, grader/network/dataset.h)")->capture_default_str();
  cmd->add_option("--model", o->model, "model folder (six .npy files)")->capture_default_str();
  cmd->add_option("--op-repeats", o->op_repeats, "timed calls per layer after the program's own, for the Op Time median (a lab: at least 1, each on an input written inside the call)")
      ->check(CLI::Range(0, 1000))->capture_default_str();
  cmd->add_option("--timeout", o->timeout_s, "seconds per run before it is stopped")->check(CLI::Range(2.0, 86400.0));
  cmd->callback([o, batches, &status] {
    o->batches_given = batches->count() > 0;
    if (o->course && !o->batches_given) o->batches = {10000};
    try {
      status = run_report(*o);
    } catch (const std::exception& e) {
      fmt::print(stderr, "labkit report: {}\n", e.what());
      status = exit_code::kKitError;
    }
  });
}

}  // namespace labkit::cli
