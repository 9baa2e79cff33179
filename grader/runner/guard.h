// guard.h — running a piece of the lab and turning its failures into a verdict.
//
// The lab's code is the student's: it may throw a labkit::CudaError (its own LABKIT_CUDA_CHECK or
// the kit's sync after it: an illegal address surfaces there), or anything else. Either ends
// the grading of this lab with a verdict that names the phase and the case; the grader itself
// goes on to report. After a CUDA error the context may be unusable (sticky errors), so nothing
// else touches the GPU.
#pragma once

#include <fmt/core.h>

#include <exception>
#include <string>

#include "labkit/cuda_check.h"
#include "labkit/grade_result.h"
#include "labkit/phase.h"

namespace labkit::runner {

template <class F>
bool guarded(GradeResult& result, const std::string& case_name, F&& body) {
  try {
    body();
    return true;
  } catch (const CudaError& e) {
    result.verdict = verdict::kCudaError;
    result.message = fmt::format("A CUDA error during {} (case {}):\n{}", g_phase.load(), case_name, e.what());
    result.hint =
        e.code() == cudaErrorIllegalAddress || e.code() == cudaErrorLaunchFailure
            ? "An illegal address usually means an index past the end of an array: check the bounds "
              "test of every load and store. `labkit grade <lab> --sanitize` names the line "
              "(compute-sanitizer's memcheck)."
            : "Check the launch configuration (grid and block sizes, shared memory per block) and "
              "every CUDA call's return value.";
  } catch (const std::exception& e) {
    result.verdict = verdict::kLabError;
    result.message = fmt::format("The lab stopped with an error during {} (case {}):\n{}", g_phase.load(),
                                 case_name, e.what());
    result.hint = "Read the message above: it comes from the lab's own code or a check it failed.";
  }
  return false;
}

// Sets the "incorrect" verdict when a case failed; true when every case passed.
inline bool all_passed(GradeResult& result) {
  std::size_t failed = 0;
  const CaseReport* first = nullptr;
  for (const CaseReport& c : result.cases)
    if (!c.passed && failed++ == 0) first = &c;
  if (failed == 0) return true;
  result.verdict = verdict::kIncorrect;
  result.message = fmt::format("{} of {} cases are wrong. The first: {} ({}): {}.", failed,
                               result.cases.size(), first->name, first->shape, first->outcome);
  return false;
}

}  // namespace labkit::runner
