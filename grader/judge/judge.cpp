// judge_lab(): the order of the checks, the verdict and the score of one lab (grader/judge/judge.h).
// What is checked lives in grade_conv.cpp and grade_map.cpp; how it is printed in grader/judge/report.h.
#include "grader/judge/judge.h"

#include <fmt/core.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <chrono>
#include <fstream>

#include "grading.h"
#include "remote.h"
#include "grader/judge/clocks.h"
#include "grader/judge/cpu_partition.h"
#include "labkit/cuda_check.h"
#include "grader/judge/device.h"
#include "grader/judge/executed_evidence.h"
#include "grader/judge/gpu_arch.h"
#include "grader/judge/lab_spec.h"
#include "grader/judge/stats.h"
#include "labkit_config.h"
#include "timing_checks.h"

namespace labkit::judge {
namespace {

void finish_verdict(const LabSpec& spec, GradeResult& r) {
  const bool correct = r.verdict.empty();
  const bool host_ok = std::all_of(r.host_evidence.begin(), r.host_evidence.end(),
                                   [](const HostEvidenceReport& h) { return h.ok; });
  if (r.timed && !r.timing.empty()) {
    std::vector<double> mid, low, high;
    for (const ShapeTiming& t : r.timing) {
      mid.push_back(t.speedup);
      low.push_back(std::max(t.low, 1e-9));
      high.push_back(std::max(t.high, 1e-9));
    }
    r.speedup = stats::geometric_mean(mid);
    r.speedup_low = stats::geometric_mean(low);
    r.speedup_high = stats::geometric_mean(high);
    if (spec.speedup_of == SpeedupOf::total) {
      // The baseline's total over the lab's: each shape's lab time is its baseline time over its
      // speedup, so the interval's ends come from the shapes' ends, weighted by baseline time.
      double base = 0, lab_mid = 0, lab_at_low = 0, lab_at_high = 0;
      for (std::size_t i = 0; i < r.timing.size(); ++i) {
        const double b = r.timing[i].base_ms;
        base += b;
        lab_mid += b / std::max(mid[i], 1e-9);
        lab_at_low += b / low[i];
        lab_at_high += b / high[i];
      }
      r.speedup = base / lab_mid;
      r.speedup_low = base / lab_at_low;
      r.speedup_high = base / lab_at_high;
    }
  }
  r.speedup_of = to_string(spec.speedup_of);
  r.score = compute_score({spec.points, spec.correctness_share, spec.target_speedup, correct, r.timed, r.speedup,
                           r.evidence.ok && host_ok, true, spec.tiers});
  if (!correct) {
    // No credit at all for a lab the judge could not believe or could not finish, whatever its output.
    if (r.verdict != verdict::kIncorrect && !r.score.lines.empty())
      r.score.lines.front().why = fmt::format("no credit: the verdict is {}", r.verdict);
    if (r.hint.empty())
      r.hint = !spec.hint_correctness.empty() && r.verdict == verdict::kIncorrect
                   ? spec.hint_correctness
                   : fmt::format("Replay exactly this run with --seed {}, and trace the first wrong element by hand.", r.seed);
    return;
  }
  const std::size_t n = std::count_if(r.cases.begin(), r.cases.end(), [](const CaseReport& c) { return !c.warning_only; });
  if (!r.evidence.ok || !host_ok) {
    r.verdict = verdict::kMissingEvidence;
    const evidence::Report& e = r.evidence;
    if (!host_ok || e.ok)
      r.message = fmt::format("Correct on all {} cases, but the technique of this lab is not in the code (see "
                              "Evidence): the speedup earns no points without it.", n);
    else if (e.executed && !e.unverified.empty())
      r.message = fmt::format("Correct on all {} cases, but the kernels that ran in the timed calls could not be "
                              "verified ({}): the technique earns no credit without them, and the speedup no points.",
                              n, e.unverified);
    else if (e.executed)
      r.message = fmt::format("Correct on all {} cases, but the technique of this lab is not in the kernels that did "
                              "the timed work (see Evidence, from the executed kernels): the speedup earns no points "
                              "without it.", n);
    else
      r.message = fmt::format("Correct on all {} cases, but the technique of this lab is not in the code (see "
                              "Evidence): the speedup earns no points without it.", n);
    if (!r.contract_note.empty()) r.message += " " + r.contract_note;
    r.hint = !spec.hint_evidence.empty() ? spec.hint_evidence : "Apply the technique the handout describes.";
  } else {
    r.verdict = verdict::kPassed;
    r.message = r.timed ? fmt::format("Correct on all {} cases; speedup {:.2f}x over the baseline (target {:.2f}x); "
                                      "{:.2f} of {:g} points.", n, r.speedup, spec.target_speedup, r.score.total, r.score.max)
                        : fmt::format("Correct on all {} cases (speed not measured).", n);
    if (!r.contract_note.empty()) r.message += " " + r.contract_note;
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

// The kit's own work (the baseline in the kit's harness, the judge's network run) could not
// allocate device memory while the lab's process was running. If most of what was free just
// before that process started is gone, the lab's process holds it (a static initializer or a
// thread can take all it finds): the lab's failure, 0 points, and the message says whose
// allocation failed. Otherwise something outside both took it: the kit's failure, said as such.
void out_of_device_memory(const Context& ctx, const std::string& what, GradeResult& r) {
  constexpr std::size_t kMiB = std::size_t(1) << 20;
  std::size_t free_now = 0, total = 0;
  const bool known = cudaMemGetInfo(&free_now, &total) == cudaSuccess;
  cudaGetLastError();
  const std::size_t before = ctx.free_before_lab;
  const std::size_t taken = before > free_now ? before - free_now : 0;
  if (ctx.harness && known && before > 0 && taken > std::max(std::size_t(4) << 30, before / 2)) {
    r.verdict = verdict::kCudaError;
    r.message = fmt::format(
        "Device memory ran out in the kit's own work ({}) while your lab's process was running: {} MiB of the "
        "GPU's {} MiB were free just before your lab started, {} MiB are free now. Your lab's process holds the "
        "other {} MiB.",
        what, before / kMiB, total / kMiB, free_now / kMiB, taken / kMiB);
    r.hint = "Allocate device memory in conv_forward_gpu_prolog and free it in the epilog: a lab must not take "
             "device memory in a static initializer or keep it between calls.";
    return;
  }
  r.verdict = verdict::kKitError;
  r.message = fmt::format(
      "The kit ran out of device memory ({}): {} MiB were free before the lab's process started, {} MiB now. "
      "Another program may be using this GPU's memory; grade again when it is free.",
      what, before / kMiB, known ? free_now / kMiB : 0);
}

}  // namespace

Session& Context::start() {
  if (!harness) {
    if (!lab_clock_started) {
      session.deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(static_cast<long long>(opt.timeout_s * 1000));
      lab_clock_started = true;
    }
    std::size_t free_bytes = 0, total = 0;
    free_before_lab = cudaMemGetInfo(&free_bytes, &total) == cudaSuccess ? free_bytes : 0;
    cudaGetLastError();
    harness = std::make_unique<Session>(session);
    harness->start();
  }
  return *harness;
}

SessionOptions Context::kit_session(const std::string& kind) const {
  SessionOptions so = session;
  so.harness = kit_harness(kind);
  so.lab_id = "kit-" + kind;
  so.kind = kind;
  so.policy.limits.cpus = kit_cpus;
  so.policy.lock_cpus = false;  // trusted code
  so.trusted = true;
  so.wrapper.clear();  // never under the lab's sanitizer, never with its log pipe
  so.extra_fds.clear();
  so.deadline = std::chrono::steady_clock::now() + kit_time_limit(opt.timeout_s);
  return so;
}

void Context::restart_harness() {
  if (!harness) return;
  harness->close();
  earlier_logs += harness->log();
  session.deadline = harness->deadline();  // what is left of the lab's time, its pauses' credit kept
  harness.reset();
}

GradeResult judge_lab(const LabUnderTest& lab, const Options& opt) {
  const auto start = std::chrono::steady_clock::now();
  GradeResult r;
  r.id = lab.id;
  r.role = lab.role;
  r.kernel_source = lab.source;
  r.seed = opt.seed;
  // The lab's harness and the kit's (the baseline) on disjoint CPUs: a lab that spins threads
  // between its calls cannot slow the baseline's host side (grader/judge/cpu_partition.h).
  const CpuPartition cpus = split_cpus();
  r.sandbox = opt.evidence_only ? "" : sandbox::describe(opt.sandbox, opt.probe, cpus.describe());
  LabSpec spec = load_lab_spec(lab.lab_json, lab.id);
  Options resolved = opt;  // the grading batch: --batch, else the lab's
  if (resolved.batch <= 0) resolved.batch = spec.batch;
  if (!resolved.contract) resolved.contract = spec.contract;  // --contract, else the lab's
  r.contract = to_string(*resolved.contract);
  // Under "course", the course's rubric may accept more than the lab teaches (lab.json
  // course_evidence): every evidence step below, static or executed, reads those patterns, and the
  // report names them.
  spec.apply_contract(*resolved.contract);
  r.batch = resolved.batch;
  r.title = spec.title;
  r.kind = to_string(spec.kind);
  r.precision = to_string(spec.precision);
  r.timed_region = to_string(spec.timed);
  r.target_speedup = spec.target_speedup;
  r.score.max = spec.points;
  // The static whole-module search: the pre-check of --evidence-only and of runs that time nothing.
  // A graded run replaces it with the kernels that ran in the timed calls (below).
  const std::string ptx = evidence::read_ptx_file(lab.ptx);
  r.evidence = evidence::check(ptx, spec.evidence);
  if (opt.evidence_only) {
    r.verdict = r.evidence.ok ? verdict::kPassed : verdict::kMissingEvidence;
    if (spec.evidence.empty()) {
      std::vector<std::string> kinds;
      for (HostEvidence h : spec.host_evidence) kinds.push_back(to_string(h));
      if (!spec.counters.empty()) {
        std::vector<std::string> names;
        for (const CounterEvidence& c : spec.counters) names.push_back(c.name);
        kinds.push_back(fmt::format("the executed counters: {} (Nsight Compute)", fmt::join(names, ", ")));
      }
      r.message = kinds.empty()
                      ? "This lab has no PTX pattern and no run-time evidence: its output and its speed are graded, on a GPU."
                      : fmt::format("This lab has no PTX pattern: its technique ({}) is checked at run time, on a GPU.",
                                    fmt::join(kinds, "; "));
    } else {
      r.message = r.evidence.ok ? "The PTX shows the technique (evidence only: correctness and speed not checked). "
                                  "A pre-check: a graded run counts the technique only in the kernels that ran in "
                                  "the timed calls."
                                : "The PTX does not show the technique (evidence only).";
    }
    return r;
  }
  if (!cuda_device_available()) {
    r.verdict = verdict::kNoDevice;
    r.message = "No usable CUDA device (no driver or no GPU): correctness and speed need one; only the PTX "
                "evidence could be checked here.";
    return r;
  }
  const DeviceInfo d = device_info();
  r.device = d.name;
  // The target of this GPU model where lab.json has one (labkit calibrate --write), and why.
  const ChosenTarget chosen = spec.target_for(d.name);
  spec.target_speedup = chosen.target_speedup;
  r.target_speedup = chosen.target_speedup;
  r.target_source = chosen.why;
  r.driver = fmt::format("{}.{}", d.driver_version / 1000, (d.driver_version % 1000) / 10);
  r.peak_sm_clock_mhz = d.peak_sm_clock_mhz;
  r.max_sm_clock_mhz = read_sm_clock().max_sm_mhz;
  // Before anything runs on the GPU: a lab or a build that cannot run here is said in one line,
  // not as CUDA's "no kernel image" from the first kernel.
  const ComputeCapability cc{d.cc_major, d.cc_minor};
  if (spec.requires_gpu) {
    if (std::string why = lab_mismatch(lab.id, *spec.requires_gpu, d.name, cc); !why.empty()) {
      r.verdict = verdict::kNoDevice;
      r.message = why;
      r.exit_code = verdict::exit_code(r.verdict);
      return r;
    }
  }
  if (std::string why = build_mismatch(LABKIT_CUDA_ARCHS, d.name, cc); !why.empty()) {
    r.verdict = verdict::kKitError;
    r.message = why;
    r.exit_code = verdict::exit_code(r.verdict);
    return r;
  }
  if (!lab.unbuilt.empty()) {
    r.verdict = verdict::kKitError;
    r.message = fmt::format("{} has no harness in this build: it {}. This GPU, {}, is {}: rebuild for it with "
                            "`meson setup --reconfigure BUILD_DIR -Dgpu_arch=auto`, then `meson compile -C BUILD_DIR`.",
                            lab.id, lab.unbuilt, d.name, describe(cc));
    r.exit_code = verdict::exit_code(r.verdict);
    return r;
  }

  Context ctx{lab, spec, resolved, r, {}, nullptr, {}, std::chrono::steady_clock::now(), {}, 0, {}};
  ctx.session.harness = lab.harness;
  ctx.session.lab_id = lab.id;
  ctx.session.kind = to_string(spec.kind);
  ctx.session.sandbox = opt.sandbox;
  ctx.session.probe = opt.probe;
  for (const std::string& h : opt.hide) ctx.session.policy.hide.push_back(h);
  ctx.session.policy.limits.cpus = cpus.lab;
  ctx.session.policy.lock_cpus = true;
  ctx.kit_cpus = cpus.kit;
  const PinThread pin(cpus.split ? cpus.kit : std::vector<int>{});  // the judge times the Op Time baseline itself
  ctx.session.wrapper = opt.wrapper;
  for (const std::string& x : opt.show) ctx.session.policy.read_only_extra.push_back(x);
  if (!opt.evidence_only && opt.sandbox == sandbox::Mode::bubblewrap && opt.probe.available) {
    // The report names how much of the host the lab sees: the allow-list this session will mount
    // (after the memory check's folders joined it).
    sandbox::Policy shown = ctx.session.policy;
    shown.executable = lab.harness;
    std::vector<std::string> inside = opt.wrapper;
    inside.push_back(sandbox::kInsidePath);
    try {
      r.sandbox = sandbox::describe(opt.sandbox, opt.probe, cpus.describe(), sandbox::allow_list(shown, inside).size());
    } catch (const std::invalid_argument&) {
      // A missing harness: the session's start says so, as a verdict.
    }
  }
  ctx.session.extra_fds = opt.extra_fds;
  ctx.session.close_wait_s = opt.close_wait_s;
  // The harness records every kernel (grader/tools/activity.h's tracer), except under compute-sanitizer,
  // which CUPTI must not meet; such a run times nothing, and its evidence stays the static check.
  // A lab without PTX patterns (10-streams) has nothing to bind to execution: its timed calls run
  // untraced (docs/grading.md, Evidence); its host evidence records a layer of its own.
  if (opt.under_sanitizer || spec.evidence.empty()) ctx.session.harness_args.push_back("--no-trace");
  ctx.session.startup_s = std::min(60.0, opt.timeout_s);
  // ctx.session.deadline: set when the lab's process first starts (Context::start).
  r.verdict.clear();  // empty = correct so far; the grading steps set a failure
  try {
    if (spec.kind == LabKind::conv) grade_conv(ctx);
    else grade_map(ctx);
  } catch (const LabFailure& f) {
    r.verdict = f.verdict;
    r.message = f.message;
    r.hint = f.hint;
  } catch (const KitHarnessFailure& f) {
    if (f.cuda_name == "cudaErrorMemoryAllocation") {
      out_of_device_memory(ctx, "the baseline in the kit's harness", r);
    } else {
      r.verdict = verdict::kKitError;
      r.message = fmt::format("The kit failed while timing the baseline: {}", f.what());
    }
  } catch (const CudaError& e) {
    if (e.code() != cudaErrorMemoryAllocation) throw;
    out_of_device_memory(ctx, fmt::format("the judge: {}", e.what()), r);
  }
  // The technique must be in the kernels that did the timed work (grader/judge/executed_evidence.h).
  if (r.verdict.empty() && r.timed && !spec.evidence.empty())
    r.evidence = executed::check(ptx, spec.evidence, ctx.windows, spec.evidence_share);
  if (ctx.harness) {
    ctx.harness->close();
    if (opt.session_end) *opt.session_end = ctx.harness->end();
    r.log = ctx.earlier_logs + ctx.harness->log();
  } else {
    r.log = ctx.earlier_logs;
  }
  finish_verdict(spec, r);
  mention_todos(lab, r);
  r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  r.exit_code = verdict::exit_code(r.verdict);
  return r;
}

}  // namespace labkit::judge
