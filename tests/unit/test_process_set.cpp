// Stopping every process a harness started (grader/judge/process_set.h), with plain forked processes:
// a child and its grandchild that left the group and the session (setsid), many threads, a tree
// that keeps forking, and one that cannot stop (a parent waiting in vfork for a stopped child).
#include <doctest/doctest.h>

#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "grader/judge/process_set.h"

namespace ps = labkit::process_set;
using namespace std::chrono_literals;

namespace {

char state_of(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  std::string line;
  std::getline(in, line);
  const auto paren = line.rfind(')');
  return paren == std::string::npos || paren + 2 >= line.size() ? '?' : line[paren + 2];
}

bool has(const std::vector<ps::Process>& set, pid_t pid) {
  return std::any_of(set.begin(), set.end(), [pid](const ps::Process& p) { return p.pid == pid; });
}

// The pid the grandchild wrote into `fd`, or -1.
pid_t read_pid(int fd) {
  pid_t pid = -1;
  if (::read(fd, &pid, sizeof pid) != sizeof pid) return -1;
  return pid;
}

[[noreturn]] void spin_forever() {
  for (;;) asm volatile("" ::: "memory");  // busy, and never optimized away
}

// Kills `pids` and reaps what is ours (this test process is a subreaper: orphans come back to it).
void end_all(const std::vector<ps::Process>& set) {
  ps::signal_all(set, SIGKILL);
  for (int i = 0; i < 200; ++i) {
    const pid_t r = ::waitpid(-1, nullptr, WNOHANG);
    if (r < 0) break;  // no children left
    if (r == 0) std::this_thread::sleep_for(5ms);
  }
}

struct Subreaper {
  Subreaper() { ::prctl(PR_SET_CHILD_SUBREAPER, 1); }
};
const Subreaper subreaper;

}  // namespace

TEST_CASE("a child and a grandchild that called setsid are found, stopped and continued") {
  int fds[2];
  REQUIRE(::pipe(fds) == 0);
  const pid_t child = ::fork();
  REQUIRE(child >= 0);
  if (child == 0) {
    ::setpgid(0, 0);  // its own group, as HarnessProcess makes it
    const pid_t grandchild = ::fork();
    if (grandchild == 0) {
      ::setsid();  // leaves the group and the session
      const pid_t me = ::getpid();
      [[maybe_unused]] ssize_t w = ::write(fds[1], &me, sizeof me);
      spin_forever();
    }
    spin_forever();
  }
  ::setpgid(child, child);
  ::close(fds[1]);
  const pid_t grandchild = read_pid(fds[0]);
  ::close(fds[0]);
  REQUIRE(grandchild > 0);

  const std::vector<ps::Process> found = ps::find(child);
  CHECK(has(found, child));
  CHECK(has(found, grandchild));
  CHECK_FALSE(has(found, ::getpid()));

  const ps::Stop s = ps::stop(child, 1000ms);
  CHECK(s.stopped);
  CHECK(s.why.empty());
  CHECK(s.rounds >= 2);
  CHECK(has(s.members, child));
  CHECK(has(s.members, grandchild));
  CHECK(state_of(child) == 'T');
  CHECK(state_of(grandchild) == 'T');
  for (const ps::Process& p : s.members) CHECK(ps::is_stopped(p));

  ps::signal_all(s.members, SIGCONT);
  bool running = false;
  for (int i = 0; i < 200 && !running; ++i) {
    running = state_of(child) != 'T' && state_of(grandchild) != 'T';
    if (!running) std::this_thread::sleep_for(5ms);
  }
  CHECK(running);

  // A SIGKILL ends a stopped process too.
  ps::signal_all(s.members, SIGSTOP);
  end_all(s.members);
  CHECK(::kill(child, 0) != 0);
  CHECK(::kill(grandchild, 0) != 0);
}

TEST_CASE("every thread of a many-threaded process stops") {
  int fds[2];
  REQUIRE(::pipe(fds) == 0);
  const pid_t child = ::fork();
  REQUIRE(child >= 0);
  if (child == 0) {
    for (int i = 0; i < 6; ++i) std::thread(spin_forever).detach();
    const char ready = 1;
    [[maybe_unused]] ssize_t w = ::write(fds[1], &ready, 1);
    spin_forever();
  }
  ::close(fds[1]);
  char ready = 0;
  REQUIRE(::read(fds[0], &ready, 1) == 1);
  ::close(fds[0]);
  const ps::Stop s = ps::stop(child, 1000ms);
  CHECK(s.stopped);
  REQUIRE(s.members.size() == 1);
  std::string why;
  CHECK(ps::is_stopped(s.members[0], &why));
  CHECK(why.empty());
  end_all(s.members);
}

TEST_CASE("a tree that keeps forking is stopped whole") {
  const pid_t child = ::fork();
  REQUIRE(child >= 0);
  if (child == 0) {
    ::setpgid(0, 0);
    // Short-lived children, one after another, some of which leave the group.
    for (int n = 0;; ++n) {
      const pid_t c = ::fork();
      if (c == 0) {
        if (n % 2) ::setsid();
        ::usleep(2000);
        ::_exit(0);
      }
      ::usleep(300);
      while (::waitpid(-1, nullptr, WNOHANG) > 0) {
      }
    }
  }
  ::setpgid(child, child);
  std::this_thread::sleep_for(20ms);
  const ps::Stop s = ps::stop(child, 1000ms);
  CHECK(s.stopped);
  CHECK(has(s.members, child));
  for (const ps::Process& p : ps::find(child)) {
    CHECK(has(s.members, p.pid));  // nothing new while stopped
    CHECK(ps::is_stopped(p));
  }
  ps::signal_all(s.members, SIGCONT);
  end_all(ps::find(child));
  end_all(s.members);
}

TEST_CASE("a process that cannot stop is reported at the limit, not waited for") {
  const pid_t child = ::fork();
  REQUIRE(child >= 0);
  if (child == 0) {
    // vfork: the parent waits, uninterruptibly (state D), until its child execs or exits; a
    // stopped child never does.
    if (::vfork() == 0)
      for (;;) ::pause();
    ::_exit(0);
  }
  std::this_thread::sleep_for(50ms);
  const auto t0 = std::chrono::steady_clock::now();
  const ps::Stop s = ps::stop(child, 200ms);
  const auto took = std::chrono::steady_clock::now() - t0;
  CHECK_FALSE(s.stopped);
  CHECK(s.why.find("state D") != std::string::npos);
  CHECK(took < 2s);
  end_all(s.members);
}

TEST_CASE("a process that has gone is neither found nor signalled") {
  const pid_t child = ::fork();
  REQUIRE(child >= 0);
  if (child == 0) ::_exit(0);
  int status = 0;
  ::waitpid(child, &status, 0);
  CHECK(ps::find(child).empty());
  const ps::Stop s = ps::stop(child, 100ms);
  CHECK(s.stopped);
  CHECK(s.members.empty());
  ps::signal_all({{child, 12345}}, SIGKILL);  // a recycled pid would have another start time
}
