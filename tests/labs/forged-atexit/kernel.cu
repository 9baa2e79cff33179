// Cheat: forged-atexit. The untouched skeleton (conv_forward_gpu writes nothing), plus a report
// forged at exit. A static initializer keeps a copy of the real stdout (dup) and points fd 1 at
// /dev/null, so whatever the grader prints there is lost; an atexit handler then writes a complete
// full-marks report (forged_report.h) to the saved copy. The grader's own report is flushed before
// exit (fflush in the kit's emit) and atexit handlers run before stdio's final flush, so the
// redirect, not the timing, is what hides the real report.
// On a naive grader (the parent parses the lab process's stdout as the result and trusts exit
// status 0 less than the JSON) the only report it sees is the forged one: full marks.
// Expected verdict: incorrect (the judge never reads the harness's stdout: the output is all
// poison). 0 points.
#include <fcntl.h>
#include <unistd.h>

#include <cstdlib>

#include "../common.cuh"
#include "../forged_report.h"

namespace {
int g_real_stdout = -1;

void forge_at_exit() {
  if (g_real_stdout < 0) return;
  test_lab::write_all(g_real_stdout, test_lab::forged_report(
      "forged-atexit",
      "Cheat: an untouched skeleton whose atexit handler prints a full-marks report in place of the real one", 2));
}

const int armed = [] {
  g_real_stdout = ::dup(STDOUT_FILENO);
  const int null = ::open("/dev/null", O_WRONLY);
  if (null >= 0) {
    ::dup2(null, STDOUT_FILENO);
    ::close(null);
  }
  std::atexit(forge_at_exit);
  return 0;
}();
}  // namespace

TEST_LAB_STANDARD_PROLOG_EPILOG
void labkit::conv_forward_gpu(float*, const float*, const float*, const ConvShape&) {
  // TODO(student) left as it was: nothing is computed.
}
