// grader/judge/cpu_partition.h — which CPUs the lab's harness may run on, and which stay for the kit's
// own harness (the baseline) and the judge.
//
// Why: the kit's baseline harness and the lab's harness are alive at the same time (Layer Time,
// the clean/beside interference check), taking turns on the GPU. A lab that spins host threads
// on every CPU between its own calls would deschedule the baseline's thread inside its timed
// region (between its start event and its launch, or in its copies) and make the lab look
// faster. Disjoint CPU sets take that away; the sandbox's seccomp filter (grader/judge/sandbox.h,
// Policy::lock_cpus) keeps the lab from widening its set again.
//
// Contract
//   * split() divides the CPUs this process may run on (sched_getaffinity) by physical core:
//     SMT siblings (topology/thread_siblings_list) always go to the same side, so a spinning
//     sibling never shares a core with the baseline. The first half of the cores (rounded
//     down) goes to the kit, the rest to the lab. Fewer than 4 CPUs or fewer than 2 cores: no
//     split (both sides get every CPU) and `why` says so.
//   * split_cores() is the pure part, for tests: cores are lists of CPU ids.
//   * The environment variable LABKIT_CPU_PARTITION=0 turns the split off (for measuring what
//     it is worth; `why` names the variable).
//   * describe(): "lab on CPUs 8-15, kit on 0-7", or "lab and kit share CPUs 0-1 (why)".
//   * PinThread: the calling thread (the judge's, which times the Op Time baseline itself) on
//     the given CPUs while it lives, its earlier set restored after; threads it starts meanwhile
//     inherit the set. Nothing happens for an empty list or where the kernel refuses.
#pragma once

#include <sched.h>

#include <string>
#include <vector>

namespace labkit {

struct CpuPartition {
  std::vector<int> kit, lab;  // sorted CPU ids; equal when not split
  bool split = false;
  std::string why;            // when not split
  std::string describe() const;
};

CpuPartition split_cores(std::vector<std::vector<int>> cores);
CpuPartition split_cpus();

// "0-3,8,10-11"
std::string cpu_list(const std::vector<int>& cpus);

class PinThread {
 public:
  explicit PinThread(const std::vector<int>& cpus);
  ~PinThread();
  PinThread(const PinThread&) = delete;
  PinThread& operator=(const PinThread&) = delete;

 private:
  cpu_set_t old_;
  bool pinned_ = false;
};

}  // namespace labkit
