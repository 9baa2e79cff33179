// grader/judge/subprocess.h — run a program as a child process with a time limit and capture its output,
// so that a lab that hangs, crashes or aborts becomes a verdict, never a grader crash
// (design.md section 5, "Isolation").
//
// Contract
//   * run(argv) starts argv[0] with arguments argv, our environment plus Options::env, stdin from
//     /dev/null and stdout/stderr captured through pipes, default signal dispositions and an empty
//     signal mask. Only fds 0-2 and Options::fds reach the child (with glibc < 2.34, any fd opened without
//     O_CLOEXEC would too). argv[0] without a '/' is searched in PATH; a relative path is taken
//     relative to working_directory when one is given.
//   * The child leads a new process group. When `timeout` passes, the group gets SIGTERM and,
//     `grace` later, SIGKILL, so grandchildren die with it. When the child ends (on its own or
//     not), whatever is left of its group gets SIGKILL: a lab never leaves processes behind.
//   * Output: each stream keeps at most max_output_bytes; the rest is read and dropped
//     (truncated = true), so the child never blocks on a full pipe. After the child has ended we
//     read until every writer has closed the pipes, at most 1 s (for writers that left the group).
//   * Nothing the child does makes run() throw. A child that could not start (missing file, not
//     executable, bad working directory) is started = false with `error` saying why. Should run()
//     itself fail (bad_alloc, poll error), it kills and reaps the child before the exception
//     leaves: no zombie or stray process in any path.
//   * Several threads may call run() at once (but setenv() meanwhile is not safe: environ is
//     read to build the child's environment). It waits for its own child by pid, so a
//     waitpid(-1) or SIGCHLD = SIG_IGN elsewhere in the process would steal the exit status
//     (reported in `error`). A child stuck in the kernel (D state) after SIGKILL is waited for.
//   * Because the child has its own group, Ctrl-C at a terminal reaches only the caller; a caller
//     that wants its children to die with it must handle SIGINT itself.
#pragma once

#include <atomic>
#include <chrono>
#include <cstddef>
#include <filesystem>
#include <string>
#include <utility>
#include <vector>

namespace labkit::subprocess {

struct Options {
  std::chrono::milliseconds timeout{600000};   // wall clock; 0 = none
  std::chrono::milliseconds grace{2000};       // after SIGTERM to the process group, SIGKILL
  std::size_t max_output_bytes = 8u << 20;     // per stream; the rest is dropped, `truncated` set
  bool echo_stderr = false;                    // also copy the child's stderr to ours as it arrives
  std::vector<std::pair<std::string, std::string>> env;  // added/overridden variables (last wins)
  std::filesystem::path working_directory;     // empty = ours
  // When set and it becomes true (e.g. from the caller's SIGINT handler), the child's group is
  // stopped as on a timeout (SIGTERM, then SIGKILL after `grace`) and `cancelled` is set: Ctrl-C
  // at a terminal reaches only the caller, whose child would otherwise keep the GPU busy.
  const std::atomic<bool>* cancel = nullptr;
  // Extra descriptors the child gets: {the caller's fd, its number in the child} (>= 3, distinct;
  // CLOEXEC cleared there), e.g. the sandbox's seccomp program. Everything else above 2 is closed.
  std::vector<std::pair<int, int>> fds;
};

struct Result {
  std::string program;       // argv[0], for messages
  bool started = false;      // false: could not start; `error` says why
  std::string error;         // why it could not start, or why its exit status is unknown
  int exit_code = -1;        // when it exited normally
  int signal = 0;            // when killed by a signal (SIGSEGV = 11, ...)
  bool timed_out = false;    // we killed it because the time limit passed
  bool cancelled = false;    // we stopped it because Options::cancel became true
  bool core_dumped = false;
  double seconds = 0;        // from start to the child's end
  std::string out, err;
  bool truncated = false;    // some output beyond max_output_bytes was dropped
  std::chrono::milliseconds timeout{0}, grace{0};  // the limits it ran under, for describe()

  // One line: "exited with code 1" / "killed by SIGSEGV (segmentation fault)" /
  // "did not finish within 30 s and was killed" / "could not start ./x: No such file or directory".
  std::string describe() const;
};

Result run(const std::vector<std::string>& argv, const Options& options = {});

// "SIGSEGV (segmentation fault)"; "signal 70" for a number without a name.
std::string signal_name(int sig);

}  // namespace labkit::subprocess
