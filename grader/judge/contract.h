// grader/judge/contract.h — which shapes a conv lab's correctness is graded on (design.md section 5,
// "Contract"): chosen by the instructor in lab.json ("contract") or by `labkit grade --contract`.
//
// Contract
//   * general (the default): the committed fixtures (K 1/3/5/7, C 1/3/4, odd M, H != W, B = 1),
//     fresh random shapes and the network's two layers at the grading batch; every case counts.
//   * course: the network's two layers (conv1 C1 M4 K7 86x86, conv2 C4 M16 K7 40x40) at the
//     batches the course's milestones run (course_batches) count; the fixtures and random shapes
//     still run, and those that fail are warnings in the report (the student learns which general
//     shapes the kernel assumes away), not failures. A crash on a warning case is a warning too.
//   * failure_pattern: one sentence naming a trait that every failing case has and no passing
//     case has (K != 7, B not a multiple of 4, ...), or "" when no such trait is found.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "labkit/conv.h"

namespace labkit {

enum class Contract { general, course };

const char* to_string(Contract);
// "general" or "course"; throws std::invalid_argument naming both otherwise.
Contract contract_from_string(const std::string& name);

// The batches of the counted cases under "course": the milestones' 100 and 1000 and the grading
// batch, ascending, each once. Under a sanitizer (the memory check, whose grading batch is tiny)
// only 100, the smallest batch the course runs.
std::vector<int> course_batches(int grading_batch, bool under_sanitizer = false);

// The network's two conv layers at batch B (design.md section 7).
ConvShape course_conv1(int batch);
ConvShape course_conv2(int batch);

struct ShapeOutcome {
  ConvShape shape;
  bool passed = false;
};
std::string failure_pattern(const std::vector<ShapeOutcome>& cases);

}  // namespace labkit
