// network_check.h — the lab.json "network_accuracy" check (labkit/lab_spec.h): the milestone
// network (labkit/network_run.h) classifies the first N test images with the baseline's conv and
// with the lab's, and the lab may lose at most max_drop_points of accuracy. It is one more
// correctness case, "network accuracy", because a failure is a wrong result: per-element
// tolerances pass an fp16 conv whose rounding still moves the network's decisions.
#pragma once

#include "labkit/grade_result.h"
#include "labkit/lab_spec.h"
#include "runner.h"

namespace labkit::runner {

// Throws std::runtime_error (a kit error) when the test set or the model cannot be loaded, before
// the lab runs; the lab's own failures propagate as they do from any case (see guard.h).
void require_network_data(const Options& opt, const NetworkAccuracy& want);
CaseReport network_accuracy_case(const LabUnderTest& lab, const NetworkAccuracy& want, const Options& opt);

}  // namespace labkit::runner
