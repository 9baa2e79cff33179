#include "grader/judge/harness_process.h"

#include <dirent.h>
#include <fcntl.h>
#include <fmt/core.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <stdexcept>

#include "grader/judge/subprocess.h"

namespace labkit {

std::string HarnessProcess::Ending::describe() const {
  if (exited) return fmt::format("exited with code {}", exit_code);
  return fmt::format("was killed by {}", subprocess::signal_name(signal));
}

HarnessProcess::~HarnessProcess() {
  if (running()) {
    kill();
    wait();
  }
  stop_ = true;  // a writer the lab left outside its group must not keep us here
  if (drainer_.joinable()) drainer_.join();
}

void HarnessProcess::start(const std::vector<std::string>& argv, const std::vector<ChildFd>& fds,
                           const sandbox::Limits& limits) {
  int out[2], err[2];
  if (::pipe2(out, O_CLOEXEC) != 0 || ::pipe2(err, O_CLOEXEC) != 0)
    throw std::runtime_error(std::string("cannot create pipes for the lab: ") + std::strerror(errno));
  // Everything the child needs is built before fork: only async-signal-safe calls after it.
  std::vector<char*> args;
  for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  const std::string exec_failed = "labkit: cannot start " + argv.at(0) + ": ";
  const pid_t pid = ::fork();
  if (pid < 0) throw std::runtime_error(std::string("cannot fork the lab's process: ") + std::strerror(errno));
  if (pid == 0) {
    ::setpgid(0, 0);
    const int null = ::open("/dev/null", O_RDONLY);
    ::dup2(null, 0);
    ::dup2(out[1], 1);
    ::dup2(err[1], 2);
    // Move the channel fds above every target first, so no dup2 overwrites a source.
    int moved[8];
    for (std::size_t i = 0; i < fds.size() && i < 8; ++i) moved[i] = ::fcntl(fds[i].parent, F_DUPFD_CLOEXEC, 64);
    for (std::size_t i = 0; i < fds.size() && i < 8; ++i) ::dup2(moved[i], fds[i].child);  // dup2 clears CLOEXEC
    // Close everything else: the judge's other files (fixtures, its own pipes) never reach the lab.
    for (int fd = 3; fd < 1024; ++fd) {
      bool keep = false;
      for (std::size_t i = 0; i < fds.size(); ++i) keep |= fds[i].child == fd;
      if (!keep) ::close(fd);
    }
    sigset_t none;
    sigemptyset(&none);
    ::sigprocmask(SIG_SETMASK, &none, nullptr);
    sandbox::apply_limits(limits);
    ::execv(args[0], args.data());
    const char* why = std::strerror(errno);
    [[maybe_unused]] ssize_t w = ::write(2, exec_failed.data(), exec_failed.size());
    w = ::write(2, why, std::strlen(why));
    w = ::write(2, "\n", 1);
    ::_exit(127);
  }
  pid_ = pid;
  ::setpgid(pid, pid);  // also here: no race with a kill() right after start
  ::close(out[1]);
  ::close(err[1]);
  out_fd_ = out[0];
  err_fd_ = err[0];
  drainer_ = std::thread([this] { drain(); });
}

void HarnessProcess::drain() {
  auto keep = [this](std::string& s, bool& cut, const char* data, std::size_t n) {
    std::lock_guard lock(mutex_);
    s.append(data, n);
    if (s.size() > kKeepBytes) {
      s.erase(0, s.size() - kKeepBytes);
      cut = true;
    }
  };
  char buffer[4096];
  while ((out_fd_ >= 0 || err_fd_ >= 0) && !stop_) {
    pollfd p[2] = {{out_fd_, POLLIN, 0}, {err_fd_, POLLIN, 0}};
    if (::poll(p, 2, 200) < 0 && errno != EINTR) break;
    for (int k = 0; k < 2; ++k) {
      int& fd = k == 0 ? out_fd_ : err_fd_;
      if (fd < 0 || !(p[k].revents & (POLLIN | POLLHUP | POLLERR))) continue;
      const ssize_t r = ::read(fd, buffer, sizeof buffer);
      if (r > 0) keep(k == 0 ? out_ : err_, k == 0 ? out_cut_ : err_cut_, buffer, std::size_t(r));
      else if (r == 0 || (errno != EINTR && errno != EAGAIN)) {
        ::close(fd);
        fd = -1;
      }
    }
  }
  for (int* fd : {&out_fd_, &err_fd_})
    if (*fd >= 0) {
      ::close(*fd);
      *fd = -1;
    }
}

bool HarnessProcess::exited_now(Ending& how) {
  if (reaped_) {
    how = ending_;
    return true;
  }
  if (pid_ <= 0) return false;
  int status = 0;
  const pid_t r = ::waitpid(pid_, &status, WNOHANG);
  if (r != pid_) return false;
  reaped_ = true;
  ending_.exited = WIFEXITED(status);
  ending_.exit_code = ending_.exited ? WEXITSTATUS(status) : 0;
  ending_.signal = WIFSIGNALED(status) ? WTERMSIG(status) : 0;
  ::kill(-pid_, SIGKILL);  // whatever the lab left in its group goes with it
  how = ending_;
  return true;
}

void HarnessProcess::kill() {
  if (pid_ > 0) ::kill(-pid_, SIGKILL);
  if (pid_ > 0 && !reaped_) {
    killed_ = true;
    ::kill(pid_, SIGKILL);
  }
  // Stopped members outside the group (setsid, without a sandbox whose end would take them).
  process_set::signal_all(stopped_, SIGKILL);
  stopped_.clear();
}

process_set::Stop HarnessProcess::stop_all(std::chrono::milliseconds limit) {
  if (pid_ <= 0 || reaped_) return {true, {}, 0, 0, {}};
  process_set::Stop s = process_set::stop(pid_, limit);
  stopped_ = s.members;
  return s;
}

void HarnessProcess::resume_all() {
  process_set::signal_all(stopped_, SIGCONT);
  stopped_.clear();
}

HarnessProcess::Ending HarnessProcess::wait() {
  if (pid_ <= 0 || reaped_) return ending_;
  int status = 0;
  while (::waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
  }
  reaped_ = true;
  ending_.exited = WIFEXITED(status);
  ending_.exit_code = ending_.exited ? WEXITSTATUS(status) : 0;
  ending_.signal = WIFSIGNALED(status) ? WTERMSIG(status) : 0;
  ::kill(-pid_, SIGKILL);
  // Writers the lab left behind outside its group could hold the pipes: give the drainer 1 s.
  for (int i = 0; i < 10 && (out_fd_ >= 0 || err_fd_ >= 0); ++i) ::usleep(100000);
  return ending_;
}

std::string HarnessProcess::log() const {
  std::lock_guard lock(mutex_);
  std::string s;
  if (!out_.empty()) s += (out_cut_ ? "[stdout, last part]\n" : "[stdout]\n") + out_ + (out_.ends_with('\n') ? "" : "\n");
  if (!err_.empty()) s += (err_cut_ ? "[stderr, last part]\n" : "[stderr]\n") + err_ + (err_.ends_with('\n') ? "" : "\n");
  return s;
}

}  // namespace labkit
