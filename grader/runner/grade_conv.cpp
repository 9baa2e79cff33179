// Grading a conv lab: correctness on fixtures, fresh random cases and the grading shapes, then
// Op or Layer Time against the baseline, then the run-time (host) evidence.
#include <cuda_profiler_api.h>
#include <fmt/core.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <string>
#include <vector>

#include "guard.h"
#include "labkit/activity.h"
#include "labkit/check.h"
#include "labkit/clocks.h"
#include "labkit/conv_run.h"
#include "labkit/cuda_check.h"
#include "labkit/fixtures.h"
#include "labkit/phase.h"
#include "labkit/random.h"
#include "network_check.h"
#include "reference/baseline.h"
#include "reference/conv_reference.h"
#include "runner.h"

namespace labkit::runner {
namespace {

struct ConvCase {
  std::string name, origin;
  ConvShape shape{};
  std::vector<float> input, mask;
};

// Expected output and the per-element error scale sum|x*w| (labkit/check.h), both from the GPU
// fp64 reference (bit-identical to the CPU one, tests/gpu/test_reference_gpu.cu).
struct Reference {
  std::vector<double> expected, bound;
};

Reference reference(const ConvCase& c) {
  set_phase("the kit's reference computation");
  return {reference::conv_reference_gpu(c.shape, c.input, c.mask),
          reference::conv_error_scale_gpu(c.shape, c.input, c.mask)};
}

ConvCase random_case(const std::string& name, const std::string& origin, const ConvShape& shape,
                     float input_lo, float input_hi, std::uint64_t seed) {
  ConvCase c{name, origin, shape, std::vector<float>(shape.input_size()),
             std::vector<float>(shape.mask_size())};
  fill_uniform(c.input, input_lo, input_hi, seed_for(seed, name + "/input"));
  fill_uniform(c.mask, -0.5f, 0.5f, seed_for(seed, name + "/mask"));
  return c;
}

// Fresh shapes the lab cannot have been tuned for: every K the course uses, C and M anywhere in
// their ranges (M not a multiple of 16), H != W, and signed inputs (cancellation).
std::vector<ConvCase> random_cases(std::uint64_t seed, int count) {
  SplitMix64 rng(seed_for(seed, "random shapes"));
  auto pick = [&](int lo, int hi) { return lo + int(rng.next() % std::uint64_t(hi - lo + 1)); };
  constexpr int kKs[] = {1, 3, 5, 7};
  std::vector<ConvCase> cases;
  for (int i = 0; i < count; ++i) {
    const int K = kKs[rng.next() % 4];
    const ConvShape s{pick(1, 4), pick(1, 24), pick(1, 4), pick(K, 72), pick(K, 72), K};
    cases.push_back(random_case(fmt::format("random-{}", i + 1), "random", s, -1.0f, 1.0f, seed));
  }
  return cases;
}

// The network's two conv layers (design.md section 7) at the grading batch.
std::vector<ConvCase> grading_cases(std::uint64_t seed, int batch) {
  return {random_case(fmt::format("conv1 B={}", batch), "grading", {batch, 4, 1, 86, 86, 7}, 0.0f, 255.0f, seed),
          random_case(fmt::format("conv2 B={}", batch), "grading", {batch, 16, 4, 40, 40, 7}, 0.0f, 4.0f, seed)};
}

CaseReport check_case(const LabUnderTest& lab, const LabSpec& spec, const ConvCase& c,
                      const Reference& ref) {
  CaseReport rep{c.name, c.origin, to_string(c.shape), false, "", "", 0};
  set_phase_case(c.name.c_str());
  const ConvRunResult run = run_conv_checked(
      *lab.conv, c.shape, c.input, c.mask,
      spec.timed == TimedRegion::layer ? HostMemory::pinned : HostMemory::pageable);
  const check::Result cmp = check::compare(run.output, ref.expected, ref.bound,
                                           check::conv_tolerance(c.shape, spec.precision));
  rep.worst = cmp.worst;
  if (!run.input_on_device) {
    rep.outcome = "input not copied";
    rep.detail = "after conv_forward_gpu_prolog the device input or mask does not hold the host's: the "
                 "prolog must copy both to *device_input and *device_mask (asynchronous copies on "
                 "streams count: the grader waits for the device before it looks)";
    if (!cmp.passed()) rep.detail += fmt::format("\n{}", cmp.describe(check::conv_layout(c.shape)));
    return rep;
  }
  std::vector<std::string> modified;
  if (!run.input_unchanged) modified.push_back("the device input");
  if (!run.mask_unchanged) modified.push_back("the device mask");
  if (!run.host_input_unchanged) modified.push_back("the host input");
  if (!run.host_mask_unchanged) modified.push_back("the host mask");
  if (!modified.empty()) {
    const std::string what = fmt::format("{}", fmt::join(modified, " and "));
    rep.outcome = "input modified";
    rep.detail = fmt::format("{} changed during the call; conv_forward_gpu must only read its "
                             "inputs (the next layer or the next call would see changed data)",
                             what);
    if (!cmp.passed()) rep.detail += fmt::format("\n{}", cmp.describe(check::conv_layout(c.shape)));
    return rep;
  }
  rep.passed = cmp.passed();
  rep.outcome = check::to_string(cmp.outcome);
  rep.detail = cmp.describe(check::conv_layout(c.shape));
  return rep;
}

// One call of the lab's whole layer (prolog, op, epilog) on pinned host arrays, for host evidence.
struct LayerCall {
  const ConvOps& ops;
  ConvShape shape;
  HostArray in, mask, out;
  LayerCall(const ConvOps& o, const ConvCase& c, HostMemory memory)
      : ops(o), shape(c.shape), in(c.input.size(), memory), mask(c.mask.size(), memory),
        out(c.shape.output_size(), memory) {
    std::copy(c.input.begin(), c.input.end(), in.data());
    std::copy(c.mask.begin(), c.mask.end(), mask.data());
  }
  void operator()() {
    float *d_out = nullptr, *d_in = nullptr, *d_mask = nullptr;
    ops.prolog(out.data(), in.data(), mask.data(), &d_out, &d_in, &d_mask, shape);
    ops.forward(d_out, d_in, d_mask, shape);
    ops.epilog(out.data(), d_out, d_in, d_mask, shape);
  }
};

// The device buffers of one side, from its prolog, for Op Time.
struct OpCall {
  const ConvOps& ops;
  ConvShape shape;
  std::vector<float> host_out;
  float *d_out = nullptr, *d_in = nullptr, *d_mask = nullptr;
  OpCall(const ConvOps& o, const ConvCase& c) : ops(o), shape(c.shape), host_out(c.shape.output_size()) {
    ops.prolog(host_out.data(), c.input.data(), c.mask.data(), &d_out, &d_in, &d_mask, shape);
  }
  void operator()() { ops.forward(d_out, d_in, d_mask, shape); }
  void finish() { ops.epilog(host_out.data(), d_out, d_in, d_mask, shape); }
};

ShapeTiming time_case(const LabUnderTest& lab, const LabSpec& spec, const ConvCase& c,
                      const Options& opt, L2Flush& flush) {
  set_phase_case(c.name.c_str());
  set_phase(spec.timed == TimedRegion::op ? "timing conv_forward_gpu" : "timing the layer (prolog + op + epilog)");
  PairTiming t;
  if (spec.timed == TimedRegion::op) {
    OpCall base(baseline::conv_ops, c), mine(*lab.conv, c);
    t = time_pairs({std::ref(base), {}}, {std::ref(mine), {}}, Measure::events, opt.stopping, 3, flush);
    base.finish();
    mine.finish();
  } else {
    LayerCall base(baseline::conv_ops, c, HostMemory::pinned), mine(*lab.conv, c, HostMemory::pinned);
    t = time_pairs({std::ref(base), {}}, {std::ref(mine), {}}, Measure::host, opt.stopping, 2, flush);
  }
  const SmClock clock = read_sm_clock();
  return {c.name, to_string(c.shape), t.base_ms, t.lab_ms, t.speedup.median, t.speedup.low,
          t.speedup.high, int(t.ratios.size()), t.noise, t.converged,
          spec.timed == TimedRegion::op && t.hidden_work, t.lab_extra_host_ms,
          clock.available ? clock.sm_mhz : 0};
}

HostEvidenceReport host_evidence(HostEvidence kind, const LabUnderTest& lab, const ConvCase& c) {
  set_phase_case(c.name.c_str());
  set_phase("recording the lab's streams and allocations (host evidence)");
  LayerCall call(*lab.conv, c, HostMemory::pinned);
  activity::Recorder recorder;
  call();
  const activity::Summary s = recorder.stop();
  HostEvidenceReport rep{to_string(kind), false, ""};
  if (!s.available) {
    rep.detail = "cannot be checked on this machine: " + s.why;
    return rep;
  }
  if (kind == HostEvidence::streams) {
    // Overlap must be a real part of the layer, not two launches that touched for a microsecond.
    rep.ok = s.streams_used >= 2 && s.overlap_ms >= 0.05 * s.busy_ms;
    rep.detail = fmt::format("{}; needs >= 2 streams and overlap >= 5% of the busy time", s.describe());
  } else {
    const std::size_t needed = (c.shape.input_size() + c.shape.mask_size() + c.shape.output_size()) * sizeof(float);
    const std::size_t allowed = needed + needed / 10 + (std::size_t(4) << 20);
    rep.ok = s.peak_allocated_bytes <= allowed;
    rep.detail = fmt::format("peak {:.1f} MiB allocated by the layer, input + output + mask need {:.1f} MiB "
                             "(allowed {:.1f} MiB: no unrolled matrix in device memory)",
                             s.peak_allocated_bytes / 1048576.0, needed / 1048576.0, allowed / 1048576.0);
  }
  return rep;
}

}  // namespace

void grade_conv(const LabUnderTest& lab, const LabSpec& spec, const Options& opt, GradeResult& result) {
  std::vector<ConvCase> cases;
  set_phase("loading the fixtures");
  for (const fixtures::ConvCase& f : fixtures::load(opt.fixtures).conv)
    cases.push_back({f.info.name, "fixture", f.shape, f.input, f.mask});
  for (ConvCase& c : random_cases(opt.seed, opt.random_cases)) cases.push_back(std::move(c));
  const std::vector<ConvCase> grading = grading_cases(opt.seed, opt.batch);
  for (const ConvCase& c : grading) cases.push_back(c);
  result.tolerance = check::conv_tolerance(grading.back().shape, spec.precision).rule +
                     " (n = C*K*K of each case)";

  // Device memory is recorded on the lab's very first call too: a lab that allocates a workspace
  // once and keeps it would allocate nothing in a later window.
  const bool memory_evidence = !opt.under_sanitizer &&
                               std::find(spec.host_evidence.begin(), spec.host_evidence.end(),
                                         HostEvidence::no_extra_memory) != spec.host_evidence.end();
  HostEvidenceReport first_call_memory;
  if (memory_evidence && !guarded(result, cases.front().name, [&] {
        first_call_memory = host_evidence(HostEvidence::no_extra_memory, lab, cases.front());
      }))
    return;

  for (const ConvCase& c : cases) {
    const Reference ref = reference(c);
    CaseReport rep;
    if (!guarded(result, c.name, [&] { rep = check_case(lab, spec, c, ref); })) return;
    result.cases.push_back(std::move(rep));
  }
  if (!all_passed(result)) return;
  if (spec.network_accuracy && !opt.under_sanitizer) {
    require_network_data(opt, *spec.network_accuracy);
    CaseReport rep;
    if (!guarded(result, "network accuracy", [&] { rep = network_accuracy_case(lab, *spec.network_accuracy, opt); }))
      return;
    result.cases.push_back(std::move(rep));
    if (!all_passed(result)) return;
  }
  if (opt.correctness_only) return;

  L2Flush flush;
  for (const ConvCase& c : grading) {
    ShapeTiming t;
    if (!guarded(result, c.name, [&] { t = time_case(lab, spec, c, opt, flush); })) return;
    result.timing.push_back(t);
  }
  result.timed = true;
  for (HostEvidence kind : spec.host_evidence) {
    HostEvidenceReport rep;
    if (!guarded(result, grading.front().name, [&] { rep = host_evidence(kind, lab, grading.front()); })) return;
    if (kind == HostEvidence::no_extra_memory && !first_call_memory.ok) {
      rep.ok = false;
      rep.detail = "first call: " + first_call_memory.detail + "; grading shape: " + rep.detail;
    }
    result.host_evidence.push_back(rep);
  }
}

ProfiledShape profile_conv(const LabUnderTest& lab, const Options& opt) {
  const std::vector<ConvCase> grading = grading_cases(opt.seed, opt.batch);
  const ConvCase& c = grading.at(std::size_t(opt.profile_case));
  const ConvOps& ops = opt.profile_side == "baseline" ? baseline::conv_ops : *lab.conv;
  set_phase_case(c.name.c_str());
  set_phase("conv_forward_gpu_prolog");
  OpCall call(ops, c);
  LABKIT_CUDA_CHECK(cudaDeviceSynchronize());  // the prolog's copies stay out of the profile
  set_phase("conv_forward_gpu (profiled)");
  LABKIT_CUDA_CHECK(cudaProfilerStart());
  call();
  LABKIT_CUDA_CHECK(cudaDeviceSynchronize());
  LABKIT_CUDA_CHECK(cudaProfilerStop());
  set_phase("conv_forward_gpu_epilog");
  call.finish();
  return {c.name, to_string(c.shape), int(grading.size())};
}

}  // namespace labkit::runner
