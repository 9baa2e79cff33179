// conv_case.h (judge-private) — one conv case the judge runs through a harness: its shape and the
// inputs the judge drew for it (fixtures, fresh random shapes, the grading shapes).
#pragma once

#include <string>
#include <vector>

#include "labkit/conv.h"

namespace labkit::judge {

struct ConvCase {
  std::string name, origin;
  ConvShape shape{};
  std::vector<float> input, mask;
  float lo = -1, hi = 1;  // the input's range (timed calls draw fresh inputs from it)
};

}  // namespace labkit::judge
