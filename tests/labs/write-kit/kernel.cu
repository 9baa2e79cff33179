// Cheat: write-kit. Tries to change the kit from inside the lab's process, in a static initializer
// (before the grader reads anything):
//   * its own PTX, which the evidence checks read: finds the build dir from /proc/self/exe (the
//     first ancestor with build.ninja or meson-info/), then <build>/grader/harness/test-write-kit.ptx,
//     <build>/grader/runner/test-write-kit.ptx and every *write-kit*.ptx beside the executable,
//     and appends the instructions a lab's evidence patterns look for (ld.shared, bar.sync,
//     ld.const, red.global.add, f16x2 arithmetic, v4.f32 loads): every technique "shown";
//   * the kit's files: its own lab.json (a real cheat would set "target_speedup": 0.01 and drop
//     the evidence) and the registry labs.json, which maps a lab id to its executable (a real
//     cheat would point its id at a solution's grader). So that a failing sandbox does not damage
//     the kit, this test writes their own bytes back at offset 0 (the write succeeds, nothing
//     changes);
//   * new files in the build dir, the source root and beside the executable (removed again at
//     once: the log line is the evidence).
// Only paths inside the kit count: a harness copied to some private folder of the sandbox (no
// build.ninja above it) is left alone, since writing beside such a copy harms nothing.
// The source root comes from __FILE__ (kernel.cu is compiled with its absolute path) and from
// the build dir's meson-info/meson-info.json. Each successful write is logged as
// "labkit-cheat: wrote <path>". conv_forward_gpu writes nothing.
// On a naive grader that runs the lab with the instructor's permissions on the build tree, the
// appended PTX passes any evidence check and a rewritten lab.json makes any speed full marks.
// Expected verdict: incorrect (the output is never written); the log never says
// "labkit-cheat: wrote" (the kit is read-only or hidden in the sandbox) and the PTX file is
// byte for byte what it was before the grade. 0 points.
#include <fcntl.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <filesystem>
#include <set>
#include <string>
#include <vector>

#include "../common.cuh"

namespace {

namespace fs = std::filesystem;

constexpr const char* kEvidence =
    "\n// appended\n"
    "\tld.shared.f32 \t%f100, [%r100];\n"
    "\tbar.sync \t0;\n"
    "\tld.const.f32 \t%f101, [%rd100];\n"
    "\tred.global.add.f32 \t[%rd101], %f102;\n"
    "\tfma.rn.f16x2 \t%r101, %r102, %r103, %r104;\n"
    "\tld.global.v4.f32 \t{%f103, %f104, %f105, %f106}, [%rd102];\n"
    "\tst.global.v4.f32 \t[%rd103], {%f103, %f104, %f105, %f106};\n";

bool write_all(int fd, const std::string& text, off_t at) {
  std::size_t done = 0;
  while (done < text.size()) {
    const ssize_t n = at < 0 ? ::write(fd, text.data() + done, text.size() - done)
                             : ::pwrite(fd, text.data() + done, text.size() - done, at + off_t(done));
    if (n <= 0) return false;
    done += std::size_t(n);
  }
  return true;
}

void append(const fs::path& p, const std::string& text) {
  const int fd = ::open(p.c_str(), O_WRONLY | O_APPEND);
  if (fd < 0) return;
  if (write_all(fd, text, -1)) std::fprintf(stderr, "labkit-cheat: wrote %s (appended evidence)\n", p.c_str());
  ::close(fd);
}

// Opens for writing and writes the file's own bytes back: proves it writable, changes nothing.
void rewrite_same(const fs::path& p) {
  const int fd = ::open(p.c_str(), O_RDWR);
  if (fd < 0) return;
  std::string bytes;
  char buf[65536];
  for (ssize_t n; (n = ::read(fd, buf, sizeof buf)) > 0;) bytes.append(buf, std::size_t(n));
  if (!bytes.empty() && write_all(fd, bytes, 0))
    std::fprintf(stderr, "labkit-cheat: wrote %s (its own bytes back)\n", p.c_str());
  ::close(fd);
}

void create(const fs::path& p) {
  const int fd = ::open(p.c_str(), O_WRONLY | O_CREAT | O_EXCL, 0644);
  if (fd < 0) return;
  if (write_all(fd, "labkit-cheat was here\n", -1)) std::fprintf(stderr, "labkit-cheat: wrote %s (new file)\n", p.c_str());
  ::close(fd);
  ::unlink(p.c_str());
}

fs::path first_ancestor_with(fs::path p, std::initializer_list<const char*> markers) {
  std::error_code ec;
  for (; !p.empty(); p = p.parent_path()) {
    for (const char* m : markers)
      if (fs::exists(p / m, ec)) return p;
    if (p == p.root_path()) break;
  }
  return {};
}

const int attempted = [] {
  std::error_code ec;
  const fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  const fs::path exe_dir = ec ? fs::path() : exe.parent_path();
  const fs::path build = exe_dir.empty() ? fs::path() : first_ancestor_with(exe_dir, {"build.ninja", "meson-info"});
  std::vector<fs::path> sources{first_ancestor_with(fs::absolute(fs::path(__FILE__), ec).parent_path(),
                                                    {"meson_options.txt"})};
  if (!build.empty()) {  // "source": "..." in meson-info/meson-info.json
    if (FILE* f = std::fopen((build / "meson-info" / "meson-info.json").c_str(), "r")) {
      std::string info(1 << 16, '\0');
      info.resize(std::fread(info.data(), 1, info.size(), f));
      std::fclose(f);
      const std::size_t key = info.find("\"source\"");
      const std::size_t q1 = info.find('"', info.find(':', key) + 1), q2 = info.find('"', q1 + 1);
      if (key != std::string::npos && q1 != std::string::npos && q2 != std::string::npos)
        sources.push_back(info.substr(q1 + 1, q2 - q1 - 1));
    }
  }

  std::set<fs::path> ptx;
  if (!build.empty())
    for (const char* dir : {"grader/harness", "grader/runner"})
      if (fs::exists(build / dir / "test-write-kit.ptx", ec)) ptx.insert(build / dir / "test-write-kit.ptx");
  if (!build.empty())  // the executable is in the build tree (not a copy of it somewhere private)
    for (auto it = fs::directory_iterator(exe_dir, ec); !ec && it != fs::directory_iterator(); it.increment(ec))
      if (it->path().extension() == ".ptx" && it->path().filename().string().find("write-kit") != std::string::npos)
        ptx.insert(it->path());
  for (const fs::path& p : ptx) append(p, kEvidence);

  for (const fs::path& src : sources)
    if (!src.empty()) {
      rewrite_same(src / "tests" / "labs" / "write-kit" / "lab.json");
      create(src / "labkit-cheat-write-kit.txt");
    }
  if (!build.empty()) {
    for (const char* dir : {"grader", "grader/harness", "grader/runner"}) rewrite_same(build / dir / "labs.json");
    create(build / "labkit-cheat-write-kit.txt");
    create(exe_dir / "labkit-cheat-write-kit.txt");
  }
  return 0;
}();

}  // namespace

TEST_LAB_STANDARD_PROLOG_EPILOG
void labkit::conv_forward_gpu(float*, const float*, const float*, const ConvShape&) {}
