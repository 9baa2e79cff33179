// What the harness sees inside the bubblewrap sandbox (grader/judge/sandbox.h), through a real bwrap:
// no network, hidden paths empty, a read-only system with a bounded private /tmp, the
// executable at /labkit/harness, no process outliving it, a clean environment. Each property is
// checked against a control outside the sandbox where the control is what makes the check mean
// something (a port that does answer, a process that does escape).
#include <doctest/doctest.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/prctl.h>
#include <sys/socket.h>

#include <fmt/core.h>

#include <cstdlib>
#include <set>
#include <sstream>

#include "sandbox_util.h"

using namespace sandbox_test;

namespace {

bool contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

// Interface names of /proc/net/dev ("  lo: 0 0 ...").
std::set<std::string> interfaces(const std::string& proc_net_dev) {
  std::set<std::string> names;
  std::istringstream in(proc_net_dev);
  for (std::string line; std::getline(in, line);) {
    const auto colon = line.find(':');
    const auto start = line.find_first_not_of(' ');
    if (colon != std::string::npos && line.find('|') == std::string::npos) names.insert(line.substr(start, colon - start));
  }
  return names;
}

// A policy whose `exposed` directory (under the host's /tmp, which is never visible inside by
// itself) stands for a visible part of the host such as the kit's checkout.
sb::Policy exposing(const fs::path& exposed) {
  sb::Policy p = default_policy();
  p.read_only_extra.push_back(exposed);
  return p;
}

}  // namespace

TEST_SUITE("bwrap") {

TEST_CASE("no network: only lo inside, and a port listening on the host's 127.0.0.1 is not reached") {
  const int listener = ::socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  REQUIRE(listener >= 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof addr;
  REQUIRE(::bind(listener, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0);
  REQUIRE(::listen(listener, 4) == 0);
  REQUIRE(::getsockname(listener, reinterpret_cast<sockaddr*>(&addr), &len) == 0);
  const std::string connect =
      fmt::format("if (exec 3<>/dev/tcp/127.0.0.1/{}) 2>/dev/null; then echo CONNECTED; else echo REFUSED; fi",
                  ntohs(addr.sin_port));

  // Control: the same connect from outside does reach the listener.
  const auto outside = sp::run({"/bin/bash", "-c", connect});
  REQUIRE(outside.out == "CONNECTED\n");
  const int accepted = ::accept(listener, nullptr, nullptr);
  CHECK(accepted >= 0);
  ::close(accepted);

  const auto r = sp::run(sb::command(bwrap(), default_policy(), {"/bin/bash", "-c", "cat /proc/net/dev; " + connect}));
  CHECK(r.exit_code == 0);
  CHECK(interfaces(r.out) == std::set<std::string>{"lo"});
  CHECK(contains(r.out, "REFUSED"));
  CHECK(::accept(listener, nullptr, nullptr) < 0);  // the listener saw nothing
  ::close(listener);
}

TEST_CASE("hidden paths are empty (a hidden file reads empty); /home and /root are empty; no capabilities") {
  Scratch s("hide");
  const fs::path e = s.dir / "exposed", kit = e / "kit dir";
  write_file(e / "visible.txt", "visible");
  write_file(kit / "secret.npy", "secret");
  write_file(e / "expected.npy", "expected");
  sb::Policy policy = exposing(e);
  // relative, with a space, and one that does not exist (skipped)
  policy.hide = {fs::relative(kit), e / "expected.npy", e / "no such dir"};
  const std::string script = fmt::format(
      "echo kit:[$(ls -A '{0}')]; cat '{0}/secret.npy' 2>/dev/null || echo secret-unreadable;"
      "echo expected:[$(cat '{1}/expected.npy')]; echo visible:[$(cat '{1}/visible.txt')];"
      "echo home:[$(ls -A /home)] root:[$(ls -A /root)]; grep CapEff /proc/self/status;"
      "umount '{0}' 2>/dev/null && echo UNMOUNTED; echo kit-after-umount:[$(ls -A '{0}')]",
      kit.string(), e.string());
  const auto r = inside(script, policy);
  INFO(r.out, r.err);
  CHECK(r.exit_code == 0);
  CHECK(contains(r.out, "kit:[]"));
  CHECK(contains(r.out, "secret-unreadable"));
  CHECK(contains(r.out, "expected:[]"));
  CHECK(contains(r.out, "visible:[visible]"));  // control: not hidden, readable
  CHECK(contains(r.out, "home:[] root:[]"));
  CHECK(contains(r.out, "CapEff:\t0000000000000000"));
  CHECK(!contains(r.out, "UNMOUNTED"));
  CHECK(contains(r.out, "kit-after-umount:[]"));

  // The kit's own checkout, hidden as the judge hides it.
  if (const char* src = std::getenv("LABKIT_SOURCE_DIR"); src != nullptr && fs::exists(fs::path(src) / "meson.build")) {
    sb::Policy kit_hidden = default_policy();
    kit_hidden.hide = {src};
    const auto k = inside(fmt::format("echo src:[$(ls -A '{0}')]; cat '{0}/meson.build' >/dev/null 2>&1 || echo unreadable", src),
                          kit_hidden);
    CHECK(contains(k.out, "src:[]"));
    CHECK(contains(k.out, "unreadable"));
  } else {
    MESSAGE("LABKIT_SOURCE_DIR not set (run through meson): the kit checkout's hiding was not checked");
  }
}

TEST_CASE("an extra under a hidden directory shows through; the rest of that directory stays hidden") {
  Scratch s("extra");
  const fs::path e = s.dir / "exposed", cuda = e / "cuda";
  write_file(cuda / "lib64" / "libcupti.so", "lib");
  write_file(cuda / "bin" / "nvcc", "nvcc");
  sb::Policy policy = exposing(e);
  policy.hide = {cuda};
  policy.read_only_extra.push_back(cuda / "lib64");
  const auto r = inside(fmt::format("echo cuda:[$(ls -A '{0}')] lib:[$(cat '{0}/lib64/libcupti.so')];"
                                    "cat '{0}/bin/nvcc' 2>/dev/null || echo nvcc-hidden",
                                    cuda.string()),
                        policy);
  INFO(r.out, r.err);
  CHECK(contains(r.out, "cuda:[lib64] lib:[lib]"));
  CHECK(contains(r.out, "nvcc-hidden"));
}

TEST_CASE("read-only everywhere but /tmp and /dev/shm, which start empty and stop at tmp_bytes") {
  Scratch s("ro");
  const fs::path e = s.dir / "exposed";
  fs::create_directories(e / "kit");
  sb::Policy policy = exposing(e);
  policy.hide = {e / "kit"};
  policy.tmp_bytes = 4u << 20;
  const std::string fill = fmt::format("labkit-sandbox-fill-{}", ::getpid());
  const std::string script = fmt::format(
      "try() {{ if (: > \"$1\") 2>/dev/null; then echo \"$2:writable\"; else echo \"$2:refused\"; fi; }};"
      "echo shm:[$(ls -A /dev/shm)];"
      "try /labkit/harness exe; try '{0}/kit/new' hidden; try /new root; try /usr/new usr; try '{0}/new' extra;"
      "try /dev/new dev; try /tmp/new tmp; try /dev/shm/new shm;"
      "dd if=/dev/zero of=/tmp/{1} bs=64k count=1000 2>/dev/null; echo tmp-fill:$(stat -c %s /tmp/{1});"
      "dd if=/dev/zero of=/dev/shm/{1} bs=64k count=1000 2>/dev/null; echo shm-fill:$(stat -c %s /dev/shm/{1});"
      "echo hi > /dev/null && echo dev-null-ok",
      e.string(), fill);
  const auto r = inside(script, policy);
  INFO(r.out, r.err);
  CHECK(contains(r.out, "shm:[]"));
  // (Not with `policy`: its extra, under the host's /tmp, shows in the private one.)
  CHECK(inside("echo tmp:[$(ls -A /tmp)]").out == "tmp:[]\n");
  for (const char* where : {"exe", "hidden", "root", "usr", "extra", "dev"}) CHECK(contains(r.out, fmt::format("{}:refused", where)));
  CHECK(contains(r.out, "tmp:writable"));
  CHECK(contains(r.out, "shm:writable"));
  CHECK(contains(r.out, "dev-null-ok"));
  for (const char* key : {"tmp-fill:", "shm-fill:"}) {
    const auto at = r.out.find(key);
    REQUIRE(at != std::string::npos);
    const long bytes = std::stol(r.out.substr(at + std::string(key).size()));
    CHECK(bytes <= 4l << 20);  // the tmpfs is full ...
    CHECK(bytes >= 3l << 20);  // ... after most of it was written
  }
  CHECK(!fs::exists(fs::temp_directory_path() / fill));  // nothing in the host's /tmp
  CHECK(!fs::exists(fs::path("/dev/shm") / fill));
}

TEST_CASE("assume() finds the bwrap probe() found and runs nothing; a command from it runs as one from probe()") {
  const sb::Probe assumed = sb::assume(bwrap().bwrap);
  CHECK(assumed.available);
  CHECK(assumed.bwrap == bwrap().bwrap);
  CHECK(assumed.version.empty());  // nothing ran
  CHECK_FALSE(assumed.seccomp);
  Scratch s("assume");
  write_file(s.dir / "hello.sh", "#!/bin/sh\necho hello\n", fs::perms::owner_all);
  sb::Policy policy = exposing(s.dir);
  policy.executable = s.dir / "hello.sh";
  const auto r = sp::run(sb::command(assumed, policy, {sb::kInsidePath}));
  INFO(r.err);
  CHECK(r.exit_code == 0);
  CHECK(r.out == "hello\n");
  // A bwrap that is not there: not available, and why says where it looked.
  const sb::Probe missing = sb::assume(s.dir / "no-bwrap");
  CHECK_FALSE(missing.available);
  CHECK(contains(missing.why, "no-bwrap"));
}

TEST_CASE("the executable runs at /labkit/harness, given by a relative path inside a hidden directory") {
  Scratch s("exe");
  const fs::path e = s.dir / "exposed", kit = e / "build dir";
  write_file(kit / "harness.sh", "#!/bin/sh\necho \"harness $0 [$1] in $(pwd)\"\nls -A '" + kit.string() + "'\n",
             fs::perms::owner_all);
  sb::Policy policy = exposing(e);
  policy.hide = {kit};
  policy.executable = fs::relative(kit / "harness.sh");
  const auto r = sp::run(sb::command(bwrap(), policy, {sb::kInsidePath, "a b"}));
  INFO(r.err);
  CHECK(r.exit_code == 0);
  CHECK(r.out == "harness /labkit/harness [a b] in /tmp\n");  // and its own directory lists empty
}

TEST_CASE("nothing the harness starts outlives it: setsid, double fork, and when its judge dies") {
  const std::string setsid_secs = fmt::format("{}.25", 900000 + ::getpid());
  const std::string forked_secs = fmt::format("{}.75", 900000 + ::getpid());
  // It waits until both run as `sleep`: setsid has then left the shell's process group.
  const std::string script = fmt::format(
      "setsid sleep {0} </dev/null >/dev/null 2>&1 & (sleep {1} </dev/null >/dev/null 2>&1 &);"
      "until pgrep -fx 'sleep {0}' >/dev/null && pgrep -fx 'sleep {1}' >/dev/null; do sleep 0.01; done; echo started",
      setsid_secs, forked_secs);

  sp::Options o;
  o.timeout = std::chrono::seconds(20);  // should pgrep never find them

  // Control: outside, the setsid one escapes labkit::subprocess's process-group kill.
  const auto outside = sp::run({"/bin/sh", "-c", script}, o);
  REQUIRE(outside.out == "started\n");
  const auto escaped = processes_starting(sleep_line(setsid_secs));
  CHECK(!escaped.empty());
  for (const pid_t pid : escaped) ::kill(pid, SIGKILL);
  for (const pid_t pid : processes_starting(sleep_line(forked_secs))) ::kill(pid, SIGKILL);
  REQUIRE(gone_soon(sleep_line(setsid_secs)));

  const auto r = inside(script, default_policy(), o);
  CHECK(r.out == "started\n");
  CHECK(gone_soon(sleep_line(setsid_secs)));
  CHECK(gone_soon(sleep_line(forked_secs)));

  // The judge (here a forked child that started bwrap) is killed: bwrap and the harness follow.
  // We are their subreaper meanwhile, so that the orphaned bwrap is reaped, here, not left a
  // zombie of an init that may never reap it.
  const std::string judge_secs = fmt::format("{}.5", 900000 + ::getpid());
  const auto argv = sb::command(bwrap(), default_policy(), {"sleep", judge_secs});
  std::vector<char*> args;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  ::prctl(PR_SET_CHILD_SUBREAPER, 1);
  const pid_t judge = ::fork();
  if (judge == 0) {
    const int null = ::open("/dev/null", O_RDWR);  // our stdout must not stay open in them
    for (const int fd : {0, 1, 2}) ::dup2(null, fd);
    if (::fork() == 0) {
      ::execv(args[0], args.data());
      ::_exit(127);
    }
    ::pause();
    ::_exit(0);
  }
  REQUIRE(judge > 0);
  for (int i = 0; i < 500 && processes_starting(sleep_line(judge_secs)).empty(); ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  CHECK(!processes_starting(sleep_line(judge_secs)).empty());
  ::kill(judge, SIGKILL);
  ::waitpid(judge, nullptr, 0);
  CHECK(gone_soon(sleep_line(judge_secs)));
  for (const auto& secs : {setsid_secs, forked_secs, judge_secs}) kill_leftovers(secs);
  ::prctl(PR_SET_CHILD_SUBREAPER, 0);
  for (int i = 0; i < 200 && ::waitpid(-1, nullptr, WNOHANG) >= 0; ++i)  // until ECHILD
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
}

TEST_CASE("environment: a small allowlist; LD_PRELOAD and the judge's other variables stay out") {
  const char* before = std::getenv("CUDA_VISIBLE_DEVICES");
  const std::string saved = before != nullptr ? before : "";
  ::setenv("CUDA_VISIBLE_DEVICES", "3", 1);
  ::setenv("LABKIT_SANDBOX_TEST_TOKEN", "judge-only", 1);
  const auto argv = sb::command(bwrap(), default_policy(), {"/usr/bin/env"});
  if (before != nullptr) ::setenv("CUDA_VISIBLE_DEVICES", saved.c_str(), 1);
  else ::unsetenv("CUDA_VISIBLE_DEVICES");
  ::unsetenv("LABKIT_SANDBOX_TEST_TOKEN");

  sp::Options o;
  o.env = {{"LD_PRELOAD", "libc.so.6"}, {"LABKIT_SANDBOX_TEST_TOKEN", "judge-only"}};  // in bwrap's own environment
  const auto r = sp::run(argv, o);
  INFO(r.out, r.err);
  CHECK(r.exit_code == 0);
  CHECK(contains(r.out, "CUDA_VISIBLE_DEVICES=3\n"));
  CHECK(contains(r.out, "HOME=/tmp\n"));
  CHECK(contains(r.out, "TMPDIR=/tmp\n"));
  CHECK(!contains(r.out, "LD_PRELOAD"));
  CHECK(!contains(r.out, "LABKIT_SANDBOX_TEST_TOKEN"));
  for (const auto& a : argv) CHECK(!contains(a, "LD_PRELOAD"));
}

}  // TEST_SUITE("bwrap")

TEST_SUITE("bwrap") {

TEST_CASE("allow-list: / holds what the harness needs and nothing planted beside the kit, in a class folder or in /tmp") {
  const std::string tag = std::to_string(::getpid());
  const fs::path self = fs::read_symlink("/proc/self/exe");
  std::vector<fs::path> plants = {self.parent_path() / ("labkit-probe-planted-" + tag),
                                  fs::temp_directory_path() / ("labkit-probe-planted-" + tag)};
  if (const char* src = std::getenv("LABKIT_SOURCE_DIR"); src != nullptr && fs::is_directory(src))
    plants.push_back(fs::path(src) / ("labkit-probe-planted-" + tag));
  const fs::path class_dir = "/srv/labkit-probe-class-" + tag;  // another course's submissions
  std::error_code ec;
  if (fs::create_directories(class_dir, ec)) plants.push_back(class_dir / "submission.txt");
  else MESSAGE("cannot write under /srv here: the class folder was not planted");
  for (const auto& p : plants) write_file(p, "planted");
  std::string script;
  for (const auto& p : plants) script += fmt::format("cat '{0}' >/dev/null 2>&1 && echo 'opened {0}';", p.string());

  // Control: outside, every planted file reads.
  const auto outside = sp::run({"/bin/sh", "-c", script});
  const auto r = inside(script + "echo etc:[$(ls -A /etc)]");
  for (const auto& p : plants) fs::remove(p, ec);
  fs::remove(class_dir, ec);
  INFO(r.out, r.err);
  for (const auto& p : plants) CHECK(contains(outside.out, "opened " + p.string()));
  CHECK(!contains(r.out, "opened"));
  CHECK(contains(r.out, "etc:[ld.so.cache]"));

  // ls as the harness: a dynamically linked program whose libraries come from its ELF headers.
  sb::Policy ls = default_policy();
  ls.read_only_extra.clear();
  ls.executable = fs::exists("/usr/bin/ls") ? "/usr/bin/ls" : "/bin/ls";
  const auto listed = sp::run(sb::command(bwrap(), ls, {sb::kInsidePath, "-A", "/"}));
  INFO(listed.out, listed.err);
  CHECK(listed.exit_code == 0);
  std::set<std::string> names;
  std::istringstream in(listed.out);
  for (std::string n; std::getline(in, n);) names.insert(n);
  for (const char* needed : {"labkit", "proc", "dev", "tmp", "etc"}) CHECK(names.count(needed) == 1);
  const std::set<std::string> system = {"bin", "dev", "etc", "labkit", "lib", "lib32", "lib64", "libx32",
                                        "proc", "sbin", "sys", "tmp", "usr"};
  for (const auto& n : names) CHECK_MESSAGE(system.count(n) == 1, "/" << n << " shows inside");
  for (const auto& p : sb::allow_list(ls)) {
    CHECK(!p.string().starts_with("/srv"));
    CHECK(!p.string().starts_with(self.parent_path().string()));
  }
}

TEST_CASE("symlinks on the way are recreated and the real file shown at its real path; add_tool shows a tool's folder") {
  Scratch s("links");
  const fs::path tool = s.dir / "opt" / "tool-1.0";
  write_file(tool / "tool", "#!/bin/sh\ncat '" + (tool / "share" / "data.txt").string() + "'\n", fs::perms::owner_all);
  write_file(tool / "share" / "data.txt", "tool-data\n");
  write_file(s.dir / "opt" / "secret.txt", "secret\n");
  write_file(s.dir / "lib" / "libx.so.1.2", "libx\n");
  write_file(s.dir / "lib" / "libother.so.1", "other\n");
  fs::create_directories(s.dir / "bin");
  fs::create_symlink("../opt/tool-1.0/tool", s.dir / "bin" / "tool");
  fs::create_symlink("libx.so.1.2", s.dir / "lib" / "libx.so.1");
  fs::create_symlink("lib", s.dir / "lib64");  // a directory link on the way, as merged /usr's /lib64

  sb::Policy policy = default_policy();
  sb::add_tool(policy, s.dir / "bin" / "tool");
  policy.read_only_extra.push_back(s.dir / "lib64" / "libx.so.1");
  const auto r = inside(fmt::format("'{0}/bin/tool'; readlink '{0}/lib64'; readlink '{0}/lib/libx.so.1'; cat '{0}/lib64/libx.so.1';"
                                    "cat '{0}/opt/secret.txt' 2>/dev/null || echo secret-hidden; echo lib:[$(ls -A '{0}/lib')]",
                                    s.dir.string()),
                        policy);
  INFO(r.out, r.err);
  CHECK(r.out == "tool-data\nlib\nlibx.so.1.2\nlibx\nsecret-hidden\nlib:[libx.so.1 libx.so.1.2]\n");
}

}  // TEST_SUITE("bwrap")
