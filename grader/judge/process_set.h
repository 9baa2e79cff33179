// grader/judge/process_set.h — every process a harness started, found and stopped (SIGSTOP) as one, so
// that nothing of the lab runs while the judge times the baseline (grader/judge/session.h, pause()).
//
// Contract
//   * find(root): one snapshot of /proc. A member is `root` itself, every descendant of it (by
//     the parent links of /proc/PID/stat: a process that called setsid or setpgid is still its
//     parent's child), every process of root's process group, and every process whose pid
//     namespace (/proc/PID/ns/pid) is that of a descendant and not the judge's own (bubblewrap's
//     sandbox: an orphan there is reparented to the sandbox's init, but a process the judge
//     cannot look into, e.g. made non-dumpable, is still found by descent). The judge's own
//     process is never a member. Without a sandbox, a process that left root's group AND was
//     reparented outside the tree (double fork + setsid) cannot be found: the sandbox is what
//     makes the set complete.
//   * stop(root, limit): SIGSTOP to every member, then again to any that appeared since, until
//     one snapshot finds no new member and every thread of every member is stopped ('T', or 't'
//     under a tracer) or gone (zombie). Gives up at `limit`: `stopped` false, `why` names the
//     process, its thread and its state (a thread that stays in the kernel, 'D', cannot stop).
//     Members stay stopped either way: the caller resumes or kills them.
//   * signal_all(members, sig): `sig` to each member that is still the same process (its start
//     time in /proc checked through a pidfd where the kernel has them, so a recycled pid is never
//     signalled). SIGCONT resumes a stopped set; SIGKILL ends it, stopped or not.
//   * A stopped process uses no CPU time, so RLIMIT_CPU (grader/judge/sandbox.h) never counts a pause.
//   * Linux only (/proc); errors reading a process that just ended are not errors.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

namespace labkit::process_set {

struct Process {
  pid_t pid = 0;
  std::uint64_t start_ticks = 0;  // /proc/PID/stat field 22: with the pid, one process for good
  bool operator==(const Process&) const = default;
};

std::vector<Process> find(pid_t root);

struct Stop {
  bool stopped = false;
  std::vector<Process> members;  // everything signalled, stopped or not
  int rounds = 0;                // snapshots of /proc taken
  double ms = 0;                 // from the first SIGSTOP to the last check
  std::string why;               // when not stopped
};

Stop stop(pid_t root, std::chrono::milliseconds limit);

void signal_all(const std::vector<Process>& members, int sig);

// Whether every thread of `p` is stopped or gone; `why` names one that is not ("thread 123 in
// state R"). Exposed for the tests.
bool is_stopped(const Process& p, std::string* why = nullptr);

}  // namespace labkit::process_set
