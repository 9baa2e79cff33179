#include "grader/judge/process_set.h"

#include <dirent.h>
#include <fcntl.h>
#include <fmt/core.h>
#include <signal.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <optional>
#include <set>
#include <thread>
#include <unordered_map>

namespace labkit::process_set {
namespace {

using Clock = std::chrono::steady_clock;

struct Stat {
  pid_t pid = 0, ppid = 0, pgrp = 0;
  char state = '?';
  std::uint64_t start = 0;
};

// /proc/.../stat of a process or a thread; nullopt when it is gone (or unreadable).
std::optional<Stat> read_stat(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return std::nullopt;
  char buf[1024];
  const ssize_t n = ::read(fd, buf, sizeof buf - 1);
  ::close(fd);
  if (n <= 0) return std::nullopt;
  buf[n] = '\0';
  // "pid (comm) state ppid pgrp ...": comm may hold spaces and parentheses, so parse after the
  // last ')'.
  const char* close = nullptr;
  for (const char* c = buf; *c; ++c)
    if (*c == ')') close = c;
  if (!close || close[1] != ' ') return std::nullopt;
  Stat s;
  s.pid = static_cast<pid_t>(std::strtol(buf, nullptr, 10));
  const char* p = close + 2;
  s.state = *p;
  // Fields 4 (ppid), 5 (pgrp) and 22 (starttime); `p` is at field 3.
  int field = 3;
  while (*p && field < 22) {
    while (*p && *p != ' ') ++p;
    while (*p == ' ') ++p;
    ++field;
    if (field == 4) s.ppid = static_cast<pid_t>(std::strtol(p, nullptr, 10));
    if (field == 5) s.pgrp = static_cast<pid_t>(std::strtol(p, nullptr, 10));
    if (field == 22) s.start = std::strtoull(p, nullptr, 10);
  }
  if (field != 22) return std::nullopt;
  return s;
}

std::optional<Stat> process_stat(pid_t pid) { return read_stat("/proc/" + std::to_string(pid) + "/stat"); }

// The pid namespace's identity ("pid:[4026531836]"); empty where the judge may not look.
std::string pid_namespace(const std::string& pid) {
  char buf[64];
  const std::string link = "/proc/" + pid + "/ns/pid";
  const ssize_t n = ::readlink(link.c_str(), buf, sizeof buf - 1);
  return n > 0 ? std::string(buf, std::size_t(n)) : std::string();
}

bool is_number(const char* s) {
  if (!*s) return false;
  for (; *s; ++s)
    if (*s < '0' || *s > '9') return false;
  return true;
}

std::vector<Stat> snapshot() {
  std::vector<Stat> all;
  DIR* d = ::opendir("/proc");
  if (!d) return all;
  while (const dirent* e = ::readdir(d)) {
    if (!is_number(e->d_name)) continue;
    if (auto s = read_stat(std::string("/proc/") + e->d_name + "/stat")) all.push_back(*s);
  }
  ::closedir(d);
  return all;
}

bool stopped_state(char c) { return c == 'T' || c == 't' || c == 'Z' || c == 'X'; }

void send(const Process& p, int sig) {
#if defined(SYS_pidfd_open) && defined(SYS_pidfd_send_signal)
  const int fd = static_cast<int>(::syscall(SYS_pidfd_open, p.pid, 0));
  if (fd >= 0) {
    // The pidfd holds the process: once its start time matches, the signal cannot reach another.
    const auto s = process_stat(p.pid);
    if (s && s->start == p.start_ticks) ::syscall(SYS_pidfd_send_signal, fd, sig, nullptr, 0);
    ::close(fd);
    return;
  }
  if (errno != ENOSYS) return;  // gone
#endif
  const auto s = process_stat(p.pid);
  if (s && s->start == p.start_ticks) ::kill(p.pid, sig);
}

}  // namespace

std::vector<Process> find(pid_t root) {
  const std::vector<Stat> all = snapshot();
  std::unordered_map<pid_t, std::vector<std::size_t>> children;
  for (std::size_t i = 0; i < all.size(); ++i) children[all[i].ppid].push_back(i);
  std::vector<bool> member(all.size(), false);
  std::vector<std::size_t> todo;
  auto add = [&](std::size_t i) {
    if (!member[i]) {
      member[i] = true;
      todo.push_back(i);
    }
  };
  auto close_under_descent = [&] {
    while (!todo.empty()) {
      const std::size_t i = todo.back();
      todo.pop_back();
      if (auto it = children.find(all[i].pid); it != children.end())
        for (std::size_t c : it->second) add(c);
    }
  };
  for (std::size_t i = 0; i < all.size(); ++i)
    if (all[i].pid == root || all[i].pgrp == root) add(i);
  close_under_descent();
  // The sandbox's pid namespaces: those of the tree that are not the judge's.
  const std::string own = pid_namespace("self");
  std::set<std::string> sandbox;
  for (std::size_t i = 0; i < all.size(); ++i)
    if (member[i])
      if (std::string ns = pid_namespace(std::to_string(all[i].pid)); !ns.empty() && ns != own) sandbox.insert(ns);
  if (!sandbox.empty()) {
    for (std::size_t i = 0; i < all.size(); ++i)
      if (!member[i] && sandbox.count(pid_namespace(std::to_string(all[i].pid)))) add(i);
    close_under_descent();
  }
  std::vector<Process> out;
  const pid_t self = ::getpid();
  for (std::size_t i = 0; i < all.size(); ++i)
    if (member[i] && all[i].pid != self) out.push_back({all[i].pid, all[i].start});
  return out;
}

bool is_stopped(const Process& p, std::string* why) {
  const auto s = process_stat(p.pid);
  if (!s || s->start != p.start_ticks) return true;  // gone
  const std::string tasks = "/proc/" + std::to_string(p.pid) + "/task";
  DIR* d = ::opendir(tasks.c_str());
  if (!d) return true;
  bool all = true;
  while (const dirent* e = ::readdir(d)) {
    if (!is_number(e->d_name)) continue;
    const auto t = read_stat(tasks + "/" + e->d_name + "/stat");
    if (!t || stopped_state(t->state)) continue;
    all = false;
    if (why) *why = fmt::format("process {}, thread {}, in state {}", p.pid, e->d_name, t->state);
    break;
  }
  ::closedir(d);
  return all;
}

void signal_all(const std::vector<Process>& members, int sig) {
  for (const Process& p : members) send(p, sig);
}

Stop stop(pid_t root, std::chrono::milliseconds limit) {
  Stop r;
  const auto t0 = Clock::now();
  auto elapsed = [&] { return Clock::now() - t0; };
  for (;;) {
    const std::vector<Process> now = find(root);
    ++r.rounds;
    std::vector<Process> fresh;
    for (const Process& p : now)
      if (std::find(r.members.begin(), r.members.end(), p) == r.members.end()) fresh.push_back(p);
    // Done: a snapshot taken while every member was stopped found nobody new. (A stopped process
    // cannot start another, so none can appear after it.)
    if (r.rounds > 1 && fresh.empty()) {
      r.stopped = true;
      break;
    }
    signal_all(fresh, SIGSTOP);
    r.members.insert(r.members.end(), fresh.begin(), fresh.end());
    // Until every thread is stopped; SIGSTOP again to any that runs (a member not yet stopped may
    // have sent SIGCONT to one that was).
    auto pause = std::chrono::microseconds(20);
    for (;;) {
      std::string why;
      const Process* running = nullptr;
      for (const Process& p : r.members)
        if (!is_stopped(p, &why)) {
          running = &p;
          break;
        }
      if (!running) break;
      if (elapsed() >= limit) {
        r.why = why;
        r.ms = std::chrono::duration<double, std::milli>(elapsed()).count();
        return r;
      }
      send(*running, SIGSTOP);
      std::this_thread::sleep_for(pause);
      pause = std::min(pause * 2, std::chrono::microseconds(1000));
    }
    if (elapsed() >= limit) {
      r.why = "new processes kept appearing";
      break;
    }
  }
  r.ms = std::chrono::duration<double, std::milli>(elapsed()).count();
  return r;
}

}  // namespace labkit::process_set
