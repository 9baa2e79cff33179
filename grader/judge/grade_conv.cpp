// Grading a conv lab (the judge's side): correctness on fixtures, fresh random cases and the
// grading shapes; the network accuracy case; Op or Layer Time against the baseline with fresh
// data in every timed call; the run-time (host) evidence. The lab's code runs only in its harness.
#include <cuda_runtime_api.h>
#include <fmt/core.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <future>
#include <string>
#include <thread>
#include <vector>

#include "conv_case.h"
#include "conv_timing.h"
#include "grading.h"
#include "grader/tools/activity.h"
#include "grader/judge/check.h"
#include "grader/judge/clocks.h"
#include "grader/judge/contract.h"
#include "grader/harness/conv_run.h"
#include "labkit/cuda_check.h"
#include "grader/judge/fixtures.h"
#include "grader/judge/report.h"
#include "grader/core/random.h"
#include "grader/judge/stats.h"
#include "network_case.h"
#include "reference/baseline.h"
#include "reference/conv_reference.h"
#include "remote.h"
#include "timing_checks.h"

namespace labkit::judge {
namespace {

using nlohmann::json;

// Expected output and the per-element error scale sum|x*w| (grader/judge/check.h), from the GPU fp64
// reference, computed before the lab's process exists.
struct Expected {
  std::vector<double> values, bound;
};

ConvCase random_case(const std::string& name, const std::string& origin, const ConvShape& shape,
                     float lo, float hi, std::uint64_t seed) {
  ConvCase c{name, origin, shape, std::vector<float>(shape.input_size()), std::vector<float>(shape.mask_size()), lo, hi};
  fill_uniform(c.input, lo, hi, seed_for(seed, name + "/input"));
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

bool same(std::span<const float> a, std::span<const float> b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size_bytes()) == 0;
}

// One checked call through the harness: every intermediate comes back raw and is compared here.
CaseReport check_case(Context& ctx, const ConvCase& c, const Expected& ref, int index, json* activity) {
  Session& s = ctx.start();
  const ConvShape& sh = c.shape;
  Regions r;
  const std::uint64_t in = r.add(sh.input_size()), mask = r.add(sh.mask_size()), out = r.add(sh.output_size()),
                      in1 = r.add(sh.input_size()), mask1 = r.add(sh.mask_size()), in2 = r.add(sh.input_size()),
                      mask2 = r.add(sh.mask_size()), hin = r.add(sh.input_size()), hmask = r.add(sh.mask_size());
  s.tensors().reserve(r.total());
  TensorFile& t = s.tensors();
  std::copy(c.input.begin(), c.input.end(), t.floats(in, sh.input_size()).begin());
  std::copy(c.mask.begin(), c.mask.end(), t.floats(mask, sh.mask_size()).begin());
  const bool pinned = ctx.spec.timed == TimedRegion::layer;
  const json reply = s.call({{"op", "check"}, {"shape", {sh.B, sh.M, sh.C, sh.H, sh.W, sh.K}},
                             {"memory", pinned ? "pinned" : "pageable"}, {"in", in}, {"mask", mask}, {"out", out},
                             {"dev_in1", in1}, {"dev_mask1", mask1}, {"dev_in2", in2}, {"dev_mask2", mask2},
                             {"host_in", hin}, {"host_mask", hmask}, {"spacer", index % 3},
                             {"layer", ctx.spec.timed == TimedRegion::layer},
                             {"record", activity != nullptr}},
                            fmt::format("the case {} ({}): its prolog, conv_forward_gpu or epilog", c.name, to_string(sh)));
  check_guards(reply, c.name);
  if (activity) *activity = reply.value("activity", json::object());

  CaseReport rep{c.name, c.origin, to_string(sh), false, "", "", 0};
  const std::span<const float> got = t.floats(out, sh.output_size());
  const check::Result cmp = check::compare(got, ref.values, ref.bound, check::conv_tolerance(sh, ctx.spec.precision, check::max_abs(c.input), check::max_abs(c.mask)));
  rep.worst = cmp.worst;
  // The lab's device buffers explain a wrong output; a right one needs no explaining (a mask in
  // __constant__ memory leaves *device_mask null or unfilled, an fp16 lab has buffers of its own).
  const std::span<const float> dev_in1 = t.floats(in1, sh.input_size()), dev_mask1 = t.floats(mask1, sh.mask_size());
  const bool input_on_device = same(dev_in1, c.input), mask_on_device = same(dev_mask1, c.mask);
  if (!cmp.passed() && !(input_on_device && mask_on_device)) {
    rep.outcome = "input not copied";
    rep.detail = fmt::format(
        "after conv_forward_gpu_prolog {} does not hold the host's, and the output is wrong: the prolog must copy the "
        "input to *device_input{} (asynchronous copies on streams count: the kit waits for the device before it looks)",
        !input_on_device && !mask_on_device ? "neither the device input nor the device mask"
        : !input_on_device                  ? "the device input"
                                            : "the device mask",
        input_on_device ? " and the mask to *device_mask or to __constant__ memory the kernel reads" : "");
    rep.detail += fmt::format("\n{}", cmp.describe(check::conv_layout(sh)));
    return rep;
  }
  // Changed during the call: the device buffers from after the prolog to after conv_forward_gpu
  // (what the lab put there, whatever its layout), the host arrays from what the judge sent.
  std::vector<std::string> modified;
  if (!same(t.floats(in2, sh.input_size()), dev_in1)) modified.push_back("the device input");
  if (!same(t.floats(mask2, sh.mask_size()), dev_mask1)) modified.push_back("the device mask");
  if (!same(t.floats(hin, sh.input_size()), c.input)) modified.push_back("the host input");
  if (!same(t.floats(hmask, sh.mask_size()), c.mask)) modified.push_back("the host mask");
  if (!modified.empty()) {
    rep.outcome = "input modified";
    rep.detail = fmt::format("{} changed during the call; conv_forward_gpu must only read its inputs (the next "
                             "layer or the next call would see changed data)", fmt::join(modified, " and "));
    if (!cmp.passed()) rep.detail += fmt::format("\n{}", cmp.describe(check::conv_layout(sh)));
    return rep;
  }
  rep.passed = cmp.passed();
  rep.outcome = check::to_string(cmp.outcome);
  rep.detail = cmp.describe(check::conv_layout(sh));
  return rep;
}

// Under "course": the network's two layers at the course's batches other than the grading batch
// (whose cases the grading shapes are), drawn as the grading shapes are.
std::vector<ConvCase> course_cases(std::uint64_t seed, int grading_batch, bool under_sanitizer) {
  std::vector<ConvCase> cases;
  for (int b : course_batches(grading_batch, under_sanitizer)) {
    if (b == grading_batch) continue;
    cases.push_back(random_case(fmt::format("conv1 B={}", b), "course", course_conv1(b), 0.0f, 255.0f, seed));
    cases.push_back(random_case(fmt::format("conv2 B={}", b), "course", course_conv2(b), 0.0f, 4.0f, seed));
  }
  return cases;
}

// A general shape under "course": checked as any case, but whatever happens is a warning, a
// failure of the lab's process too (the next case starts a new one).
CaseReport warning_case(Context& ctx, const ConvCase& c, const Expected& ref, int index) {
  CaseReport rep;
  try {
    rep = check_case(ctx, c, ref, index, nullptr);
  } catch (const LabFailure& f) {
    rep = {c.name, c.origin, to_string(c.shape), false, f.verdict, f.message, 0};
    ctx.restart_harness();
  }
  rep.warning_only = true;
  return rep;
}

HostEvidenceReport host_evidence(Context& ctx, HostEvidence kind, const ConvCase& c, const json& activity_reply) {
  HostEvidenceReport rep{to_string(kind), false, ""};
  const activity::Summary s = activity_from_json(activity_reply);
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
    // The kit's guard bytes after each buffer of standard_prolog count as the kit's, not the lab's.
    const std::size_t allowed = needed + needed / 10 + (std::size_t(4) << 20) + 3 * (64u << 10);
    rep.ok = s.peak_allocated_bytes <= allowed;
    rep.detail = fmt::format("peak {:.1f} MiB allocated by the layer, input + output + mask need {:.1f} MiB "
                             "(allowed {:.1f} MiB: no unrolled matrix in device memory)",
                             s.peak_allocated_bytes / 1048576.0, needed / 1048576.0, allowed / 1048576.0);
  }
  (void)ctx;
  return rep;
}

}  // namespace

void grade_conv(Context& ctx) {
  GradeResult& result = ctx.result;
  const Options& opt = ctx.opt;
  const Contract contract = opt.contract.value_or(ctx.spec.contract);
  std::vector<ConvCase> general;  // the fixtures and fresh random shapes
  for (const fixtures::ConvCase& f : fixtures::load(opt.fixtures).conv)
    general.push_back({f.info.name, "fixture", f.shape, f.input, f.mask, -1, 1});
  for (ConvCase& c : random_cases(opt.seed, opt.random_cases)) general.push_back(std::move(c));
  const std::vector<ConvCase> grading = grading_cases(opt.seed, opt.batch);
  // The cases that count first; under "course" the general shapes follow as warnings
  // (warning[i]), so a crash on one of them cannot hide how the counted ones did.
  std::vector<ConvCase> cases = contract == Contract::course
                                    ? course_cases(opt.seed, opt.batch, opt.under_sanitizer)
                                    : general;
  // Under the memory check and "course", the course's layers at batch 100 stand for the grading
  // shapes, and the general shapes (warnings of the graded run) are not run: a K = 7-only kernel
  // writes out of bounds on K = 3, which the course does not ask of it.
  const bool course_sanitized = contract == Contract::course && opt.under_sanitizer;
  if ((!opt.under_sanitizer || opt.batch <= 64) && !course_sanitized)
    for (const ConvCase& c : grading) cases.push_back(c);
  const std::size_t counted = cases.size();
  if (contract == Contract::course && !course_sanitized)
    for (ConvCase& c : general) cases.push_back(std::move(c));
  general.clear();
  result.tolerance = check::conv_tolerance(grading.back().shape, ctx.spec.precision, check::max_abs(grading.back().input), check::max_abs(grading.back().mask)).rule + " (n = C*K*K of each case)";

  // Everything the judge computes on the GPU happens before the lab's process exists.
  std::vector<Expected> expected;
  for (const ConvCase& c : cases)
    expected.push_back({reference::conv_reference_gpu(c.shape, c.input, c.mask),
                        reference::conv_error_scale_gpu(c.shape, c.input, c.mask)});
  ctx.phase_done("cases and expected outputs (fp64)");
  const bool timing = !opt.correctness_only;
  std::unique_ptr<Baselines> base;
  std::unique_ptr<L2Flush> flush;
  std::unique_ptr<KitBaseline> kit_base;
  std::vector<double> overheads;
  if (timing) {
    flush = std::make_unique<L2Flush>();
    base = std::make_unique<Baselines>(ctx.spec.timed, *flush);
    kit_base = std::make_unique<KitBaseline>(ctx, grading, *flush, *base);
    base->time_clean();
    overheads = kit_base->overheads();
    ctx.phase_done("baseline timed alone in the kit's harness, its overhead");
  }
  // The judge's own network run (the baseline's predictions) overlaps the lab's correctness cases:
  // neither is timed, and it took as long as all of them.
  NetworkCase network;
  std::future<void> network_ready;
  if (ctx.spec.network_accuracy && !opt.under_sanitizer)
    network_ready = std::async(std::launch::async, [&] { network.prepare(ctx, *ctx.spec.network_accuracy); });

  // Device memory is recorded on the lab's very first call too: a lab that allocates a workspace
  // once and keeps it would allocate nothing in a later window.
  const bool memory_evidence = !opt.under_sanitizer &&
                               std::find(ctx.spec.host_evidence.begin(), ctx.spec.host_evidence.end(),
                                         HostEvidence::no_extra_memory) != ctx.spec.host_evidence.end();
  HostEvidenceReport first_call_memory{"no_extra_memory", true, ""};
  for (std::size_t i = 0; i < cases.size(); ++i) {
    json activity;
    if (i >= counted) {
      result.cases.push_back(warning_case(ctx, cases[i], expected[i], int(i)));
      continue;
    }
    CaseReport rep = check_case(ctx, cases[i], expected[i], int(i), i == 0 && memory_evidence ? &activity : nullptr);
    if (i == 0 && memory_evidence) first_call_memory = host_evidence(ctx, HostEvidence::no_extra_memory, cases[i], activity);
    const bool modified = rep.outcome == "input modified";
    result.cases.push_back(std::move(rep));
    if (modified) {
      result.verdict = verdict::kInputModified;
      result.message = fmt::format("The case {} changed its input: {}", result.cases.back().name, result.cases.back().detail);
      return;
    }
  }
  expected.clear();
  if (network_ready.valid()) network_ready.get();  // rethrows what the network run threw
  ctx.phase_done(network_ready.valid() || (ctx.spec.network_accuracy && !opt.under_sanitizer)
                     ? "checked cases (harness start included), network baseline beside them"
                     : "checked cases (harness start included)");
  std::vector<ShapeOutcome> outcomes;
  for (std::size_t i = 0; i < cases.size(); ++i) outcomes.push_back({cases[i].shape, result.cases[i].passed});
  const std::string pattern = failure_pattern(outcomes);
  if (!all_passed(result)) {
    if (!pattern.empty()) result.message += " " + pattern;
    return;
  }
  const auto warned = std::count_if(result.cases.begin(), result.cases.end(),
                                    [](const CaseReport& c) { return c.warning_only && !c.passed; });
  if (warned > 0)
    result.contract_note = fmt::format(
        "Graded on the course's contract: the network's two layers at batch {} count; {} of the {} general shapes "
        "fail (warnings, listed under Correctness).{}", fmt::join(course_batches(opt.batch, opt.under_sanitizer), ", "),
        warned, cases.size() - counted, pattern.empty() ? "" : " " + pattern);
  if (ctx.spec.network_accuracy && !opt.under_sanitizer) {
    result.cases.push_back(network.run(ctx));
    ctx.phase_done("network accuracy");
    if (!all_passed(result)) return;
  }
  if (!timing) return;

  // Every grading shape's pairs; false when a timed call's output was wrong (the verdict is set).
  const auto time_all = [&] {
    for (std::size_t i = 0; i < grading.size(); ++i) {
      RemoteLog log;
      try {
        result.timing.push_back(time_case(ctx, grading[i], i, overheads[i], *kit_base, *base, *flush, log));
      } catch (TimedCallWrong& w) {
        result.cases.push_back(std::move(w.report));
        all_passed(result);
        return false;
      }
      ctx.phase_done(fmt::format("timed pairs of {} ({} lab calls)", grading[i].name, log.calls));
      record_call_costs(result, log);
      ctx.windows.insert(ctx.windows.end(), log.windows.begin(), log.windows.end());
    }
    return true;
  };
  const auto timing_start = std::chrono::steady_clock::now();
  if (!time_all()) return;
  const auto timing_took = std::chrono::steady_clock::now() - timing_start;
  result.timed = true;
  const ConvCase& recorded = grading.front();
  bool streams = false;
  for (HostEvidence kind : ctx.spec.host_evidence) {
    Session& s = ctx.start();
    const ConvCase& c = recorded;
    const json reply = recorded_layer(s, c, false, "the layer recorded for its streams and allocations (host evidence)");
    const json activity = reply.value("activity", json::object());
    HostEvidenceReport rep = host_evidence(ctx, kind, c, activity);
    if (kind == HostEvidence::streams) {
      streams = true;
      result.timelines.push_back(timeline_of(activity, "lab", c.name));
    }
    if (kind == HostEvidence::no_extra_memory && !first_call_memory.ok) {
      rep.ok = false;
      rep.detail = "first call: " + first_call_memory.detail + "; grading shape: " + rep.detail;
    }
    result.host_evidence.push_back(rep);
  }
  if (!ctx.spec.host_evidence.empty()) ctx.phase_done("host evidence");
  ctx.harness->close();
  // A baseline slowed beside the lab is measured again before it is the verdict: on a node grading
  // several students at once, the other grades' host traffic moves a layer's baseline by more than
  // the limit for seconds at a time (timing_checks.h). A lab that slows the baseline does it every
  // time; the last measurement is the result, whatever it finds. The judge's choice to measure
  // again is not the lab's time: its limit moves on by what the measurement and the pause take.
  for (int m = 2; m <= kInterferenceMeasurements && base->check_interference(result); ++m) {
    ctx.phase_done(fmt::format("{} ({} of {})", kMeasuredAgainPhase, m, kInterferenceMeasurements));
    base->measure_again(result);
    ctx.restart_harness();  // closed already: its log kept, the next start() begins a new process
    const auto pause = std::chrono::duration<double>(kInterferencePauseS * (m - 1));
    ctx.session.deadline += std::chrono::duration_cast<std::chrono::steady_clock::duration>(pause) + timing_took;
    std::this_thread::sleep_for(pause);
    result.timing.clear();
    ctx.windows.clear();
    if (!time_all()) return;
    ctx.harness->close();
    if (m == kInterferenceMeasurements) base->check_interference(result);
  }
  // The timeline's other half, after every timed sample and with the lab's process gone.
  if (streams) {
    result.timelines.push_back(kit_base->record_layer(recorded));
    ctx.phase_done("the baseline's layer recorded for the timeline");
  }
  kit_base->close();
  ctx.phase_done("baseline timed alone again, harness closed");
}

}  // namespace labkit::judge
