// grading.h (judge-private) — the per-kind grading steps judge_lab() runs (grader/judge/judge.h).
#pragma once

#include <chrono>
#include <memory>
#include <string>

#include "grader/judge/device.h"
#include "grader/judge/executed_evidence.h"
#include "grader/judge/judge.h"
#include "grader/judge/lab_spec.h"
#include "grader/judge/session.h"

namespace labkit::judge {

struct Context {
  const LabUnderTest& lab;
  const LabSpec& spec;
  const Options& opt;
  GradeResult& result;
  SessionOptions session;  // how to start the lab's harness
  std::unique_ptr<Session> harness;  // set once started

  // How to start the kit's own harness of `kind` ("conv", "map"): the lab's options on the kit's
  // CPUs, with a deadline of its own (kit_time_limit; callers shorten it where the kit runs alone).
  SessionOptions kit_session(const std::string& kind) const;

  // Starts the harness (once): everything the judge must hold before the lab runs is ready.
  // The lab's time limit (Options::timeout_s) starts with its first process, not before: the
  // judge's own work ahead of it (the expected outputs, the baseline timed alone) is not the lab's
  // time, nor is a pause (Session::resume moves the deadline on). A restart keeps what is left.
  Session& start();
  // Ends the harness's process (its log kept); the next start() begins a new one.
  void restart_harness();
  std::string earlier_logs;  // of harness processes ended by restart_harness()

  // Closes the phase that just ended under `name` (result.phases): the time since the last call.
  void phase_done(const std::string& name) {
    const auto now = std::chrono::steady_clock::now();
    result.phases.emplace_back(name, std::chrono::duration<double>(now - phase_start).count());
    phase_start = now;
  }
  std::chrono::steady_clock::time_point phase_start = std::chrono::steady_clock::now();
  std::vector<int> kit_cpus;  // where the kit's own harness runs (grader/judge/cpu_partition.h)
  // The device's free memory just before the lab's process last started (0: unknown): what the
  // kit's own allocations had to share with it (judge.cpp, out_of_device_memory).
  std::size_t free_before_lab = 0;
  // Every graded timed call's kernel records (grader/judge/executed_evidence.h), for the evidence.
  std::vector<executed::Window> windows;
  bool lab_clock_started = false;  // start() has set session.deadline
};

// Each leaves result.verdict empty (correct so far) or sets a failure; throws LabFailure for what
// the lab's process did (crash, timeout, protocol), anything else for the kit's own failures.
void grade_conv(Context& ctx);
void grade_map(Context& ctx);

}  // namespace labkit::judge
