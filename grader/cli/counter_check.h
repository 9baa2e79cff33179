// counter_check.h — executed-instruction evidence in `labkit grade`, where the GPU's performance
// counters can be read: Nsight Compute (ncu) counts what the lab's kernels executed on the small
// correctness cases, inside the lab's sandbox, after a grade that passed.
//
// Why: the evidence of a grade is a PTX pattern in the kernels that did the timed work
// (grader/judge/executed_evidence.h), but a kernel that runs can still hold its `mma` in a branch it never
// takes. A counter of executed tensor-core (or fp16) math cannot be satisfied by code that does
// not run: it must cover a share of the conv's multiply-adds. A ratio of two counters with a
// ceiling reads what a kernel must no longer do (lab 14: bank conflicts over shared-load wavefronts).
//
// Contract
//   * needs_counter_check(r, spec): the grade passed and lab.json has "counters" (LabSpec).
//   * counter_check(lab, r, o): one run of the lab's harness behind `ncu --metrics <the counters'
//     metrics> --csv --log-file /proc/self/fd/7` in the sandbox the grade used (ncu's folder shown
//     read-only), on the memory check's cases (fixtures, one random case, the grading shapes at
//     o.batch), nothing timed, no CUPTI tracing in the harness. For each lab.json counter: the
//     sum of its metrics over every kernel of the run times per_count, over the multiply-adds of
//     the run's conv calls (one forward per case) or over the sum of its "over" metrics, must
//     reach min_fraction and stay at or below max_fraction where it has one (counter_rule.h).
//   * Where the counters cannot be read (no ncu, no permission: ERR_NVGPUCTRPERM, a metric this GPU
//     lacks, ncu failing in the sandbox) the check is not made: r["counters"] {"available": false,
//     "why"}, and the grade's evidence stays the kernels that ran (CUPTI); the message says which
//     evidence decided. A lab that makes ncu fail gains nothing over not being counted.
//   * Adds to r: "counters" {"check": "executed counters", "available", "why", "seconds",
//     "macs", "kernels", "results": [{"name", "metrics", "count", "fraction", "min_fraction", "ok",
//     and with a ratio "over", "base", with a ceiling "max_fraction"}]}, r["evidence"]["decided_by"],
//     a phase, its seconds to r["seconds"]. A fraction under its minimum or above its maximum makes
//     the verdict missing-evidence: the points beyond correctness go.
#pragma once

#include <filesystem>
#include <functional>
#include <nlohmann/json.hpp>
#include <string>

#include "grader/judge/judge.h"
#include "grader/judge/lab_spec.h"
#include "registry.h"
#include "tool_run.h"

namespace labkit::cli {

struct CounterCheckOptions : ToolCheckOptions {
  std::filesystem::path ncu;  // as found; empty: not installed (the check is not made, and says so)
};

bool needs_counter_check(const nlohmann::json& r, const LabSpec& spec);
void counter_check(const LabEntry& lab, nlohmann::json& r, const CounterCheckOptions& o);

// The multiply-adds of one case's shape as the grade JSON spells it ("B=2 M=4 C=1 H=86 W=86 K=7");
// 0 when it does not parse.
double macs_of_shape(const std::string& shape);

}  // namespace labkit::cli
