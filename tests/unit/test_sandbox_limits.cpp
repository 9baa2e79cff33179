// The sandbox's rlimits (read back after apply_limits, then hit inside bwrap), the judge's fds
// 3-5 reaching the harness, an unprivileged judge (user namespaces), CUDA inside on a GPU
// machine, and what needs no bwrap: probe() of a missing or refused bwrap, parse_mode, describe,
// the GPU device nodes and command()'s argv.
#include <doctest/doctest.h>

#include <sys/resource.h>

#include <fmt/core.h>

#include <algorithm>
#include <cstdio>
#include <stdexcept>

#include "sandbox_util.h"

using namespace sandbox_test;

namespace {

bool contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

// A probe as if bwrap were usable, for checking command()'s argv without running it.
sb::Probe fake_probe() {
  sb::Probe p;
  p.available = true;
  p.bwrap = "/usr/bin/bwrap";
  p.version = "bubblewrap 0.8.0";
  return p;
}

std::vector<std::string> limited_command(const std::string& script) {
  return sb::command(bwrap(), default_policy(), {"/bin/sh", "-c", script});
}

}  // namespace

TEST_CASE("apply_limits sets CPU, file size, core, open files and processes, never above the hard limit") {
  int p[2];
  REQUIRE(::pipe(p) == 0);
  const pid_t pid = ::fork();
  if (pid == 0) {
    const rlimit low_nofile{32, 32};
    ::setrlimit(RLIMIT_NOFILE, &low_nofile);  // an inherited hard limit below what is asked
    sb::Limits l;
    l.cpu_seconds = 3.2;
    l.file_bytes = 1u << 20;
    l.processes = 100;
    l.open_files = 4096;
    const int rc = sb::apply_limits(l);
    char buf[512];
    int n = std::snprintf(buf, sizeof buf, "%d", rc);
    for (const int res : {RLIMIT_CPU, RLIMIT_FSIZE, RLIMIT_CORE, RLIMIT_NOFILE, RLIMIT_NPROC, RLIMIT_DATA}) {
      rlimit r{};
      ::getrlimit(res, &r);
      n += std::snprintf(buf + n, sizeof buf - static_cast<std::size_t>(n), " %llu/%llu",
                         static_cast<unsigned long long>(r.rlim_cur), static_cast<unsigned long long>(r.rlim_max));
    }
    (void)!::write(p[1], buf, static_cast<std::size_t>(n));
    ::_exit(0);
  }
  ::close(p[1]);
  char buf[512] = {};
  const ssize_t n = ::read(p[0], buf, sizeof buf - 1);
  ::close(p[0]);
  ::waitpid(pid, nullptr, 0);
  REQUIRE(n > 0);
  rlimit data{};
  ::getrlimit(RLIMIT_DATA, &data);
  const auto ull = [](rlim_t v) { return static_cast<unsigned long long>(v); };
  // CPU rounded up, SIGKILL 2 s after SIGXCPU; NOFILE kept at the inherited 32; DATA untouched (0).
  CHECK(std::string(buf) == fmt::format("0 4/6 1048576/1048576 0/0 32/32 100/100 {}/{}", ull(data.rlim_cur), ull(data.rlim_max)));
}

TEST_SUITE("bwrap") {

TEST_CASE("inside the sandbox: a write past file_bytes fails with EFBIG (or SIGXFSZ), CPU time ends with SIGXCPU") {
  sb::Limits l;
  l.file_bytes = 1u << 20;
  const auto limited = [&] { sb::apply_limits(l); };
  const auto ignored = fork_exec(limited_command("trap '' XFSZ; dd if=/dev/zero of=/tmp/f bs=64k count=64; "
                                                 "echo size=$(stat -c %s /tmp/f)"),
                                 {}, limited);
  INFO(ignored.out);
  CHECK(contains(ignored.out, "File too large"));  // EFBIG
  CHECK(contains(ignored.out, "size=1048576"));
  // Not ignored: the signal kills the writer, and bwrap reports it as 128 + SIGXFSZ.
  const auto killed = fork_exec(limited_command("exec dd if=/dev/zero of=/tmp/f bs=64k count=64"), {}, limited);
  CHECK(killed.exit_code() == 128 + SIGXFSZ);

  l.cpu_seconds = 1;
  const auto spin = fork_exec(limited_command("while :; do :; done"), {}, limited);
  CHECK(spin.exit_code() == 128 + SIGXCPU);
}

TEST_CASE("the judge's fds 3, 4 and 5 reach the harness with their numbers; no others") {
  int to_harness[2], from_harness[2], log[2];
  REQUIRE(::pipe2(to_harness, O_CLOEXEC) == 0);
  REQUIRE(::pipe2(from_harness, O_CLOEXEC) == 0);
  REQUIRE(::pipe2(log, O_CLOEXEC) == 0);
  REQUIRE(::write(to_harness[1], "ping\n", 5) == 5);
  ::close(to_harness[1]);
  // ls straight to stdout: a $(...) or a redirection would have the shell hold an fd of its own.
  const auto r = fork_exec(limited_command("read x <&3; echo got:$x >&4; echo log >&5; echo fds:; ls /proc/$$/fd"),
                           {{3, to_harness[0]}, {4, from_harness[1]}, {5, log[1]}});
  for (const int fd : {to_harness[0], from_harness[1], log[1]}) ::close(fd);
  char buf[64] = {};
  CHECK(::read(from_harness[0], buf, sizeof buf - 1) == 9);
  CHECK(std::string(buf) == "got:ping\n");
  std::fill(std::begin(buf), std::end(buf), 0);
  CHECK(::read(log[0], buf, sizeof buf - 1) == 4);
  CHECK(std::string(buf) == "log\n");
  ::close(from_harness[0]);
  ::close(log[0]);
  INFO(r.out);
  CHECK(r.exit_code() == 0);
  CHECK(r.out.ends_with("fds:\n0\n1\n2\n3\n4\n5\n"));  // bwrap keeps none of its own open for the harness
}

TEST_CASE("an unprivileged judge (nobody, through user namespaces): the sandbox works and RLIMIT_NPROC holds") {
  if (::getuid() != 0 || !fs::exists("/usr/bin/setpriv")) {
    MESSAGE("needs root and setpriv to become nobody: the unprivileged path was not checked");
    return;
  }
  const auto as_nobody = [](const std::vector<std::string>& argv) {
    std::vector<std::string> a{"/usr/bin/setpriv", "--reuid", "65534", "--regid", "65534", "--clear-groups"};
    a.insert(a.end(), argv.begin(), argv.end());
    return a;
  };
  const auto r = fork_exec(as_nobody(limited_command("id -u; ls -A /root 2>/dev/null | wc -l; cat /proc/net/dev | grep -c :")));
  INFO(r.out);
  if (r.exit_code() == 1 && r.out.rfind("bwrap: ", 0) == 0) {
    MESSAGE("user namespaces are refused to unprivileged users here (" << r.out << "): not checked");
    return;
  }
  CHECK(r.exit_code() == 0);
  CHECK(r.out == "65534\n0\n1\n");

  sb::Limits l;
  l.processes = 12;
  const std::string spawn = "i=0; while [ $i -lt 30 ]; do sleep 30 & i=$((i+1)); done; echo all-started";
  const auto limited = fork_exec(as_nobody(limited_command(spawn)), {}, [&] { sb::apply_limits(l); });
  INFO(limited.out);
  CHECK(!contains(limited.out, "all-started"));
  // EAGAIN, seen by the shell's fork, or earlier, by bwrap or setpriv when other processes of
  // nobody (this test run twice at once) already count against the limit.
  CHECK((contains(limited.out, "fork") || contains(limited.out, "Resource temporarily unavailable")));
  l.processes = 1000;  // control: the same with room enough
  const auto roomy = fork_exec(as_nobody(limited_command(spawn)), {}, [&] { sb::apply_limits(l); });
  CHECK(contains(roomy.out, "all-started"));
}

TEST_CASE("GPU: a CUDA program (this test, as the harness, from a hidden directory) runs inside the allow-list") {
  if (sb::gpu_device_nodes("/dev").empty()) {
    MESSAGE("no /dev/nvidia* here: CUDA inside the sandbox was not checked (it is on a GPU machine)");
    return;
  }
  const fs::path self = fs::read_symlink("/proc/self/exe");
  const auto outside = sp::run({self.string(), "--gpu-check"});
  if (outside.exit_code != 0) {
    MESSAGE("CUDA does not work here even outside the sandbox (" << outside.out << outside.err << "): not checked inside");
    return;
  }
  // This process has not initialised CUDA (the checks ran in children): the driver's libraries
  // come from the loader's search for libcuda.so.1 and their companions, not /proc/self/maps.
  sb::Policy policy = default_policy();
  policy.read_only_extra.clear();
  policy.executable = self;
  policy.hide = {self.parent_path()};
  std::string shown;
  for (const auto& p : sb::allow_list(policy)) shown += p.string() + "\n";
  const auto r = sp::run(sb::command(bwrap(), policy, {sb::kInsidePath, "--gpu-check"}));
  INFO(r.out, r.err);
  INFO("the allow-list:\n", shown);
  CHECK(shown.find("/libcuda.so.1\n") != std::string::npos);
  CHECK(r.exit_code == 0);
  CHECK(r.out == outside.out);  // "gpu-ok <name>"
}

}  // TEST_SUITE("bwrap")

TEST_CASE("probe() of a bwrap that is not there says so, naming the path") {
  const auto p = sb::probe("/nonexistent/dir/bwrap");
  CHECK(!p.available);
  CHECK(p.bwrap == "/nonexistent/dir/bwrap");
  CHECK(contains(p.why, "/nonexistent/dir/bwrap"));
  CHECK(sb::describe(sb::Mode::bubblewrap, p) == "bubblewrap (not available: " + p.why + ")");
  CHECK_THROWS_WITH_AS(sb::command(p, default_policy(), {"/bin/true"}),
                       doctest::Contains("not available: bwrap not found at /nonexistent/dir/bwrap"), std::logic_error);
}

TEST_CASE("probe() of a bwrap that is refused namespaces gives bwrap's own reason") {
  Scratch s("fake");
  const std::string refusal =
      "bwrap: No permissions to creates new namespace, likely because the kernel does not allow non-privileged user namespaces.";
  write_file(s.dir / "bwrap",
             "#!/bin/sh\n[ \"$1\" = --version ] && { echo 'bubblewrap 0.8.0'; exit 0; }\necho '" + refusal + "' >&2\nexit 1\n",
             fs::perms::owner_all);
  const auto p = sb::probe(s.dir / "bwrap");
  CHECK(!p.available);
  CHECK(p.version == "bubblewrap 0.8.0");
  CHECK(p.why == refusal);
}

TEST_CASE("parse_mode and describe") {
  CHECK(sb::parse_mode("bubblewrap") == sb::Mode::bubblewrap);
  CHECK(sb::parse_mode("bwrap") == sb::Mode::bubblewrap);
  CHECK(sb::parse_mode("none") == sb::Mode::none);
  for (const char* bad : {"", "firejail", "None"})
    CHECK_THROWS_WITH_AS(sb::parse_mode(bad), doctest::Contains("use bubblewrap (or bwrap), or none"), std::invalid_argument);
  CHECK(sb::describe(sb::Mode::none, fake_probe()) == "none");
  CHECK(sb::describe(sb::Mode::bubblewrap, fake_probe()) == "bubblewrap 0.8.0 (no network, private /tmp, allow-list)");
  CHECK(sb::describe(sb::Mode::bubblewrap, fake_probe(), "", 41) ==
        "bubblewrap 0.8.0 (no network, private /tmp, allow-list: 41 paths)");
}

TEST_CASE("GPU device nodes: the ones CUDA opens, nothing else") {
  Scratch s("dev");
  for (const char* f : {"nvidia0", "nvidia1", "nvidia10", "nvidiactl", "nvidia-uvm", "nvidia-uvm-tools", "nvidia-modeset",
                        "nvidia", "nvidia0x", "nvidia-foo", "nvme0", "nvidia-nvswitchctl"})
    write_file(s.dir / f, "");
  fs::create_directories(s.dir / "nvidia-caps");
  std::vector<fs::path> want;
  for (const char* f : {"nvidia-caps", "nvidia-modeset", "nvidia-uvm", "nvidia-uvm-tools", "nvidia0", "nvidia1", "nvidia10", "nvidiactl"})
    want.push_back(s.dir / f);
  CHECK(sb::gpu_device_nodes(s.dir) == want);

  // The real /dev: each node bound with --dev-bind-try, and nothing else. (Here there are none:
  // that CUDA works inside is checked on a GPU machine.)
  const auto nodes = sb::gpu_device_nodes("/dev");
  const auto argv = sb::command(fake_probe(), default_policy(), {"/bin/true"});
  CHECK(std::count(argv.begin(), argv.end(), "--dev-bind-try") == static_cast<long>(nodes.size()));
  for (const auto& n : nodes) {
    const auto at = std::find(argv.begin(), argv.end(), n.string());
    REQUIRE(at != argv.end());
    CHECK(*(at - 1) == "--dev-bind-try");
    CHECK(*(at + 1) == n.string());
  }
  if (nodes.empty()) MESSAGE("no /dev/nvidia* here: GPU access inside the sandbox is checked on a GPU machine");
}

TEST_CASE("command(): namespaces, no capabilities, the command after --, paths as single arguments, clear errors") {
  Scratch s("argv");
  write_file(s.dir / "with space" / "harness", "", fs::perms::owner_all);
  sb::Policy policy = default_policy();
  policy.executable = s.dir / "with space" / "harness";
  policy.hide = {s.dir / "missing"};
  const auto argv = sb::command(fake_probe(), policy, {sb::kInsidePath, "--x"});
  REQUIRE(argv.size() > 4);
  CHECK(argv[0] == "/usr/bin/bwrap");
  for (const char* opt : {"--die-with-parent", "--unshare-net", "--unshare-pid", "--unshare-ipc", "--unshare-uts",
                          "--new-session", "--clearenv"})
    CHECK(std::count(argv.begin(), argv.end(), opt) == 1);
  const auto cap = std::find(argv.begin(), argv.end(), "--cap-drop");
  REQUIRE(cap != argv.end());
  CHECK(*(cap + 1) == "ALL");
  const auto dashes = std::find(argv.begin(), argv.end(), "--");
  CHECK(std::vector<std::string>(dashes + 1, argv.end()) == std::vector<std::string>{sb::kInsidePath, "--x"});
  const auto exe = std::find(argv.begin(), argv.end(), (s.dir / "with space" / "harness").string());
  REQUIRE(exe != argv.end());
  CHECK(*(exe + 1) == sb::kInsidePath);
  CHECK(std::find(argv.begin(), argv.end(), (s.dir / "missing").string()) == argv.end());

  CHECK_THROWS_WITH_AS(sb::command(fake_probe(), policy, {}), doctest::Contains("empty command line"), std::invalid_argument);
  policy.hide = {"/"};
  CHECK_THROWS_WITH_AS(sb::command(fake_probe(), policy, {"/bin/true"}), doctest::Contains("cannot hide /"),
                       std::invalid_argument);
  policy.hide.clear();
  policy.executable = s.dir / "no-harness";
  CHECK_THROWS_WITH_AS(sb::command(fake_probe(), policy, {"/bin/true"}),
                       doctest::Contains(((s.dir / "no-harness").string() + "\" is not an existing file").c_str()), std::invalid_argument);
}
