// Cheat: forged-in-forward. The first conv_forward_gpu call prints a complete full-marks report
// (forged_report.h) to stdout and ends the process with _exit(0): no atexit handler, no stdio
// flush, so nothing the grader buffered before reaches stdout after the forgery. Waiting until
// the forward pass (rather than a static initializer) gets past a grader that checks the lab
// started properly (a handshake, a first correct prolog) before it trusts the report.
// On a naive grader (the parent parses the lab process's stdout as the result) this is full
// marks: stdout is one valid "passed" report and the exit status is 0.
// Expected verdict: protocol-error (the harness exits before answering the forward request).
// 0 points.
#include <unistd.h>

#include "../common.cuh"
#include "../forged_report.h"

TEST_LAB_STANDARD_PROLOG_EPILOG
void labkit::conv_forward_gpu(float*, const float*, const float*, const ConvShape&) {
  test_lab::write_all(STDOUT_FILENO, test_lab::forged_report(
      "forged-in-forward", "Cheat: conv_forward_gpu prints a full-marks report and exits", 2));
  ::_exit(0);
}
