// Helpers of the sandbox tests: the probe shared by all cases, scratch directories, running a
// script inside through labkit::subprocess, and a fork/exec runner for what subprocess::run does
// not do (rlimits between fork and exec, fds above 2).
#pragma once

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iterator>
#include <optional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "grader/judge/sandbox.h"
#include "grader/judge/subprocess.h"

namespace sandbox_test {

namespace fs = std::filesystem;
namespace sb = labkit::sandbox;
namespace sp = labkit::subprocess;

inline const sb::Probe& bwrap() {
  static const sb::Probe p = sb::probe(std::getenv("LABKIT_TEST_BWRAP") != nullptr ? std::getenv("LABKIT_TEST_BWRAP") : "");
  return p;
}

// A fresh directory under the host's /tmp (invisible inside unless exposed as an extra), removed
// when the case ends.
struct Scratch {
  fs::path dir;
  explicit Scratch(const std::string& name) {
    dir = fs::temp_directory_path() / ("labkit-sandbox-" + name + "-" + std::to_string(::getpid()));
    fs::remove_all(dir);
    fs::create_directories(dir);
    dir = fs::canonical(dir);
  }
  ~Scratch() {
    std::error_code ec;
    fs::remove_all(dir, ec);
  }
};

inline void write_file(const fs::path& p, const std::string& text, fs::perms perms = fs::perms::owner_read | fs::perms::owner_write) {
  fs::create_directories(p.parent_path());
  std::ofstream(p) << text;
  fs::permissions(p, perms);
}

// The programs the cases' shell scripts run inside (the allow-list shows nothing else of the
// system): wherever this machine has them.
inline std::vector<fs::path> shell_tools() {
  std::vector<fs::path> found;
  for (const char* tool : {"sh", "bash", "cat", "ls", "grep", "umount", "dd", "stat", "env", "setsid", "sleep", "pgrep",
                           "taskset", "id", "wc", "true", "readlink"})
    for (const char* dir : {"/usr/bin", "/bin", "/usr/sbin", "/sbin"})
      if (fs::exists(fs::path(dir) / tool)) {
        found.push_back(fs::path(dir) / tool);
        break;
      }
  return found;
}

inline sb::Policy default_policy() {
  sb::Policy p;
  p.executable = "/bin/true";
  p.read_only_extra = shell_tools();
  return p;
}

// /bin/sh -c script inside the sandbox, through labkit::subprocess as the judge would run it.
inline sp::Result inside(const std::string& script, const sb::Policy& policy = default_policy(),
                         const sp::Options& options = {}) {
  return sp::run(sb::command(bwrap(), policy, {"/bin/sh", "-c", script}), options);
}

struct Ran {
  int status = -1;  // waitpid's
  std::string out;  // stdout and stderr together
  int exit_code() const { return WIFEXITED(status) ? WEXITSTATUS(status) : -1; }
};

// Forks; in the child: pipes out -> stdout and stderr, `fds` (number in the child, fd here) moved
// to those numbers without CLOEXEC, every other fd closed, `in_child` (e.g. apply_limits), exec.
// Kills it after 60 s; reads its output until it has ended and then at most 1 s more (a process
// that outlives it, which a failing case may leave, must not hold the test up).
inline Ran fork_exec(const std::vector<std::string>& argv, const std::vector<std::pair<int, int>>& fds = {},
                     const std::function<void()>& in_child = {}) {
  int out[2];
  if (::pipe2(out, O_CLOEXEC) != 0) return {};
  std::vector<char*> args;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  const pid_t pid = ::fork();
  if (pid == 0) {
    // Above every target number first, so that moving one never overwrites another.
    std::vector<std::pair<int, int>> moved;
    for (const auto& [target, fd] : fds) moved.emplace_back(target, ::fcntl(fd, F_DUPFD_CLOEXEC, 64));
    ::dup2(out[1], 1);
    ::dup2(out[1], 2);
    for (const auto& [target, fd] : moved) ::dup2(fd, target);
    int top = 2;
    for (const auto& [target, fd] : fds) top = std::max(top, target);
    ::close_range(static_cast<unsigned>(top + 1), ~0u, 0);
    if (in_child) in_child();
    ::execv(args[0], args.data());
    ::_exit(127);
  }
  ::close(out[1]);
  ::fcntl(out[0], F_SETFL, O_NONBLOCK);
  Ran r;
  using Clock = std::chrono::steady_clock;
  const auto kill_at = Clock::now() + std::chrono::seconds(60);
  std::optional<Clock::time_point> ended;
  for (bool open = true; open && (!ended || Clock::now() < *ended + std::chrono::seconds(1));) {
    pollfd p{out[0], POLLIN, 0};
    ::poll(&p, 1, 10);
    char buf[4096];
    ssize_t n;
    while ((n = ::read(out[0], buf, sizeof buf)) > 0) r.out.append(buf, static_cast<std::size_t>(n));
    open = n != 0;
    if (!ended && ::waitpid(pid, &r.status, WNOHANG) == pid) ended = Clock::now();
    if (!ended && Clock::now() > kill_at) ::kill(pid, SIGKILL);
  }
  ::close(out[0]);
  if (!ended) ::waitpid(pid, &r.status, 0);
  return r;
}

// A /proc file, or "" once the process is gone (ifstream would throw on ESRCH mid-read).
inline std::string read_proc(const fs::path& p) {
  std::string text;
  const int fd = ::open(p.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return text;
  char buf[4096];
  for (ssize_t n; (n = ::read(fd, buf, sizeof buf)) > 0;) text.append(buf, static_cast<std::size_t>(n));
  ::close(fd);
  return text;
}

// Pids of live (not zombie) processes whose command line ("arg0\0arg1\0...") starts with `prefix`.
inline std::vector<pid_t> processes_starting(const std::string& prefix) {
  std::vector<pid_t> found;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator("/proc", ec)) {
    const std::string name = e.path().filename().string();
    if (name.find_first_not_of("0123456789") != std::string::npos) continue;
    const std::string line = read_proc(e.path() / "cmdline"), stat = read_proc(e.path() / "stat");
    const auto paren = stat.rfind(')');
    const bool zombie = paren != std::string::npos && paren + 2 < stat.size() && stat[paren + 2] == 'Z';
    if (!zombie && !line.empty() && line.rfind(prefix, 0) == 0) found.push_back(std::stoi(name));
  }
  return found;
}

// The command line prefix of `sleep SECONDS`, unique to this test process.
inline std::string sleep_line(const std::string& seconds) { return std::string("sleep") + '\0' + seconds + '\0'; }

// Kills what a failing case left running: processes whose command line contains `needle`.
inline void kill_leftovers(const std::string& needle) {
  for (const pid_t pid : processes_starting(""))
    if (pid != ::getpid() && read_proc("/proc/" + std::to_string(pid) + "/cmdline").find(needle) != std::string::npos)
      ::kill(pid, SIGKILL);
}

// Death takes a moment after SIGKILL: allow it 2 s.
inline bool gone_soon(const std::string& prefix) {
  for (int i = 0; i < 200 && !processes_starting(prefix).empty(); ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  return processes_starting(prefix).empty();
}

}  // namespace sandbox_test
