// grader/judge/harness_process.h — the judge's handle on one running harness: a child process with the
// channel's fds in place, its own process group, resource limits, and its output captured.
//
// Contract
//   * start(argv, fds, limits): fork + exec of argv (argv[0] a path). In the child, each
//     ChildFd's `parent` fd is dup'ed onto `child` (3, 4, 5: grader/protocol/wire.h) with
//     close-on-exec cleared; every other fd but 0-2 is closed; stdin is /dev/null; stdout and
//     stderr go to pipes this object drains on a thread (keeping the last kKeepBytes of each, so
//     a lab that prints without end never blocks and never fills memory); the child leads a new
//     process group; sandbox::apply_limits runs before exec. A failed exec exits 127 with the
//     reason on stderr.
//   * kill(): SIGKILL to the whole process group (with bubblewrap's pid namespace, to everything
//     the lab started). wait(): reaps the child and returns how it ended; the destructor kills
//     and reaps, so no path leaves a process behind.
//   * stop_all(limit): SIGSTOP to every process of the harness's tree (grader/judge/process_set.h: the
//     group, the descendants, bubblewrap's pid namespace), until all are stopped or `limit`
//     passed; the caller only stops a harness that owes no reply. resume_all(): SIGCONT to that
//     same set. kill() also kills that set (a SIGKILL ends a stopped process), so a harness killed
//     while stopped leaves nothing behind; wait() reaps it as any other.
//   * log(): what the lab printed (stdout then stderr, each cut to its tail), for reports only:
//     it is never parsed.
#pragma once

#include <sys/types.h>

#include <atomic>
#include <chrono>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "grader/judge/process_set.h"
#include "grader/judge/sandbox.h"

namespace labkit {

class HarnessProcess {
 public:
  static constexpr std::size_t kKeepBytes = 16 * 1024;
  struct ChildFd {
    int parent, child;
  };
  struct Ending {
    bool exited = false;
    int exit_code = 0;
    int signal = 0;
    std::string describe() const;  // "exited with code 0" / "was killed by SIGSEGV (segmentation fault)"
  };

  HarnessProcess() = default;
  ~HarnessProcess();
  HarnessProcess(const HarnessProcess&) = delete;
  HarnessProcess& operator=(const HarnessProcess&) = delete;

  // Throws std::runtime_error when the process cannot be created (fork or pipe failure).
  void start(const std::vector<std::string>& argv, const std::vector<ChildFd>& fds, const sandbox::Limits& limits);
  bool running() const { return pid_ > 0 && !reaped_; }
  bool exited_now(Ending& how);  // non-blocking: true (and how) once the child has ended
  void kill();
  Ending wait();
  pid_t pid() const { return pid_; }
  bool killed() const { return killed_; }  // kill() came before the child ended
  std::string log() const;
  process_set::Stop stop_all(std::chrono::milliseconds limit);
  void resume_all();

 private:
  void drain();
  pid_t pid_ = -1;
  bool reaped_ = false;
  bool killed_ = false;
  Ending ending_;
  int out_fd_ = -1, err_fd_ = -1;
  std::thread drainer_;
  std::atomic<bool> stop_{false};
  mutable std::mutex mutex_;
  std::string out_, err_;
  bool out_cut_ = false, err_cut_ = false;
  std::vector<process_set::Process> stopped_;  // of the last stop_all(), until resume_all()
};

}  // namespace labkit
