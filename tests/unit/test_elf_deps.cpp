// grader/judge/elf_deps.h: ELF headers read without running anything, /etc/ld.so.cache, the loader's
// search order, and each program's closure checked against what this machine's own loader
// lists for it (`ld.so --list`: a cross-check in the test only; the sandbox never runs it) for
// /bin/ls and the kit's harness (LABKIT_TEST_HARNESS, which links CUPTI through a run path).
#include <doctest/doctest.h>

#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <set>
#include <sstream>

#include "grader/judge/elf_deps.h"
#include "grader/judge/subprocess.h"

namespace {

namespace fs = std::filesystem;
namespace elf = labkit::elf;

struct Scratch {
  fs::path dir;
  explicit Scratch(const std::string& name) {
    dir = fs::temp_directory_path() / ("labkit-elf-" + name + "-" + std::to_string(::getpid()));
    fs::remove_all(dir);
    fs::create_directories(dir);
  }
  ~Scratch() {
    std::error_code ec;
    fs::remove_all(dir, ec);
  }
};

fs::path program(const char* name) {
  for (const char* dir : {"/usr/bin", "/bin"})
    if (fs::exists(fs::path(dir) / name)) return fs::path(dir) / name;
  return {};
}

std::set<fs::path> canonical(const std::vector<fs::path>& paths) {
  std::set<fs::path> out;
  for (const auto& p : paths) out.insert(fs::canonical(p));
  return out;
}

// What the loader itself would load for `exe` (its interpreter's --list), canonical, without the
// vDSO (no file) and without the program itself.
std::set<fs::path> loader_list(const fs::path& exe) {
  const auto info = elf::read_elf(exe);
  REQUIRE(info);
  REQUIRE(!info->interpreter.empty());
  const auto r = labkit::subprocess::run({info->interpreter, "--list", exe.string()});
  INFO(r.out, r.err);
  REQUIRE(r.exit_code == 0);
  std::set<fs::path> out;
  std::istringstream in(r.out);
  for (std::string line; std::getline(in, line);) {
    const auto arrow = line.find("=> ");
    const auto start = arrow != std::string::npos ? arrow + 3 : line.find('/');
    if (start == std::string::npos || start >= line.size() || line[start] != '/') continue;
    out.insert(fs::canonical(line.substr(start, line.find(" (", start) - start)));
  }
  return out;
}

void copy_as(const fs::path& from, const fs::path& to) {
  fs::create_directories(to.parent_path());
  fs::copy_file(from, to, fs::copy_options::overwrite_existing);
}

}  // namespace

TEST_CASE("read_elf: /bin/ls's interpreter and needed libraries; not an ELF; a truncated one") {
  const fs::path ls = program("ls");
  REQUIRE(!ls.empty());
  const auto info = elf::read_elf(ls);
  REQUIRE(info);
  CHECK(info->elf64_le);
  CHECK(info->elf_class == 2);
  CHECK((info->machine == 62 || info->machine == 183));
  CHECK(fs::exists(info->interpreter));
  CHECK(std::count(info->needed.begin(), info->needed.end(), "libc.so.6") == 1);
  CHECK(elf::is_elf(ls));

  Scratch s("read");
  std::ofstream(s.dir / "text") << "#!/bin/sh\necho hi\n";
  CHECK(!elf::read_elf(s.dir / "text"));
  CHECK(!elf::is_elf(s.dir / "text"));
  CHECK(!elf::read_elf(s.dir / "missing"));
  // The first 100 bytes: the header says more follows; what is missing is simply not there.
  std::ifstream in(ls, std::ios::binary);
  std::string head(100, '\0');
  in.read(head.data(), 100);
  std::ofstream(s.dir / "truncated", std::ios::binary) << head;
  const auto t = elf::read_elf(s.dir / "truncated");
  REQUIRE(t);
  CHECK(t->machine == info->machine);
  CHECK(t->needed.empty());
}

TEST_CASE("ld_cache: the cache's path for libc.so.6 is the one ldconfig -p prints") {
  const auto paths = elf::ld_cache("/etc/ld.so.cache", "libc.so.6");
  REQUIRE(!paths.empty());
  for (const auto& p : paths) CHECK(fs::exists(p));
  CHECK(elf::ld_cache("/etc/ld.so.cache", "libno-such-library.so.7").empty());
  CHECK(elf::ld_cache("/nonexistent/ld.so.cache", "libc.so.6").empty());
  for (const char* ldconfig : {"/sbin/ldconfig", "/usr/sbin/ldconfig"}) {
    if (!fs::exists(ldconfig)) continue;
    const auto r = labkit::subprocess::run({ldconfig, "-p"});
    std::set<fs::path> listed;
    std::istringstream in(r.out);
    for (std::string line; std::getline(in, line);)
      if (line.find("\tlibc.so.6 (") == 0) listed.insert(line.substr(line.find("=> ") + 3));
    CHECK(std::set<fs::path>(paths.begin(), paths.end()) == listed);
    return;
  }
  MESSAGE("no ldconfig here: the cache was not cross-checked");
}

TEST_CASE("find: DT_RPATH before LD_LIBRARY_PATH before DT_RUNPATH; $ORIGIN; a library of another class is passed over") {
  Scratch s("find");
  const fs::path libc = elf::ld_cache("/etc/ld.so.cache", "libc.so.6").at(0);
  for (const char* d : {"rpath", "env", "runpath", "bin/lib"}) copy_as(libc, s.dir / d / "libfake.so.1");
  const fs::path prog = s.dir / "bin" / "prog";
  const auto self = elf::read_elf("/proc/self/exe");
  REQUIRE(self);
  elf::Info info = *self;
  info.runpath.clear();
  info.rpath = {(s.dir / "rpath").string()};
  const elf::Search search((s.dir / "env").string(), "/nonexistent/ld.so.cache", {});
  CHECK(search.find("libfake.so.1", prog, info, prog, info) == s.dir / "rpath" / "libfake.so.1");
  info.runpath = {(s.dir / "runpath").string()};  // DT_RUNPATH present: DT_RPATH is ignored
  CHECK(search.find("libfake.so.1", prog, info, prog, info) == s.dir / "env" / "libfake.so.1");
  const elf::Search no_env("", "/nonexistent/ld.so.cache", {});
  CHECK(no_env.find("libfake.so.1", prog, info, prog, info) == s.dir / "runpath" / "libfake.so.1");
  info.runpath = {"$ORIGIN/lib"};
  CHECK(no_env.find("libfake.so.1", prog, info, prog, info) == s.dir / "bin" / "lib" / "libfake.so.1");
  info.runpath = {"${ORIGIN}/lib"};
  CHECK(no_env.find("libfake.so.1", prog, info, prog, info) == s.dir / "bin" / "lib" / "libfake.so.1");

  // A 32-bit file of the same name first in the search: the loader skips it, and so do we.
  {
    std::fstream f(s.dir / "rpath" / "libfake.so.1", std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(4);
    f.put(1);  // EI_CLASS = ELFCLASS32
  }
  info.runpath.clear();
  CHECK(search.find("libfake.so.1", prog, info, prog, info) == s.dir / "env" / "libfake.so.1");
  CHECK(no_env.find("libnothere.so.1", prog, info, prog, info).empty());
  // Default directories come last.
  const elf::Search defaults("", "/nonexistent/ld.so.cache", {s.dir / "runpath"});
  CHECK(defaults.find("libfake.so.1", prog, elf::Info{*self}, prog, *self) == s.dir / "runpath" / "libfake.so.1");
}

TEST_CASE("closure of /bin/ls: exactly what the loader lists; missing libraries named with who needs them") {
  const fs::path ls = program("ls");
  const elf::Closure c = elf::Search().closure({ls});
  INFO(c.missing.size());
  CHECK(c.missing.empty());
  REQUIRE(!c.files.empty());
  CHECK(c.files.front() == ls);
  std::vector<fs::path> deps(c.files.begin() + 1, c.files.end());
  CHECK(canonical(deps) == loader_list(ls));

  // A copy of a program in a folder with its needed library missing from every search.
  Scratch s("missing");
  const elf::Closure none = elf::Search("", "/nonexistent/ld.so.cache", {s.dir}).closure({ls});
  CHECK(!none.missing.empty());
  CHECK(none.missing.front().find("(needed by " + ls.string() + ")") != std::string::npos);
}

TEST_CASE("closure of the kit's harness (CUPTI through its run path): exactly what the loader lists") {
  const char* harness = std::getenv("LABKIT_TEST_HARNESS");
  if (harness == nullptr || !fs::exists(harness)) {
    MESSAGE("LABKIT_TEST_HARNESS not set (run through meson): the harness's closure was not checked");
    return;
  }
  const elf::Closure c = elf::Search(std::getenv("LD_LIBRARY_PATH") ? std::getenv("LD_LIBRARY_PATH") : "").closure({harness});
  CHECK(c.missing.empty());
  std::vector<fs::path> deps(c.files.begin() + 1, c.files.end());
  const auto want = loader_list(harness);
  CHECK(canonical(deps) == want);
  CHECK(std::any_of(want.begin(), want.end(), [](const fs::path& p) { return p.filename().string().rfind("libcupti", 0) == 0; }));
}
