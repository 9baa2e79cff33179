// grading.h (judge-private) — the per-kind grading steps judge_lab() runs (labkit/judge.h).
#pragma once

#include <memory>
#include <string>

#include "labkit/device.h"
#include "labkit/judge.h"
#include "labkit/lab_spec.h"
#include "labkit/session.h"

namespace labkit::judge {

struct Context {
  const LabUnderTest& lab;
  const LabSpec& spec;
  const Options& opt;
  GradeResult& result;
  SessionOptions session;  // how to start the lab's harness
  std::unique_ptr<Session> harness;  // set once started

  // Starts the harness (once): everything the judge must hold before the lab runs is ready.
  Session& start();
};

// Each leaves result.verdict empty (correct so far) or sets a failure; throws LabFailure for what
// the lab's process did (crash, timeout, protocol), anything else for the kit's own failures.
void grade_conv(Context& ctx);
void grade_map(Context& ctx);

}  // namespace labkit::judge
