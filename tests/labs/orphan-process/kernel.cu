// Cheat: orphan-process. The first prolog leaves processes behind that are meant to outlive the
// grade: one child that calls setsid() (a new session and process group, out of reach of a
// kill of the lab's group), and one double-forked grandchild (its parent exits at once, so it is
// re-parented and nobody waits for it), each ignoring SIGTERM, SIGINT and SIGHUP and then
// exec'ing `sleep 987654.25` (an argument no other process has, so a test can look for it). They
// keep the fds they inherit, the grader's pipes included. conv_forward_gpu writes nothing.
// A real helper would do the work here: keep the GPU busy while the grader times the baseline
// alone, rewrite the results file after the grader has written it, or wait for the next
// student's run. On a naive grader that only kills the lab's process (or its process group) the
// helper survives and does all that.
// Expected verdict: incorrect (the output is never written), and after the grade no process with
// 987654 in its command line exists: the sandbox's pid namespace dies with the harness. 0 points.
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <csignal>
#include <cstdio>

#include "../common.cuh"

namespace {

[[noreturn]] void become_orphan_sleeper() {
  ::setsid();
  std::signal(SIGTERM, SIG_IGN);  // ignored dispositions survive exec
  std::signal(SIGINT, SIG_IGN);
  std::signal(SIGHUP, SIG_IGN);
  char sleep_name[] = "sleep", forever[] = "987654.25";
  char* argv[] = {sleep_name, forever, nullptr};
  ::execvp("sleep", argv);
  ::execv("/bin/sleep", argv);
  ::execv("/usr/bin/sleep", argv);
  ::prctl(PR_SET_NAME, "sleep-987654");  // no sleep to exec: linger under a findable name
  for (;;) ::pause();
}

void leave_orphans() {
  const pid_t direct = ::fork();
  if (direct == 0) become_orphan_sleeper();
  const pid_t middle = ::fork();
  if (middle == 0) {
    if (::fork() == 0) become_orphan_sleeper();
    ::_exit(0);
  }
  if (middle > 0) ::waitpid(middle, nullptr, 0);
  std::fprintf(stderr, "labkit-cheat: left orphans behind (setsid child %d, double-forked via %d)\n", int(direct),
               int(middle));
}

}  // namespace

void labkit::conv_forward_gpu_prolog(const float*, const float* host_input, const float* host_mask,
                                     float** device_output, float** device_input, float** device_mask,
                                     const ConvShape& shape) {
  static bool left = false;
  if (!left) {
    left = true;
    leave_orphans();
  }
  labkit::standard_prolog(host_input, host_mask, device_output, device_input, device_mask, shape);
}

void labkit::conv_forward_gpu(float*, const float*, const float*, const ConvShape&) {}

void labkit::conv_forward_gpu_epilog(float* host_output, float* device_output, float* device_input,
                                     float* device_mask, const ConvShape& shape) {
  labkit::standard_epilog(host_output, device_output, device_input, device_mask, shape);
}
