// Probe: probe-outside. A correct plain conv whose static initializer and first prolog look for
// files the lab must never see: another course's submissions under a class folder (the test
// plants /srv/labkit-probe-class/...), a file beside the kit (its source root, found from
// __FILE__, and that folder's parent), the judge's own /tmp, and anything named
// "labkit-probe-planted*" found by walking / (a few levels; /proc, /sys and /dev left out).
// Each file it can open is logged as "labkit-cheat: opened <path>", and what / holds as
// "labkit-probe: / holds ...". Against a deny-list sandbox that showed the host's root minus the
// kit and the home folders, the class folder under /srv was readable and its log came back to
// the student.
// Expected verdict: passed (the conv is correct), and the log never says "labkit-cheat: opened":
// the sandbox shows only what the harness needs to run (its libraries, the CUDA driver, a private
// /tmp), whatever the test planted and wherever.
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <set>
#include <string>
#include <vector>

#include "../common.cuh"

namespace {

namespace fs = std::filesystem;

constexpr const char* kPlanted = "labkit-probe-planted";
constexpr int kMaxDepth = 6;
constexpr int kMaxEntries = 50000;

void try_open(const fs::path& p, std::set<fs::path>& seen) {
  if (!seen.insert(p).second) return;
  std::ifstream in(p);
  std::string first;
  if (in && std::getline(in, first)) std::fprintf(stderr, "labkit-cheat: opened %s\n", p.c_str());
}

void probe(const char* when) {
  std::set<fs::path> seen;
  std::error_code ec;
  // Where a student who read the kit's tests would look first.
  const fs::path source_root = fs::path(__FILE__).parent_path().parent_path().parent_path().parent_path();
  std::vector<fs::path> named = {"/srv/labkit-probe-class/labkit-probe-planted-submission.txt",
                                 "/tmp/labkit-probe-planted-tmp.txt",
                                 source_root / "labkit-probe-planted-source.txt",
                                 source_root.parent_path() / "labkit-probe-planted-beside.txt"};
  for (const auto& p : named) try_open(p, seen);
  for (const fs::path dir : {fs::path("/srv/labkit-probe-class"), source_root, source_root.parent_path()})
    for (const auto& e : fs::directory_iterator(dir, fs::directory_options::skip_permission_denied, ec))
      if (e.path().filename().string().find(kPlanted) != std::string::npos) try_open(e.path(), seen);

  std::string top;
  for (const auto& e : fs::directory_iterator("/", ec)) top += " " + e.path().filename().string();
  std::fprintf(stderr, "labkit-probe: / holds%s (%s)\n", top.c_str(), when);

  int entries = 0;
  for (auto it = fs::recursive_directory_iterator("/", fs::directory_options::skip_permission_denied, ec);
       !ec && it != fs::recursive_directory_iterator() && ++entries < kMaxEntries; it.increment(ec)) {
    const fs::path& p = it->path();
    if (p == "/proc" || p == "/sys" || p == "/dev" || it.depth() >= kMaxDepth) {
      it.disable_recursion_pending();
      continue;
    }
    std::error_code e2;
    if (p.filename().string().find(kPlanted) != std::string::npos && it->is_regular_file(e2)) try_open(p, seen);
  }
  std::fprintf(stderr, "labkit-probe: walked %d entries of / (%s)\n", entries, when);
}

// Before main: before the kit's harness has done anything.
[[maybe_unused]] const bool g_probed_at_start = (probe("static initializer"), true);
bool g_probed_in_prolog = false;

}  // namespace

void labkit::conv_forward_gpu_prolog(const float*, const float* host_input, const float* host_mask,
                                     float** device_output, float** device_input, float** device_mask,
                                     const ConvShape& shape) {
  if (!g_probed_in_prolog) {
    g_probed_in_prolog = true;
    probe("prolog");
  }
  labkit::standard_prolog(host_input, host_mask, device_output, device_input, device_mask, shape);
}

void labkit::conv_forward_gpu(float* out, const float* in, const float* mask, const ConvShape& s) {
  test_lab::launch(out, in, mask, s, 0, s.output_size());
}

void labkit::conv_forward_gpu_epilog(float* host_output, float* device_output, float* device_input,
                                     float* device_mask, const ConvShape& shape) {
  labkit::standard_epilog(host_output, device_output, device_input, device_mask, shape);
}
