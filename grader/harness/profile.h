// profile.h — the harness's other mode, for `labkit profile` (Nsight Compute), not for grading:
// one op of the lab or of the baseline on one grading shape, between cudaProfilerStart and
// cudaProfilerStop, then one JSON line naming what ran. Nothing here is a grade.
#pragma once

#include "harness.h"

namespace labkit::harness {

int profile_main(int argc, char** argv, const LabProgram& lab);

}  // namespace labkit::harness
