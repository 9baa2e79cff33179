// `labkit baseline` — the baseline conv and map kernels on every fixture and on the network's two
// conv layers at full batch: each output checked against the double-precision reference, each Op
// Time measured (median of samples, L2 flushed before each). The first thing to run on a new
// machine: it proves the toolchain, the driver, the fixtures and the timing all work.
#include <cuda_runtime.h>
#include <fmt/core.h>

#include <chrono>
#include <filesystem>
#include <random>
#include <string>
#include <vector>

#include "commands.h"
#include "grader/judge/check.h"
#include "grader/harness/conv_run.h"
#include "labkit/cuda_check.h"
#include "grader/judge/device.h"
#include "grader/core/device_buffer.h"
#include "grader/core/event_timer.h"
#include "grader/core/exit_codes.h"
#include "grader/judge/fixtures.h"
#include "grader/judge/gpu_arch.h"
#include "grader/core/random.h"
#include "grader/judge/stats.h"
#include "labkit_config.h"
#include "reference/baseline.h"
#include "reference/conv_reference.h"

namespace labkit::cli {
namespace {

namespace fs = std::filesystem;

struct Options {
  std::vector<std::string> manifests;
  std::vector<int> batches{1000, 10000};
  int samples = 15;
  std::uint64_t seed = 0;
};

struct Row {
  std::string name, shape;
  check::Result cmp;
  double op_ms = 0;
  std::string note;
};

void print_row(const Row& r) {
  std::string verdict = r.cmp.passed() && r.note.empty()
                            ? "ok"
                            : fmt::format("FAIL ({}: {} bad)", check::to_string(r.cmp.outcome), r.cmp.bad);
  if (!r.note.empty()) verdict += " " + r.note;
  fmt::print("{:<22} {:<32} {:>9.2f} {:>12.4f}  {}\n", r.name, r.shape, r.cmp.worst, r.op_ms, verdict);
}

Row run_conv_case(const std::string& name, const ConvShape& shape, std::span<const float> input,
                  std::span<const float> mask, std::span<const double> expected, int samples,
                  L2Flush& flush) {
  Row row{name, to_string(shape), {}, 0, ""};
  ConvRunResult run = run_conv_checked(baseline::conv_ops, shape, input, mask);
  row.cmp = check::compare(run.output, expected, reference::conv_error_scale_gpu(shape, input, mask),
                           check::conv_tolerance(shape, Precision::fp32, check::max_abs(input), check::max_abs(mask)));
  if (!run.input_unchanged || !run.mask_unchanged) row.note = "input or mask modified";
  row.op_ms = stats::median(time_conv_forward(baseline::conv_ops, shape, input, mask, 3, samples, flush));
  return row;
}

Row run_map_case(const fixtures::MapCase& c, int samples) {
  Row row{c.info.name, fmt::format("{} x {}, {} iterations", c.dimx, c.dimy, c.niterations), {}, 0, ""};
  DeviceBuffer<float> data(c.input.size());
  // The update is in place: every sample starts again from the fixture's input, and the first
  // (untimed) call's result is the one checked.
  data.upload(c.input);
  baseline::map_forward_gpu(data.get(), c.dimx, c.dimy, c.niterations);
  const std::vector<float> out = data.download();
  const std::vector<double> ms = time_samples(
      0, samples, [&] { data.upload(c.input); },
      [&] { baseline::map_forward_gpu(data.get(), c.dimx, c.dimy, c.niterations); });
  row.cmp = check::compare(out, c.expected, c.expected, check::map_tolerance());
  row.op_ms = stats::median(ms);
  return row;
}

// The network's layers at a full batch: random inputs, checked against the GPU fp64 reference.
Row run_network_layer(const char* name, ConvShape shape, std::uint64_t seed, int samples,
                      L2Flush& flush) {
  std::vector<float> input(shape.input_size()), mask(shape.mask_size());
  fill_uniform(input, 0.f, shape.C == 1 ? 255.f : 4.f, seed_for(seed, std::string(name) + "/input"));
  fill_uniform(mask, -0.5f, 0.5f, seed_for(seed, std::string(name) + "/mask"));
  // The CPU reference would take minutes at batch 10000: the GPU fp64 one computes the same sums.
  const std::vector<double> expected = reference::conv_reference_gpu(shape, input, mask);
  return run_conv_case(fmt::format("{} b{}", name, shape.B), shape, input, mask, expected, samples, flush);
}

int run(const Options& opt) {
  std::vector<std::string> manifests = opt.manifests;
  if (manifests.empty()) {
    manifests.push_back(LABKIT_FIXTURES_SMALL);
    if (fs::exists(LABKIT_FIXTURES_LARGE)) manifests.push_back(LABKIT_FIXTURES_LARGE);
    else fmt::print("(large fixtures not built yet: {} — run meson compile first)\n", LABKIT_FIXTURES_LARGE);
  }
  // Fixtures are read before the device is looked at, so a broken file is reported as such on
  // any machine, GPU or not.
  std::vector<fixtures::FixtureSet> sets;
  for (const auto& m : manifests) sets.push_back(fixtures::load(m));

  if (!cuda_device_available()) {
    fmt::print(stderr, "labkit baseline: no usable CUDA device (no driver or no GPU): nothing to run\n");
    return exit_code::kNoDevice;
  }
  const std::uint64_t seed = opt.seed ? opt.seed : std::random_device{}();
  const DeviceInfo device = device_info();
  // Before the first kernel: a build without code for this GPU is one line, not "no kernel image".
  if (const std::string why = build_mismatch(LABKIT_CUDA_ARCHS, device.name, {device.cc_major, device.cc_minor});
      !why.empty()) {
    fmt::print(stderr, "labkit baseline: {}\n", why);
    return exit_code::kKitError;
  }

  fmt::print("labkit baseline on {}\n", device.summary());
  fmt::print("checks: the grader's rule (docs/grading.md); worst = largest error as a fraction of "
             "the allowed one (<= 1 passes); op time: median of {} samples, L2 flushed\n\n", opt.samples);
  fmt::print("{:<22} {:<32} {:>9} {:>12}  {}\n", "case", "shape", "worst", "op time ms", "check");

  L2Flush flush;
  int failures = 0;
  auto report = [&](const Row& r) {
    print_row(r);
    failures += r.cmp.passed() && r.note.empty() ? 0 : 1;
  };
  for (const auto& set : sets) {
    for (const auto& c : set.conv)
      report(run_conv_case(c.info.name, c.shape, c.input, c.mask, c.expected, opt.samples, flush));
    for (const auto& c : set.map) report(run_map_case(c, opt.samples));
  }
  if (!opt.batches.empty())
    fmt::print("\nnetwork layers, random inputs (seed {}), checked against the GPU fp64 reference:\n", seed);
  for (int batch : opt.batches) {
    report(run_network_layer("conv1", {batch, 4, 1, 86, 86, 7}, seed, opt.samples, flush));
    report(run_network_layer("conv2", {batch, 16, 4, 40, 40, 7}, seed, opt.samples, flush));
  }
  fmt::print("\n{}\n", failures ? fmt::format("{} case(s) FAILED", failures) : std::string("all cases ok"));
  return failures ? exit_code::kFail : exit_code::kPass;
}

}  // namespace

void add_baseline(CLI::App& app, int& status) {
  auto opt = std::make_shared<Options>();
  CLI::App* cmd = app.add_subcommand(
      "baseline", "Run the baseline kernels on the fixtures and the network layers: check and time");
  cmd->add_option("--fixtures", opt->manifests, "fixture manifest(s) (default: the committed and the built ones)");
  cmd->add_option("--batch", opt->batches, "network batch sizes to time (default: 1000 10000; 0 for none)");
  cmd->add_option("--samples", opt->samples, "timed samples per case")->check(CLI::Range(1, 10000));
  cmd->add_option("--seed", opt->seed, "seed of the random network inputs (default: fresh, printed)");
  cmd->callback([opt, &status] {
    std::erase(opt->batches, 0);
    try {
      status = run(*opt);
    } catch (const fixtures::FixtureError& e) {  // a broken or missing input file
      fmt::print(stderr, "labkit baseline: {}\n", e.what());
      status = exit_code::kFail;
    } catch (const std::exception& e) {  // the baseline itself failed: the kit or the machine
      fmt::print(stderr, "labkit baseline: {}\n", e.what());
      status = exit_code::kKitError;
    }
  });
}

}  // namespace labkit::cli
