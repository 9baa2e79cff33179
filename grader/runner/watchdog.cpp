#include "watchdog.h"

#include <fmt/core.h>
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <cstring>

#include "labkit/phase.h"
#include "labkit/report.h"

namespace labkit::runner {

Watchdog::Watchdog(double seconds, const GradeResult& identity, bool json)
    : identity_(identity), json_(json), thread_([this, seconds] { run(seconds); }) {}

Watchdog::~Watchdog() { disarm(); }

void Watchdog::disarm() {
  {
    std::lock_guard lock(mutex_);
    done_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
}

void Watchdog::run(double seconds) {
  std::unique_lock lock(mutex_);
  if (cv_.wait_for(lock, std::chrono::duration<double>(seconds), [this] { return done_; })) return;
  GradeResult r = identity_;
  r.verdict = verdict::kTimeout;
  r.message = fmt::format("The lab did not return from {} (case {}) within {:g} s and was stopped.",
                          g_phase.load(), g_phase_case.load(), seconds);
  r.hint = verdict::kNeverReturnsHint;
  r.score.max = identity_.score.max;
  r.exit_code = 1;
  const nlohmann::json j = to_json(r);
  const std::string out = json_ ? j.dump(2) + "\n" : format_text(j);
  fmt::print("{}", out);
  std::fflush(stdout);
  _exit(1);
}

namespace {

// Preformatted per signal: the handler may only call async-signal-safe functions.
void write_str(const char* s) {
  if (s) (void)!write(STDERR_FILENO, s, std::strlen(s));
}

void on_crash(int sig) {
  write_str("\nlabkit: the lab crashed: ");
  write_str(sig == SIGSEGV   ? "SIGSEGV (segmentation fault: a bad host pointer, e.g. a device pointer used on the host)"
            : sig == SIGBUS  ? "SIGBUS (bus error)"
            : sig == SIGFPE  ? "SIGFPE (arithmetic error, e.g. an integer division by zero)"
            : sig == SIGILL  ? "SIGILL (illegal instruction)"
                             : "SIGABRT (abort: an assertion or an uncaught exception)");
  write_str(" during ");
  write_str(g_phase.load());
  write_str(" (case ");
  write_str(g_phase_case.load());
  write_str(")\nverdict: crashed\n");
  _exit(1);
}

}  // namespace

void install_crash_handler() {
  static char stack[64 * 1024];
  stack_t ss{};
  ss.ss_sp = stack;
  ss.ss_size = sizeof stack;
  sigaltstack(&ss, nullptr);
  struct sigaction sa{};
  sa.sa_handler = on_crash;
  sa.sa_flags = SA_ONSTACK | SA_RESETHAND;
  sigemptyset(&sa.sa_mask);
  for (int sig : {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT}) sigaction(sig, &sa, nullptr);
}

}  // namespace labkit::runner
