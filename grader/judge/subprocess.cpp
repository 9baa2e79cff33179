#include "grader/judge/subprocess.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fmt/core.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <optional>
#include <system_error>

extern char** environ;

// glibc says by version what it has (addchdir_np 2.29, sigdescr_np 2.32, addclosefrom_np 2.34);
// elsewhere the fallbacks below are used.
#if defined(__GLIBC_PREREQ)
#define LABKIT_GLIBC(major, minor) __GLIBC_PREREQ(major, minor)
#else
#define LABKIT_GLIBC(major, minor) 0
#endif

namespace labkit::subprocess {
namespace {

using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;
// After the child ends: how long writers that escaped its group may keep the pipes open.
constexpr milliseconds kDrainAfterExit{1000};
// Without a pidfd nothing wakes poll() when the child ends, so we look this often.
constexpr milliseconds kExitPoll{10};

std::string errno_text(int e) { return std::generic_category().message(e); }
[[noreturn]] void throw_errno(const char* what) { throw std::system_error(errno, std::generic_category(), what); }

template <class F>
struct OnExit {
  F f;
  ~OnExit() { f(); }
};
template <class F>
OnExit(F) -> OnExit<F>;

class Fd {
 public:
  explicit Fd(int fd = -1) : fd_(fd) {}
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  ~Fd() { reset(); }
  int get() const { return fd_; }
  bool open() const { return fd_ >= 0; }
  void reset(int fd = -1) {
    if (fd_ >= 0) ::close(fd_);  // not retried on EINTR: on Linux the fd is gone either way
    fd_ = fd;
  }

 private:
  int fd_;
};

// Both ends close-on-exec and numbered above 2: posix_spawn's dup2 onto 1 or 2 clears CLOEXEC
// only when the numbers differ, and a caller whose std fds are closed gets low numbers. The
// read end is non-blocking so that a spurious wake-up can never stall the loop.
void make_pipe(Fd& read_end, Fd& write_end) {
  int p[2];
  if (::pipe2(p, O_CLOEXEC) != 0) throw_errno("cannot create a pipe");
  read_end.reset(p[0]);
  write_end.reset(p[1]);
  for (Fd* f : {&read_end, &write_end}) {
    if (f->get() > 2) continue;
    const int moved = ::fcntl(f->get(), F_DUPFD_CLOEXEC, 3);
    if (moved < 0) throw_errno("cannot move a pipe above fd 2");
    f->reset(moved);
  }
  if (::fcntl(read_end.get(), F_SETFL, O_NONBLOCK) != 0) throw_errno("cannot make a pipe non-blocking");
}

// Our environment with Options::env laid over it (the last of a repeated name wins).
std::optional<std::string> build_env(const Options& o, std::vector<std::string>& out) {
  const auto named = [](std::string_view name) { return [name](const auto& kv) { return kv.first == name; }; };
  for (char** e = environ; e != nullptr && *e != nullptr; ++e) {
    const std::string_view kv(*e);
    if (std::none_of(o.env.begin(), o.env.end(), named(kv.substr(0, kv.find('='))))) out.emplace_back(kv);
  }
  for (auto it = o.env.begin(); it != o.env.end(); ++it) {
    if (it->first.empty() || it->first.find('=') != std::string::npos)
      return fmt::format("bad environment variable name \"{}\"", it->first);
    if (std::none_of(it + 1, o.env.end(), named(it->first))) out.push_back(it->first + "=" + it->second);
  }
  return std::nullopt;
}

// Checked before the spawn so that a bad directory is not reported as a missing program.
std::optional<std::string> check_directory(const std::filesystem::path& dir) {
#if !LABKIT_GLIBC(2, 29)
  return "a working directory needs posix_spawn_file_actions_addchdir_np (glibc >= 2.29)";
#endif
  struct stat st {};
  if (::stat(dir.c_str(), &st) != 0) return fmt::format("working directory {}: {}", dir.string(), errno_text(errno));
  if (!S_ISDIR(st.st_mode)) return fmt::format("working directory {}: not a directory", dir.string());
  return std::nullopt;
}

// Starts the child as the leader of a new process group; returns the error number on failure.
int spawn(const std::vector<std::string>& argv, std::vector<std::string>& env, const Options& o,
          const Fd& out_w, const Fd& err_w, pid_t& pid) {
  posix_spawn_file_actions_t fa;
  posix_spawnattr_t attr;
  ::posix_spawn_file_actions_init(&fa);
  ::posix_spawnattr_init(&attr);
  OnExit destroy{[&] {
    ::posix_spawn_file_actions_destroy(&fa);
    ::posix_spawnattr_destroy(&attr);
  }};
  ::posix_spawn_file_actions_addopen(&fa, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
  ::posix_spawn_file_actions_adddup2(&fa, out_w.get(), STDOUT_FILENO);
  ::posix_spawn_file_actions_adddup2(&fa, err_w.get(), STDERR_FILENO);
  // The extra fds first (dup2 clears CLOEXEC), then every other fd above 2 closed: those a
  // library opened without CLOEXEC.
  int top = 2;
  for (const auto& [from, to] : o.fds) {
    ::posix_spawn_file_actions_adddup2(&fa, from, to);
    top = std::max(top, to);
  }
  for (int fd = 3; fd < top; ++fd)
    if (std::none_of(o.fds.begin(), o.fds.end(), [&](const auto& f) { return f.second == fd; }))
      ::posix_spawn_file_actions_addclose(&fa, fd);
#if LABKIT_GLIBC(2, 34)
  ::posix_spawn_file_actions_addclosefrom_np(&fa, top + 1);
#endif
#if LABKIT_GLIBC(2, 29)
  if (!o.working_directory.empty()) ::posix_spawn_file_actions_addchdir_np(&fa, o.working_directory.c_str());
#endif
  // A caller that blocks or ignores signals (a signal thread, SIGPIPE) must not pass that on.
  sigset_t none, all;
  sigemptyset(&none);
  sigfillset(&all);
  sigdelset(&all, SIGKILL);
  sigdelset(&all, SIGSTOP);
  ::posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
  ::posix_spawnattr_setpgroup(&attr, 0);
  ::posix_spawnattr_setsigmask(&attr, &none);
  ::posix_spawnattr_setsigdefault(&attr, &all);

  std::vector<char*> args, envp;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  for (auto& e : env) envp.push_back(e.data());
  args.push_back(nullptr);
  envp.push_back(nullptr);
  return ::posix_spawnp(&pid, argv[0].c_str(), &fa, &attr, args.data(), envp.data());
}

// Has the child ended? It stays a zombie (WNOWAIT) so that its pid, and with it the process
// group id, cannot be reused while we may still signal the group.
bool has_ended(pid_t pid) {
  siginfo_t info{};
  while (::waitid(P_PID, static_cast<id_t>(pid), &info, WEXITED | WNOHANG | WNOWAIT) != 0)
    if (errno != EINTR) return true;  // ECHILD: reaped elsewhere
  return info.si_pid == pid;
}

// nullopt when something else already reaped it (waitpid(-1), SIGCHLD ignored).
std::optional<int> reap(pid_t pid) {
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0)
    if (errno != EINTR) return std::nullopt;
  return status;
}

void write_all(int fd, const char* data, std::size_t n) {
  while (n > 0) {
    const ssize_t w = ::write(fd, data, n);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) return;  // echoing is best effort; the captured copy is what counts
    data += w;
    n -= static_cast<std::size_t>(w);
  }
}

struct Stream {
  Fd fd;
  std::string* dest = nullptr;
  bool echo = false;

  void read_some(std::size_t cap, bool& truncated) {
    char buf[1 << 16];
    const ssize_t n = ::read(fd.get(), buf, sizeof buf);
    if (n < 0 && (errno == EINTR || errno == EAGAIN)) return;
    if (n <= 0) return fd.reset();  // EOF, or an error a retry would not cure
    const auto got = static_cast<std::size_t>(n);
    if (echo) write_all(STDERR_FILENO, buf, got);
    const std::size_t keep = std::min(got, cap - std::min(cap, dest->size()));
    dest->append(buf, keep);
    truncated = truncated || keep < got;
  }
};

int open_pidfd(pid_t pid) {
#ifdef SYS_pidfd_open
  return static_cast<int>(::syscall(SYS_pidfd_open, pid, 0));  // born close-on-exec
#else
  return (void)pid, -1;
#endif
}

// Reads both pipes until the child has ended and every writer has let go, enforcing the time
// limit on the way; the child is left unreaped.
void supervise(pid_t pid, Clock::time_point start, const Options& o, Stream& out, Stream& err, Result& r) {
  const Fd pidfd(open_pidfd(pid));
  std::optional<Clock::time_point> deadline, kill_at, drain_until;
  if (o.timeout.count() > 0) deadline = start + o.timeout;
  for (bool ended = false;;) {
    const auto now = Clock::now();
    if (!ended && has_ended(pid)) {
      ended = true;
      r.seconds = std::chrono::duration<double>(now - start).count();
      ::kill(-pid, SIGKILL);  // whatever it left running in its group
      deadline.reset();
      kill_at.reset();
      drain_until = now + kDrainAfterExit;
    }
    if (ended && ((!out.fd.open() && !err.fd.open()) || now >= *drain_until)) return;
    if (!ended && !r.cancelled && o.cancel && o.cancel->load()) {
      r.cancelled = true;
      ::kill(-pid, SIGTERM);
      kill_at = now + o.grace;
      deadline.reset();
    }
    if (deadline && now >= *deadline) {
      r.timed_out = true;
      ::kill(-pid, SIGTERM);
      kill_at = now + o.grace;
      deadline.reset();
    }
    if (kill_at && now >= *kill_at) {
      ::kill(-pid, SIGKILL);
      kill_at.reset();
    }

    milliseconds wait = !ended && !pidfd.open() ? kExitPoll : milliseconds{1 << 30};
    // A signal may land just before poll() starts; look at the cancel flag often enough anyway.
    if (o.cancel && !r.cancelled) wait = std::min(wait, milliseconds{100});
    for (const auto& t : {deadline, kill_at, drain_until})
      if (t) wait = std::min(wait, std::chrono::ceil<milliseconds>(std::max(*t - now, Clock::duration{})));

    pollfd fds[3];
    nfds_t n = 0;
    for (const Stream* s : {&out, &err})
      if (s->fd.open()) fds[n++] = {s->fd.get(), POLLIN, 0};
    if (!ended && pidfd.open()) fds[n++] = {pidfd.get(), POLLIN, 0};
    if (::poll(fds, n, static_cast<int>(wait.count())) < 0) {
      if (errno == EINTR) continue;
      throw_errno("poll on the child's pipes");
    }
    for (nfds_t i = 0; i < n; ++i)
      for (Stream* s : {&out, &err})
        if (fds[i].revents != 0 && s->fd.open() && fds[i].fd == s->fd.get())
          s->read_some(o.max_output_bytes, r.truncated);
  }
}

#if LABKIT_GLIBC(2, 32)
// "Segmentation fault" -> "segmentation fault", but "CPU time limit exceeded" stays.
std::string lower_first(std::string s) {
  const auto upper = [&](std::size_t i) { return std::isupper(static_cast<unsigned char>(s[i])) != 0; };
  if (s.size() > 1 && upper(0) && !upper(1)) s[0] = static_cast<char>(s[0] - 'A' + 'a');
  return s;
}
#endif

std::string seconds_text(milliseconds ms) { return fmt::format("{:g}", ms.count() / 1000.0); }

}  // namespace

Result run(const std::vector<std::string>& argv, const Options& o) {
  Result r;
  r.timeout = o.timeout;
  r.grace = o.grace;
  if (argv.empty() || argv[0].empty()) {
    r.error = "empty command line";
    return r;
  }
  r.program = argv[0];
  std::vector<std::string> env;
  std::optional<std::string> bad = build_env(o, env);
  if (!bad && !o.working_directory.empty()) bad = check_directory(o.working_directory);
  if (bad) {
    r.error = *bad;
    return r;
  }
  Stream out{Fd(), &r.out, false}, err{Fd(), &r.err, o.echo_stderr};
  Fd out_w, err_w;
  try {
    make_pipe(out.fd, out_w);
    make_pipe(err.fd, err_w);
  } catch (const std::system_error& e) {
    r.error = e.what();
    return r;
  }

  const auto start = Clock::now();
  pid_t pid = -1;
  if (const int rc = spawn(argv, env, o, out_w, err_w, pid); rc != 0) {
    r.error = errno_text(rc);
    if (rc == ENOENT && argv[0].find('/') == std::string::npos) r.error += " (searched in PATH)";
    return r;
  }
  // Should anything below throw, the group dies and the child is reaped before we leave.
  OnExit cleanup{[&] {
    if (pid <= 0) return;
    ::kill(-pid, SIGKILL);
    reap(pid);
  }};
  r.started = true;
  ::setpgid(pid, pid);  // in case a posix_spawn returns before the child has joined its group
  out_w.reset();        // only the child may hold the write ends, or EOF would never come
  err_w.reset();
  supervise(pid, start, o, out, err, r);

  const auto status = reap(std::exchange(pid, -1));
  if (!status) {
    r.error = "its exit status was lost: something else in this process reaped it";
  } else if (WIFEXITED(*status)) {
    r.exit_code = WEXITSTATUS(*status);
  } else if (WIFSIGNALED(*status)) {
    r.signal = WTERMSIG(*status);
#ifdef WCOREDUMP
    r.core_dumped = WCOREDUMP(*status);
#endif
  }
  return r;
}

std::string signal_name(int sig) {
#if LABKIT_GLIBC(2, 32)
  const char* abbrev = ::sigabbrev_np(sig);
  const char* descr = ::sigdescr_np(sig);
  if (abbrev != nullptr && descr != nullptr) return fmt::format("SIG{} ({})", abbrev, lower_first(descr));
#endif
  // The signals a lab can die of, worded as glibc words them.
  static constexpr struct {
    int sig;
    const char *name, *what;
  } kTable[] = {
      {SIGHUP, "SIGHUP", "hangup"}, {SIGINT, "SIGINT", "interrupt"}, {SIGQUIT, "SIGQUIT", "quit"},
      {SIGILL, "SIGILL", "illegal instruction"}, {SIGTRAP, "SIGTRAP", "trace/breakpoint trap"},
      {SIGABRT, "SIGABRT", "aborted"}, {SIGBUS, "SIGBUS", "bus error"},
      {SIGFPE, "SIGFPE", "floating point exception"}, {SIGKILL, "SIGKILL", "killed"},
      {SIGUSR1, "SIGUSR1", "user defined signal 1"}, {SIGSEGV, "SIGSEGV", "segmentation fault"},
      {SIGUSR2, "SIGUSR2", "user defined signal 2"}, {SIGPIPE, "SIGPIPE", "broken pipe"},
      {SIGALRM, "SIGALRM", "alarm clock"}, {SIGTERM, "SIGTERM", "terminated"},
      {SIGXCPU, "SIGXCPU", "CPU time limit exceeded"}, {SIGXFSZ, "SIGXFSZ", "file size limit exceeded"},
      {SIGSYS, "SIGSYS", "bad system call"},
  };
  for (const auto& e : kTable)
    if (e.sig == sig) return fmt::format("{} ({})", e.name, e.what);
  return fmt::format("signal {}", sig);
}

std::string Result::describe() const {
  if (!started) return fmt::format("could not start {}: {}", program.empty() ? "(nothing)" : program, error);
  if (cancelled) return "was stopped on request (interrupted)";
  if (timed_out) {
    const std::string how =
        signal == SIGKILL ? fmt::format(" (SIGKILL: still running {} s after SIGTERM)", seconds_text(grace)) : "";
    return fmt::format("did not finish within {} s and was killed{}", seconds_text(timeout), how);
  }
  if (signal != 0) return fmt::format("killed by {}{}", signal_name(signal), core_dumped ? " (core dumped)" : "");
  if (exit_code < 0) return fmt::format("ended, but {}", error);
  return fmt::format("exited with code {}", exit_code);
}

}  // namespace labkit::subprocess
