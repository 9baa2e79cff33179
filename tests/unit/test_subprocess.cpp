// Running labs as child processes (grader/judge/subprocess.h): exit codes, signals, time limits that
// also kill grandchildren and children that ignore SIGTERM, output that is captured exactly or
// truncated without deadlock, children that cannot start, environment, working directory, fds,
// and two runs in parallel threads. Children are /bin/sh scripts.
#include <doctest/doctest.h>

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <thread>

#include "grader/judge/subprocess.h"

namespace sp = labkit::subprocess;
namespace fs = std::filesystem;
using namespace std::chrono_literals;

namespace {

sp::Result sh(const std::string& script, const sp::Options& options = {}) {
  return sp::run({"/bin/sh", "-c", script}, options);
}

// Running and not a zombie: an orphan's zombie waits for init, which here may never reap it.
bool running(pid_t pid) {
  if (::kill(pid, 0) != 0) return false;
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  std::string line;
  std::getline(stat, line);
  const auto paren = line.rfind(')');
  return paren == std::string::npos || paren + 2 >= line.size() || line[paren + 2] != 'Z';
}

// SIGKILL is delivered at once but dying takes a moment; allow it that moment.
bool gone_soon(pid_t pid) {
  for (int i = 0; i < 100 && running(pid); ++i) std::this_thread::sleep_for(10ms);
  return !running(pid);
}

fs::path temp_dir(const std::string& name) {
  const fs::path d = fs::temp_directory_path() / (name + "-" + std::to_string(::getpid()));
  fs::remove_all(d);
  fs::create_directories(d);
  return fs::canonical(d);
}

}  // namespace

TEST_CASE("exit codes and both streams are captured exactly") {
  const auto ok = sh("exit 0");
  CHECK(ok.started);
  CHECK(ok.exit_code == 0);
  CHECK(ok.signal == 0);
  CHECK_FALSE(ok.timed_out);
  CHECK(ok.describe() == "exited with code 0");

  const auto three = sh("printf 'out\\nline 2'; printf 'err\\0x' >&2; exit 3");
  CHECK(three.exit_code == 3);
  CHECK(three.out == "out\nline 2");
  CHECK(three.err == std::string("err\0x", 5));
  CHECK_FALSE(three.truncated);
  CHECK(three.describe() == "exited with code 3");
}

TEST_CASE("a crash is reported by signal name") {
  const auto r = sh("ulimit -c 0; echo before; kill -SEGV $$");
  CHECK(r.started);
  CHECK(r.signal == SIGSEGV);
  CHECK(r.exit_code == -1);
  CHECK(r.out == "before\n");
  CHECK(r.describe() == "killed by SIGSEGV (segmentation fault)");
  CHECK(sh("ulimit -c 0; kill -ABRT $$").describe() == "killed by SIGABRT (aborted)");

  CHECK(sp::signal_name(SIGSEGV) == "SIGSEGV (segmentation fault)");
  CHECK(sp::signal_name(SIGKILL) == "SIGKILL (killed)");
  CHECK(sp::signal_name(SIGFPE) == "SIGFPE (floating point exception)");
  CHECK(sp::signal_name(SIGXCPU) == "SIGXCPU (CPU time limit exceeded)");
  CHECK(sp::signal_name(1000) == "signal 1000");
}

TEST_CASE("a time limit kills the child and its grandchildren") {
  sp::Options o;
  o.timeout = 300ms;
  // The grandchild keeps the output pipe open, so run() must also not wait on it forever.
  const auto r = sh("sleep 30 & echo $!; wait", o);
  CHECK(r.timed_out);
  CHECK(r.signal == SIGTERM);
  CHECK(r.seconds >= 0.29);
  CHECK(r.seconds < 0.3 + 2.0 + 1.0);
  CHECK(r.describe() == "did not finish within 0.3 s and was killed");
  const pid_t grandchild = std::stoi(r.out);
  REQUIRE(grandchild > 0);
  CHECK(gone_soon(grandchild));
}

TEST_CASE("a child that ignores SIGTERM gets SIGKILL after the grace period") {
  sp::Options o;
  o.timeout = 200ms;
  o.grace = 300ms;
  const auto start = std::chrono::steady_clock::now();
  const auto r = sh("trap '' TERM; sleep 30 & echo $!; wait", o);
  const double took = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  CHECK(r.timed_out);
  CHECK(r.signal == SIGKILL);
  CHECK(r.seconds >= 0.49);
  CHECK(took < 0.5 + 1.5);
  CHECK(r.describe() == "did not finish within 0.2 s and was killed (SIGKILL: still running 0.3 s after SIGTERM)");
  CHECK(gone_soon(std::stoi(r.out)));
}

TEST_CASE("what a finished child leaves running in its group is killed") {
  // The grandchild writes nowhere, so nothing but the group kill can end it.
  const auto r = sh("sleep 30 >/dev/null 2>&1 & echo $!");
  CHECK(r.exit_code == 0);
  CHECK(r.seconds < 1.0);
  CHECK(gone_soon(std::stoi(r.out)));
}

TEST_CASE("large output is truncated without deadlock and the child finishes") {
  const auto r = sh("head -c 20000000 /dev/zero; head -c 20000000 /dev/zero >&2; echo done >&2");
  CHECK(r.exit_code == 0);
  CHECK(r.truncated);
  CHECK(r.out.size() == 8u << 20);
  CHECK(r.err.size() == 8u << 20);

  sp::Options small;
  small.max_output_bytes = 5;
  const auto s = sh("echo 0123456789", small);
  CHECK(s.out == "01234");
  CHECK(s.truncated);
  CHECK(s.exit_code == 0);
}

TEST_CASE("a program that cannot start is reported, not run") {
  const auto missing = sp::run({"/nonexistent/labkit-no-such-lab", "x"});
  CHECK_FALSE(missing.started);
  CHECK(missing.error == "No such file or directory");
  CHECK(missing.describe() == "could not start /nonexistent/labkit-no-such-lab: No such file or directory");

  const auto unknown = sp::run({"labkit-no-such-lab-in-path"});
  CHECK_FALSE(unknown.started);
  CHECK(unknown.describe() == "could not start labkit-no-such-lab-in-path: No such file or directory (searched in PATH)");

  const fs::path dir = temp_dir("labkit-subprocess-noexec");
  std::ofstream(dir / "lab") << "#!/bin/sh\nexit 0\n";
  fs::permissions(dir / "lab", fs::perms::owner_read | fs::perms::owner_write);
  const auto noexec = sp::run({(dir / "lab").string()});
  CHECK_FALSE(noexec.started);
  CHECK(noexec.error == "Permission denied");

  sp::Options o;
  o.working_directory = dir / "missing";
  const auto bad_dir = sh("exit 0", o);
  CHECK_FALSE(bad_dir.started);
  CHECK(bad_dir.describe() == "could not start /bin/sh: working directory " + (dir / "missing").string() +
                                  ": No such file or directory");

  CHECK_FALSE(sp::run({}).started);
  fs::remove_all(dir);
}

TEST_CASE("environment, working directory, stdin and fds") {
  ::setenv("LABKIT_SUBPROCESS_KEPT", "kept", 1);
  ::setenv("LABKIT_SUBPROCESS_OVERRIDDEN", "old", 1);
  sp::Options o;
  o.env = {{"LABKIT_SUBPROCESS_NEW", "a b=c"}, {"LABKIT_SUBPROCESS_OVERRIDDEN", "x"},
           {"LABKIT_SUBPROCESS_OVERRIDDEN", "new"}};
  const auto env = sh("echo \"$LABKIT_SUBPROCESS_KEPT|$LABKIT_SUBPROCESS_NEW|$LABKIT_SUBPROCESS_OVERRIDDEN\";"
                      "env | grep -c '^LABKIT_SUBPROCESS_OVERRIDDEN='", o);
  CHECK(env.out == "kept|a b=c|new\n1\n");
  o.env = {{"BAD=NAME", "x"}};
  CHECK_FALSE(sh("exit 0", o).started);

  const fs::path dir = temp_dir("labkit-subprocess-cwd");
  std::ofstream(dir / "lab.sh") << "#!/bin/sh\necho relative\n";
  ::chmod((dir / "lab.sh").c_str(), 0755);
  sp::Options in_dir;
  in_dir.working_directory = dir;
  CHECK(sh("pwd -P", in_dir).out == dir.string() + "\n");
  CHECK(sp::run({"./lab.sh"}, in_dir).out == "relative\n");  // relative to working_directory
  fs::remove_all(dir);

  // stdin is /dev/null: cat sees end of file at once instead of waiting on our terminal.
  CHECK(sh("cat; echo done").out == "done\n");

  // An fd we opened without O_CLOEXEC must still not reach the child.
  const int leaky = ::open("/dev/null", O_RDONLY);
  REQUIRE(leaky > 2);
  const auto fds = sh("[ -e /proc/$$/fd/" + std::to_string(leaky) + " ] && echo leaked || echo closed");
  ::close(leaky);
  CHECK(fds.out == "closed\n");
}

TEST_CASE("seconds are measured and stderr can be echoed") {
  const auto r = sh("sleep 0.2");
  CHECK(r.seconds >= 0.19);
  CHECK(r.seconds < 1.5);

  // Catch our own stderr in a file for the length of the run.
  const fs::path file = temp_dir("labkit-subprocess-echo") / "stderr";
  const int saved = ::dup(STDERR_FILENO);
  const int to = ::open(file.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  REQUIRE(saved >= 0);
  REQUIRE(to >= 0);
  ::dup2(to, STDERR_FILENO);
  sp::Options o;
  o.echo_stderr = true;
  const auto echoed = sh("echo progress >&2; echo result", o);
  ::dup2(saved, STDERR_FILENO);
  ::close(saved);
  ::close(to);
  std::ifstream in(file);
  const std::string seen((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  CHECK(seen == "progress\n");
  CHECK(echoed.err == "progress\n");
  CHECK(echoed.out == "result\n");
  fs::remove_all(file.parent_path());
}

TEST_CASE("two runs in parallel threads do not disturb each other") {
  sp::Result slow, fast;
  double fast_took = 0;
  std::thread a([&] { slow = sh("sleep 0.5; echo slow; exit 4"); });
  std::thread b([&] {
    std::this_thread::sleep_for(50ms);  // start while the slow one is running
    const auto t0 = std::chrono::steady_clock::now();
    fast = sh("echo fast >&2; exit 5");
    fast_took = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  });
  a.join();
  b.join();
  CHECK(slow.out == "slow\n");
  CHECK(slow.exit_code == 4);
  CHECK(fast.err == "fast\n");
  CHECK(fast.exit_code == 5);
  CHECK(fast_took < 0.4);  // it did not wait for the other child's pipes
}

TEST_CASE("no child process or fd outlives a run, whatever its end") {
  const auto open_fds = [] {
    return std::distance(fs::directory_iterator("/proc/self/fd"), fs::directory_iterator{});
  };
  const auto before = open_fds();
  sp::Options quick;
  quick.timeout = 100ms;
  quick.grace = 100ms;
  sh("exit 1", quick);
  sh("ulimit -c 0; kill -SEGV $$", quick);
  sh("trap '' TERM; sleep 30", quick);
  sp::run({"/nonexistent/labkit-no-such-lab"}, quick);
  CHECK(open_fds() == before);
  errno = 0;
  CHECK(::waitpid(-1, nullptr, WNOHANG) == -1);  // not even a zombie is ours
  CHECK(errno == ECHILD);
}

TEST_CASE("a cancel flag stops the child's whole group, as Ctrl-C of the caller should") {
  std::atomic<bool> cancel{false};
  labkit::subprocess::Options o;
  o.cancel = &cancel;
  o.grace = std::chrono::milliseconds(300);
  std::thread trigger([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    cancel = true;
  });
  const auto r = labkit::subprocess::run({"/bin/sh", "-c", "sleep 30 & echo $!; wait"}, o);
  trigger.join();
  CHECK(r.cancelled);
  CHECK(!r.timed_out);
  CHECK(r.seconds < 3);
  CHECK(r.describe() == "was stopped on request (interrupted)");
  const pid_t grandchild = std::stoi(r.out);
  CHECK(gone_soon(grandchild));
}
