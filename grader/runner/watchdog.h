// watchdog.h — a lab that never returns, or crashes, still gets a verdict.
//
// Watchdog: a thread that waits `seconds`; if the grading has not finished by then (a kernel
// that loops forever, a __syncthreads() some threads never reach, a host loop), it prints a
// "timeout" verdict naming the phase and the case (labkit/phase.h) and ends the process with exit
// code 1; the driver then tears the kernel down with the process.
// Crash handler: SIGSEGV, SIGBUS, SIGFPE, SIGILL and SIGABRT in the lab's host code print one
// line naming the signal, the phase and the case, and end the process with exit code 1. Only
// async-signal-safe calls run in the handler (it writes preformatted strings), on its own stack
// so that a stack overflow is reported too.
#pragma once

#include <condition_variable>
#include <mutex>
#include <thread>

#include "labkit/grade_result.h"

namespace labkit::runner {

class Watchdog {
 public:
  // `identity` is copied now (lab, seed, device fields) so the thread never reads the result the
  // grading thread is writing.
  Watchdog(double seconds, const GradeResult& identity, bool json);
  ~Watchdog();
  Watchdog(const Watchdog&) = delete;
  Watchdog& operator=(const Watchdog&) = delete;
  void disarm();

 private:
  void run(double seconds);
  GradeResult identity_;
  bool json_;
  std::mutex mutex_;
  std::condition_variable cv_;
  bool done_ = false;
  std::thread thread_;
};

void install_crash_handler();

}  // namespace labkit::runner
