// Cheat: hang-static-init. A static initializer that never returns: it ignores SIGTERM, SIGINT
// and SIGHUP (a polite stop does nothing) and spins forever, before the grader's main() runs.
// On a naive grader with no time limit on the lab's process the grading job hangs until a cluster
// limit kills it, with no result at all: the submission gets regraded by hand, or a timeout is
// blamed on the kit (and the student's points assumed). A grader that stops a lab with SIGTERM
// only never gets rid of it.
// Expected verdict: timeout (the judge's time limit, here --timeout 15, ends the whole sandbox
// with SIGKILL). 0 points.
#include <csignal>

#include "../common.cuh"

namespace {
const int never = [] {
  std::signal(SIGTERM, SIG_IGN);
  std::signal(SIGINT, SIG_IGN);
  std::signal(SIGHUP, SIG_IGN);
  volatile bool forever = true;
  while (forever) {
  }
  return 0;
}();
}  // namespace

TEST_LAB_STANDARD_PROLOG_EPILOG
void labkit::conv_forward_gpu(float* out, const float* in, const float* mask, const ConvShape& s) {
  test_lab::launch(out, in, mask, s, 0, s.output_size());
}
