// `labkit sweep LAB --param NAME=V1,V2,...` — one lab's kernel.cu built with each value of a
// compile-time constant it declares (`#ifndef NAME`), each build graded by the judge exactly as
// `labkit grade` grades the registered one (same cases, same timed shapes, one seed for all), then
// a table (md, csv or json) and an SVG chart of time against the value (grader/tools/sweep.h).
//
// The builds replay ninja's own commands for the lab's harness with -DNAME=VALUE added and their
// outputs in BUILD/sweep/ (grader/judge/variant_build.h): the registered harness and meson's
// configuration are left alone. The builds run first (in parallel), the grading after, one value
// at a time, so no compiler competes with the timed calls for the CPU. The PTX evidence is the
// registered one (the default value's): a variant's PTX is not built.
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <fstream>
#include <memory>
#include <random>
#include <thread>

#include "commands.h"
#include "lab_process.h"
#include "labkit/cuda_check.h"
#include "grader/judge/device.h"
#include "grader/core/exit_codes.h"
#include "grader/judge/judge.h"
#include "grader/judge/lab_spec.h"
#include "grader/core/random.h"
#include "grader/tools/sweep.h"
#include "grader/judge/variant_build.h"
#include "labkit_config.h"

namespace labkit::cli {
namespace {

namespace fs = std::filesystem;

struct SweepOptions {
  std::string lab, param, format = "md", svg, sandbox, seed;
  bool solution = false, tests = false, build_only = false;
  int jobs = 0;
  judge::Options judge;
};

// What a student needs to see of a failed build: the compiler's own lines, paths from the kit's root.
std::string build_log(const variant::Built& b) {
  return fmt::format("the {} failed:\n", b.step) + variant::readable_log(b.log, LABKIT_SOURCE_ROOT, 25);
}

GradeResult grade_variant(const judge::LabUnderTest& lab, const judge::Options& o) {
  try {
    return judge::judge_lab(lab, o);
  } catch (const std::exception& e) {
    GradeResult r;
    r.id = lab.id;
    r.role = lab.role;
    r.verdict = verdict::kKitError;
    r.message = fmt::format("The kit failed while grading {}: {}", lab.id, e.what());
    return r;
  }
}

int run_sweep(SweepOptions& o) {
  const sweep::Format format = sweep::parse_format(o.format);
  sweep::Param param;
  try {
    param = sweep::parse_param(o.param);
  } catch (const sweep::ParamError& e) {
    fmt::print(stderr, "labkit sweep: {}\n", e.what());
    return exit_code::kUsage;
  }
  const std::string role = o.solution ? "solution" : o.tests ? "test" : "lab";
  const auto entry = find_lab("sweep", role, o.lab);
  if (!entry) return exit_code::kUsage;
  const judge::LabUnderTest lab = lab_under_test(*entry);
  try {
    sweep::require_declared(read_text(lab.source_path), lab.source, param.name);
  } catch (const sweep::ParamError& e) {
    fmt::print(stderr, "labkit sweep: {}\n", e.what());
    return exit_code::kUsage;
  }

  judge::Options& jo = o.judge;
  sweep::Sweep result{lab.id, lab.role, param.name, "op", "", 0, jo.batch, {}};
  if (!o.build_only) {
    if (!cuda_device_available()) {
      fmt::print(stderr, "labkit sweep: skipped: no usable CUDA device (each build is graded and timed on a GPU; "
                         "--build-only builds them without one)\n");
      return exit_code::kNoDevice;
    }
    choose_sandbox(o.sandbox, jo);  // throws with what to do when bubblewrap cannot run
    result.device = device_info().name;
    const LabSpec spec = load_lab_spec(lab.lab_json, lab.id);
    result.timed_region = to_string(spec.timed);
    if (result.batch <= 0) result.batch = spec.batch;
    jo.seed_given = !o.seed.empty();
    try {
      // One seed for every value: each build meets the same random cases.
      jo.seed = jo.seed_given ? std::stoull(o.seed) : fresh_seed();
    } catch (const std::exception&) {
      fmt::print(stderr, "labkit sweep: --seed {}: not a number (copy the seed a table printed)\n", o.seed);
      return exit_code::kUsage;
    }
    result.seed = jo.seed;
  }

  // Build every value first.
  const fs::path build_root = LABKIT_BUILD_ROOT;
  const fs::path exe = entry->exe;
  variant::Request req;
  req.build_dir = build_root;
  req.target = exe.lexically_relative(build_root).string();
  req.kernel = lab.source_path;
  // Its own folder per run: two sweeps of one lab at once must not build over each other.
  req.out_dir = build_root / "sweep" / fmt::format("{}-{}", exe.filename().string(), ::getpid());
  req.name = param.name;
  req.values = param.values;
  const fs::path ninja = find_tool("ninja", "");
  if (ninja.empty()) {
    fmt::print(stderr, "labkit sweep: ninja not found on PATH: the builds replay its commands (Debian: ninja-build)\n");
    return exit_code::kKitError;
  }
  req.ninja = ninja.string();
  req.jobs = o.jobs > 0 ? o.jobs : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  req.progress = [](const std::string& line) { fmt::print(stderr, "labkit sweep: {}\n", line); };
  fmt::print(stderr, "labkit sweep: {} with {} = {} (builds in {})\n", lab.source, param.name,
             fmt::format("{}", fmt::join(param.values, ", ")), req.out_dir.string());
  std::vector<variant::Built> built;
  try {
    built = variant::build_variants(req);
  } catch (const std::exception& e) {
    fmt::print(stderr, "labkit sweep: cannot build the variants: {}\n", e.what());
    return exit_code::kKitError;
  }
  for (const variant::Built& b : built)
    if (!b.ok) fmt::print(stderr, "\nlabkit sweep: {}={}: {}\n", param.name, b.value, build_log(b));

  if (o.build_only) {
    bool all = true;
    for (const variant::Built& b : built) {
      fmt::print("{}={}: {}\n", param.name, b.value, b.ok ? b.exe.string() : "build failed (" + b.step + ")");
      all &= b.ok;
    }
    return all ? exit_code::kPass : exit_code::kFail;
  }

  // Then grade them one after another, in the order given, as `labkit grade` would.
  for (const variant::Built& b : built) {
    sweep::Row row{b.value, b.ok, b.ok ? "" : build_log(b), {}};
    if (b.ok) {
      fmt::print(stderr, "labkit sweep: grading {} with {}={} ...\n", lab.id, param.name, b.value);
      judge::LabUnderTest variant = lab;
      variant.harness = b.exe.string();
      row.result = grade_variant(variant, jo);
      fmt::print(stderr, "labkit sweep: {}={}: {}\n", param.name, b.value, row.result.verdict);
    }
    result.rows.push_back(std::move(row));
  }
  std::error_code ignored;
  fs::remove_all(req.out_dir, ignored);  // the variants are graded; --build-only keeps them

  fmt::print("{}", sweep::render(result, format));
  const std::string svg_path = o.svg.empty() ? fmt::format("sweep-{}-{}.svg", lab.id, param.name) : o.svg;
  std::ofstream out(svg_path);
  out << sweep::svg(result);
  if (!out) {
    fmt::print(stderr, "labkit sweep: cannot write {}\n", svg_path);
    return exit_code::kFail;
  }
  fmt::print(stderr, "labkit sweep: chart written to {}\n", svg_path);

  bool all_passed = true;
  for (const sweep::Row& r : result.rows) {
    if (r.built && r.result.verdict == verdict::kKitError) return exit_code::kKitError;
    all_passed &= sweep::row_verdict(r) == verdict::kPassed;
  }
  return all_passed ? exit_code::kPass : exit_code::kFail;
}

}  // namespace

void add_sweep(CLI::App& app, int& status) {
  auto o = std::make_shared<SweepOptions>();
  o->judge.fixtures = LABKIT_FIXTURES_SMALL;
  o->judge.data_dir = LABKIT_DATASET_DIR;
  o->judge.model_dir = LABKIT_MODEL_DIR;
  o->judge.timeout_s = 600;
  auto* cmd = app.add_subcommand(
      "sweep", "Build a lab's kernel.cu with each value of a constant it declares (#ifndef NAME), grade and time each");
  cmd->add_option("lab", o->lab, "lab id, e.g. 03-tiling")->required();
  cmd->add_option("--param", o->param, "NAME=V1,V2,...: the macro and its values, e.g. TILE=8,16,32")->required();
  cmd->add_flag("--solution,--solutions", o->solution, "sweep the instructor solution instead of labs/");
  cmd->add_flag("--tests", o->tests, "sweep one of the grader's own test labs (tests/labs)");
  cmd->add_option("--format", o->format, "table format: md, csv or json")->check(CLI::IsMember({"md", "csv", "json"}));
  cmd->add_option("--svg", o->svg, "where the chart goes (default sweep-LAB-PARAM.svg here)");
  cmd->add_flag("--build-only", o->build_only, "build the variants, print where they are, grade nothing (no GPU needed)");
  cmd->add_option("--jobs", o->jobs, "builds at once (default: one per CPU)")->check(CLI::Range(1, 256));
  cmd->add_option("--seed", o->seed, "replay a sweep: the seed its table printed");
  cmd->add_option("--batch", o->judge.batch, "batch size of the grading shapes")->check(CLI::Range(1, 10000));
  cmd->add_option("--random-cases", o->judge.random_cases, "fresh random cases per value")->check(CLI::Range(0, 100));
  cmd->add_option("--max-time", o->judge.stopping.max_seconds, "time cap per timed shape and value, seconds")
      ->check(CLI::Range(0.1, 600.0));
  cmd->add_option("--timeout", o->judge.timeout_s, "seconds per value before its grading is stopped")->check(CLI::Range(2.0, 86400.0));
  cmd->add_option("--sandbox", o->sandbox, "how the lab's code is confined: bubblewrap (default) or none")
      ->check(CLI::IsMember({"bubblewrap", "bwrap", "none"}));
  cmd->callback([o, &status] {
    try {
      status = run_sweep(*o);
    } catch (const std::exception& e) {
      fmt::print(stderr, "labkit sweep: {}\n", e.what());
      status = exit_code::kKitError;
    }
  });
}

}  // namespace labkit::cli
