// Cheat: forged-static-init. A static initializer runs before the grader's main(): it prints a
// complete full-marks report (the JSON that `labkit grade` read back from a lab's stdout, see
// forged_report.h) and ends the process with _exit(0), so no real grading ever starts.
// On a naive grader (the lab and the grader in one process, the parent parsing the child's stdout
// as the result, as labkit did before the judge/harness split) this is full marks for no work:
// stdout holds exactly one valid report with verdict "passed", and the exit status is 0.
// Expected verdict: protocol-error (the harness exits before answering the judge's first request
// on its private channel; its stdout is only the student's log, never parsed). 0 points.
#include <unistd.h>

#include "../common.cuh"
#include "../forged_report.h"

namespace {
const int forged = [] {
  test_lab::write_all(STDOUT_FILENO, test_lab::forged_report(
      "forged-static-init",
      "Cheat: a static initializer prints a full-marks report and exits before the grader starts", 2));
  ::_exit(0);
  return 0;
}();
}  // namespace

// The skeleton's phases, never reached.
TEST_LAB_STANDARD_PROLOG_EPILOG
void labkit::conv_forward_gpu(float*, const float*, const float*, const ConvShape&) {}
