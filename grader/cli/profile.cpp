// `labkit profile LAB` — Nsight Compute (ncu) on the lab's op and the baseline's for the grading
// shapes: one child per side and shape, each running exactly one op between cudaProfilerStart and
// cudaProfilerStop (grader/runner: --profile), and a short table per shape (grader/tools/ncu.h).
#include <fmt/core.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <memory>

#include "commands.h"
#include "lab_process.h"
#include "grader/judge/lab_spec.h"
#include "labkit/cuda_check.h"
#include "grader/judge/device.h"
#include "grader/core/exit_codes.h"
#include "grader/tools/ncu.h"
#include "labkit_config.h"

namespace labkit::cli {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

struct ProfileOptions {
  std::string lab;
  bool solution = false, tests = false;
  int batch = 1000;
  std::string ncu;
  double timeout_s = 600;
  bool keep = false;
};

// One side's op on one shape under ncu; when !ok, the reason was printed and `exit` is the status.
struct SideRun {
  bool ok = false;
  int exit = exit_code::kFail;
  json what;                        // the child's {"side", "case", "shape", "shapes"}
  std::vector<ncu::Kernel> kernels;
};

SideRun profile_side(const LabEntry& lab, const ProfileOptions& o, const fs::path& ncu_path, const fs::path& dir,
                     const std::string& side, int shape) {
  const fs::path log = dir / fmt::format("{}-{}.csv", side, shape);
  std::vector<std::string> argv{
      ncu_path.string(), "--profile-from-start", "off", "--clock-control", "none", "--csv", "--page", "raw",
      "--print-units", "base", "--metrics", ncu::metric_list(), "--log-file", log.string(),
      lab.exe, "--profile", side, "--profile-case", std::to_string(shape), "--batch", std::to_string(o.batch)};
  if (lab.kind == "map") {
    const MapWorkload m = load_lab_spec(lab.lab_json).map;
    argv.insert(argv.end(), {"--dims", fmt::format("{},{},{}", m.dimx, m.dimy, m.niterations)});
  }
  subprocess::Options so;
  so.timeout = std::chrono::milliseconds(static_cast<long long>(o.timeout_s * 1000));
  const subprocess::Result p = subprocess::run(argv, so);
  SideRun run;
  const std::string text = read_text(log);
  const ncu::Complaint c = ncu::problem_of(text + "\n" + p.out + "\n" + p.err);
  if (!p.started) {
    fmt::print(stderr, "labkit profile: cannot start {}: {}\n", ncu_path.string(), p.error);
    run.exit = exit_code::kKitError;
    return run;
  }
  if (c.problem == ncu::Problem::no_permission) {
    fmt::print(stderr,
               "labkit profile: skipped: Nsight Compute may not read this GPU's performance counters here:\n  {}\n"
               "The driver lets only administrators read them. Run as root, or ask the machine's administrator to set\n"
               "the NVIDIA driver option NVreg_RestrictProfilingToAdminUsers=0 (see ERR_NVGPUCTRPERM in NVIDIA's docs).\n",
               c.text);
    run.exit = exit_code::kNoDevice;
    return run;
  }
  if (p.timed_out || p.signal != 0 || (p.exit_code != 0 && c.problem != ncu::Problem::no_kernels)) {
    const std::string why = c.problem == ncu::Problem::other ? c.text : tail(p.err.empty() ? p.out : p.err, 8);
    fmt::print(stderr, "labkit profile: the {} op of {} under ncu {}:\n{}\n", side, lab.id, p.describe(), why);
    run.exit = c.problem == ncu::Problem::other ? exit_code::kNoDevice : exit_code::kFail;
    if (c.problem == ncu::Problem::other)
      fmt::print(stderr, "Nsight Compute could not profile on this machine (the line above is its own message).\n");
    return run;
  }
  try {
    run.what = json::parse(p.out.substr(p.out.rfind('{')));
  } catch (const std::exception&) {
    fmt::print(stderr, "labkit profile: the {} run printed no description of its shape:\n{}\n", side, tail(p.out, 4));
    run.exit = exit_code::kKitError;
    return run;
  }
  run.kernels = ncu::parse_csv(text);
  if (run.kernels.empty() && side == "baseline") {
    fmt::print(stderr, "labkit profile: ncu profiled no kernel of the baseline (log {}):\n{}\n", log.string(), tail(text, 6));
    run.exit = exit_code::kKitError;
    return run;
  }
  run.ok = true;
  run.exit = exit_code::kPass;
  return run;
}

int run_profile(const ProfileOptions& o) {
  const std::string role = o.solution ? "solution" : o.tests ? "test" : "lab";
  const std::optional<LabEntry> lab = find_lab("profile", role, o.lab);
  if (!lab) return exit_code::kUsage;
  if (!cuda_device_available()) {
    fmt::print(stderr, "labkit profile: skipped: no usable CUDA device (Nsight Compute profiles kernels on a GPU)\n");
    return exit_code::kNoDevice;
  }
  const fs::path ncu_path = find_tool("ncu", o.ncu, ncu_install_dirs());
  if (ncu_path.empty()) {
    fmt::print(stderr, "labkit profile: skipped: {}: install Nsight Compute (it ships with the CUDA toolkit) "
                       "or name it with --ncu PATH\n",
               o.ncu.empty() ? "ncu not found on PATH, in " LABKIT_CUDA_ROOT "/bin or /opt/nvidia/nsight-compute"
                             : o.ncu + " is not an executable");
    return exit_code::kNoDevice;
  }
  ScratchDir scratch("profile");
  const fs::path& dir = scratch.path();
  const DeviceInfo d = device_info();
  fmt::print("labkit profile: {} ({}) against the baseline, {}\n", lab->id, lab->role,
             lab->kind == "conv" ? fmt::format("grading shapes at batch {}", o.batch) : std::string("the timed workload"));
  fmt::print("GPU: {}; {}; clocks as the grader sees them (--clock-control none), caches flushed before each kernel.\n"
             "Kernel times here are single runs under the profiler: the grade's speedup is `labkit grade`'s Op Time.\n\n",
             d.name, ncu_path.string());
  int status = exit_code::kPass;
  for (int shape = 0, shapes = 1; shape < shapes; ++shape) {
    fmt::print(stderr, "profiling shape {} (baseline, then {}) ...\n", shape + 1, lab->id);
    const SideRun base = profile_side(*lab, o, ncu_path, dir, "baseline", shape);
    if (!base.ok) {
      status = base.exit;
      break;
    }
    shapes = base.what.value("shapes", 1);
    const SideRun mine = profile_side(*lab, o, ncu_path, dir, "lab", shape);
    if (!mine.ok) {
      status = mine.exit;
      break;
    }
    const ncu::ShapeProfile sp{base.what.value("case", ""), base.what.value("shape", ""), base.kernels, mine.kernels};
    fmt::print("{}\n", ncu::format_shape(sp));
  }
  if (o.keep) {
    scratch.keep();
    fmt::print("ncu's CSV files are in {}\n", dir.string());
  }
  if (status == exit_code::kPass)
    fmt::print("For the full picture (source lines, stall reasons): ncu --profile-from-start off --set full "
               "--import-source yes -o report {} --profile lab --profile-case 0, then open report.ncu-rep in "
               "Nsight Compute.\n", lab->exe);
  return status;
}

}  // namespace

void add_profile(CLI::App& app, int& status) {
  auto o = std::make_shared<ProfileOptions>();
  auto* cmd = app.add_subcommand("profile", "Nsight Compute summary of a lab's kernels next to the baseline's");
  cmd->add_option("lab", o->lab, "lab id, e.g. 03-tiling")->required();
  cmd->add_flag("--solution", o->solution, "profile the instructor solution");
  cmd->add_flag("--tests", o->tests, "profile one of the grader's own test labs");
  cmd->add_option("--batch", o->batch, "batch size of the grading shapes")->check(CLI::Range(1, 10000));
  cmd->add_option("--ncu", o->ncu, "the ncu program to use");
  cmd->add_option("--timeout", o->timeout_s, "seconds per ncu run")->check(CLI::Range(5.0, 86400.0));
  cmd->add_flag("--keep", o->keep, "keep ncu's raw CSV output and say where");
  cmd->callback([o, &status] {
    try {
      status = run_profile(*o);
    } catch (const std::exception& e) {
      fmt::print(stderr, "labkit profile: {}\n", e.what());
      status = exit_code::kKitError;
    }
  });
}

}  // namespace labkit::cli
