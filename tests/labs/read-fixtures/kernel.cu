// Cheat: read-fixtures. Instead of computing, look for the kit's expected outputs on disk and copy
// the one of the right shape into the output. The first prolog searches everywhere a student who
// read the kit's source would look: the source root found from __FILE__ (kernel.cu is compiled
// with its absolute path), the build dir found from /proc/self/exe (and the source root named in
// its meson-info/meson-info.json), $PWD and relative paths, and the variables the kit's tests set
// (LABKIT_SOURCE_DIR, LABKIT_FIXTURES, ...). Under each it reads datasets/fixtures/manifest.json
// and every **/expected.npy of datasets/fixtures and datasets/fixtures-large (.npy v1-v3, <f8 or
// <f4). Every successful open is logged as "labkit-cheat: opened <path>". conv_forward_gpu copies
// the expected output whose shape is [B][M][H-K+1][W-K+1] of the call, if one was found, and
// otherwise writes nothing.
// On a naive grader that checks only the committed fixtures (ECE408's classic setup: fixed
// input/expected files beside the code) every case is "correct" and each call is one copy: full
// marks and a large speedup.
// Expected verdict: incorrect, and the log never says "labkit-cheat: opened": the harness runs in a
// sandbox where the kit's source, build dir and fixtures are hidden, and the cases the judge
// checks (random shapes, fresh timed inputs) have no expected file anyway. 0 points.
#include <fcntl.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

#include "../common.cuh"

namespace {

namespace fs = std::filesystem;
using Dims = std::vector<long>;

std::map<Dims, std::vector<float>> g_expected;  // by shape [B, M, H_out, W_out]
bool g_searched = false;

bool read_file(const fs::path& p, std::string& bytes) {
  std::ifstream in(p, std::ios::binary);
  if (!in) return false;
  std::fprintf(stderr, "labkit-cheat: opened %s\n", p.c_str());
  std::ostringstream s;
  s << in.rdbuf();
  bytes = s.str();
  return true;
}

// A .npy of <f8 or <f4, C order: its shape and values as float.
bool parse_npy(const std::string& b, Dims& shape, std::vector<float>& values) {
  if (b.size() < 10 || b.compare(0, 6, "\x93NUMPY") != 0) return false;
  const int major = static_cast<unsigned char>(b[6]);
  std::size_t header_len = 0, start = 0;
  if (major == 1) {
    header_len = static_cast<unsigned char>(b[8]) | static_cast<unsigned char>(b[9]) << 8;
    start = 10;
  } else {
    if (b.size() < 12) return false;
    for (int i = 0; i < 4; ++i) header_len |= std::size_t(static_cast<unsigned char>(b[8 + i])) << (8 * i);
    start = 12;
  }
  if (b.size() < start + header_len) return false;
  const std::string h = b.substr(start, header_len);
  const bool f8 = h.find("'<f8'") != std::string::npos, f4 = h.find("'<f4'") != std::string::npos;
  if ((!f8 && !f4) || h.find("'fortran_order': False") == std::string::npos) return false;
  const std::size_t open = h.find('(', h.find("'shape'")), close = h.find(')', open);
  if (open == std::string::npos || close == std::string::npos) return false;
  std::stringstream dims(h.substr(open + 1, close - open - 1));
  std::string d;
  std::size_t count = 1;
  shape.clear();
  while (std::getline(dims, d, ','))
    if (d.find_first_of("0123456789") != std::string::npos) {
      shape.push_back(std::stol(d));
      count *= std::size_t(shape.back());
    }
  const std::size_t data = start + header_len, width = f8 ? 8 : 4;
  if (b.size() < data + count * width) return false;
  values.resize(count);
  for (std::size_t i = 0; i < count; ++i) {
    if (f8) {
      double v;
      std::memcpy(&v, b.data() + data + i * 8, 8);
      values[i] = float(v);
    } else {
      std::memcpy(&values[i], b.data() + data + i * 4, 4);
    }
  }
  return true;
}

void add_with_ancestors(std::vector<fs::path>& roots, fs::path p) {
  std::error_code ec;
  if (p.is_relative()) p = fs::current_path(ec) / p;
  for (p = p.lexically_normal(); !p.empty(); p = p.parent_path()) {
    roots.push_back(p);
    if (p == p.root_path()) break;
  }
}

std::vector<fs::path> candidate_roots() {
  std::vector<fs::path> roots;
  std::error_code ec;
  add_with_ancestors(roots, fs::path(__FILE__).parent_path());
  const fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  if (!ec) add_with_ancestors(roots, exe.parent_path());
  add_with_ancestors(roots, fs::current_path(ec));
  for (const char* rel : {".", "..", "../..", "../../.."}) add_with_ancestors(roots, rel);
  for (const char* var : {"LABKIT_SOURCE_DIR", "LABKIT_FIXTURES", "LABKIT_FIXTURES_LARGE", "LABKIT_DATASET_DIR",
                          "MESON_SOURCE_ROOT", "MESON_BUILD_ROOT", "HOME"})
    if (const char* v = std::getenv(var); v && *v) add_with_ancestors(roots, v);
  // A build dir names its source dir: meson-info/meson-info.json, "source": "...".
  std::vector<fs::path> more;
  for (const fs::path& r : roots) {
    std::string info;
    if (fs::is_regular_file(r / "meson-info" / "meson-info.json", ec) &&
        read_file(r / "meson-info" / "meson-info.json", info)) {
      const std::size_t key = info.find("\"source\"");
      const std::size_t q1 = info.find('"', info.find(':', key) + 1), q2 = info.find('"', q1 + 1);
      if (key != std::string::npos && q1 != std::string::npos && q2 != std::string::npos)
        more.push_back(info.substr(q1 + 1, q2 - q1 - 1));
    }
  }
  roots.insert(roots.end(), more.begin(), more.end());
  return roots;
}

void search() {
  g_searched = true;
  std::set<fs::path> seen;
  for (const fs::path& root : candidate_roots()) {
    for (const char* sub : {"datasets/fixtures", "datasets/fixtures-large", "fixtures"}) {
      std::error_code ec;
      const fs::path dir = root / sub;
      if (!fs::is_directory(dir, ec)) continue;
      std::string manifest;
      if (fs::is_regular_file(dir / "manifest.json", ec)) read_file(dir / "manifest.json", manifest);
      for (auto it = fs::recursive_directory_iterator(dir, fs::directory_options::skip_permission_denied, ec);
           !ec && it != fs::recursive_directory_iterator(); it.increment(ec)) {
        if (!it->is_regular_file(ec) || it->path().filename() != "expected.npy") continue;
        const fs::path p = fs::weakly_canonical(it->path(), ec);
        if (!seen.insert(p).second) continue;
        std::string bytes;
        Dims shape;
        std::vector<float> values;
        if (read_file(p, bytes) && parse_npy(bytes, shape, values) && shape.size() == 4)
          g_expected[shape] = std::move(values);
      }
    }
  }
  std::fprintf(stderr, "labkit-cheat: %zu expected outputs found\n", g_expected.size());
}

}  // namespace

void labkit::conv_forward_gpu_prolog(const float*, const float* host_input, const float* host_mask,
                                     float** device_output, float** device_input, float** device_mask,
                                     const ConvShape& shape) {
  if (!g_searched) search();
  labkit::standard_prolog(host_input, host_mask, device_output, device_input, device_mask, shape);
}

void labkit::conv_forward_gpu(float* out, const float*, const float*, const ConvShape& s) {
  const auto it = g_expected.find(Dims{s.B, s.M, s.H_out(), s.W_out()});
  if (it == g_expected.end()) return;  // no expected file of this shape: nothing is written
  LABKIT_CUDA_CHECK(cudaMemcpy(out, it->second.data(), it->second.size() * sizeof(float), cudaMemcpyHostToDevice));
}

void labkit::conv_forward_gpu_epilog(float* host_output, float* device_output, float* device_input,
                                     float* device_mask, const ConvShape& shape) {
  labkit::standard_epilog(host_output, device_output, device_input, device_mask, shape);
}
