// .npy interop with the real client, numpy, both ways (design.md section 8). meson runs
//   test-npy-numpy PYTHON SCRIPT
// where SCRIPT is tests/unit/npy_numpy.py, numpy's half of the test. Stages: numpy writes every
// dtype, shape and format version and we read; we write and numpy loads and checks; numpy writes
// arrays we must refuse; numpy's float16 conversions against ours. Exit 0 pass, 1 any failure
// (each printed), 77 skip when PYTHON cannot import numpy, 99 bad command line.
#include <fmt/core.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <sys/wait.h>
#include <vector>

#include "grader/io/npy.h"

namespace npy = labkit::npy;
namespace fs = std::filesystem;

namespace {

int checks = 0, failures = 0;

template <class... Args> bool check(bool ok, fmt::format_string<Args...> what, Args&&... args) {
  ++checks;
  if (!ok) {
    ++failures;
    fmt::print("FAIL {}\n", fmt::format(what, std::forward<Args>(args)...));
  }
  return ok;
}

// A word for /bin/sh: single quotes keep every byte literal except ' itself.
std::string quoted(const std::string& s) {
  std::string out = "'";
  for (char c : s) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

struct Result {
  int status = -1;
  std::string output;  // stdout and stderr together
};

Result shell(const std::string& command) {
  Result r;
  FILE* pipe = ::popen((command + " 2>&1").c_str(), "r");
  if (!pipe) return r;
  char buffer[4096];
  for (std::size_t n; (n = std::fread(buffer, 1, sizeof buffer, pipe)) > 0;) r.output.append(buffer, n);
  const int raw = ::pclose(pipe);
  r.status = WIFEXITED(raw) ? WEXITSTATUS(raw) : -1;
  return r;
}

// The values of every file, a formula of the flat index that npy_numpy.py computes identically
// (exact operations only: ldexp, integer arithmetic, round-to-nearest-even conversions).
template <class T> T value(std::int64_t i) {
  const double f = std::ldexp(static_cast<double>(i - 30) * 0.1, static_cast<int>(i % 7 * 3 - 9));
  const auto u = static_cast<std::uint64_t>(i);
  if constexpr (std::is_same_v<T, std::uint16_t>)
    return npy::float_to_half(static_cast<float>(f));
  else if constexpr (std::is_floating_point_v<T>)
    return static_cast<T>(f);
  else if constexpr (std::is_same_v<T, std::int32_t>)
    return static_cast<std::int32_t>(static_cast<std::int64_t>(u * 2654435761ULL % 4294967296ULL) -
                                     2147483648LL);
  else if constexpr (std::is_same_v<T, std::int64_t>)
    return static_cast<std::int64_t>((u * 6364136223846793005ULL) & 0x7FFFFFFFFFFFFFFFULL) -
           (std::int64_t{1} << 62);
  else
    return static_cast<std::uint8_t>((i * 13 + 7) % 256);
}

template <class T> npy::Array expected_as(const std::vector<std::int64_t>& shape) {
  std::int64_t n = 1;
  for (auto d : shape) n *= d;
  std::vector<T> v;
  for (std::int64_t i = 0; i < n; ++i) v.push_back(value<T>(i));
  return npy::make<T>(shape, v);
}

npy::Array expected(npy::DType t, const std::vector<std::int64_t>& shape) {
  switch (t) {
    case npy::DType::f4: return expected_as<float>(shape);
    case npy::DType::f8: return expected_as<double>(shape);
    case npy::DType::f2: return expected_as<std::uint16_t>(shape);
    case npy::DType::i4: return expected_as<std::int32_t>(shape);
    case npy::DType::i8: return expected_as<std::int64_t>(shape);
    case npy::DType::u1: return expected_as<std::uint8_t>(shape);
  }
  return {};
}

struct Case {
  std::string file;
  npy::DType dtype;
  std::vector<std::int64_t> shape;
  int version;
};

std::string shape_token(const std::vector<std::int64_t>& shape) {
  return shape.empty() ? "scalar" : fmt::format("{}", fmt::join(shape, "x"));
}

void write_list(const fs::path& path, const std::vector<Case>& cases) {
  std::ofstream out(path);
  for (const auto& c : cases)
    out << c.file << ' ' << npy::descr(c.dtype) << ' ' << c.version << ' ' << shape_token(c.shape) << '\n';
}

// Runs one command of the script; a failure prints its output.
bool run_script(const std::string& python, const std::string& script, const std::string& command,
                const fs::path& dir) {
  const Result r = shell(quoted(python) + " " + quoted(script) + " " + command + " " + quoted(dir.string()));
  if (!check(r.status == 0, "npy_numpy.py {} exited with status {}:\n{}", command, r.status, r.output))
    return false;
  if (!r.output.empty()) fmt::print("{}", r.output);
  return true;
}

std::string message_of(const fs::path& file) {
  try {
    npy::read(file);
  } catch (const npy::Error& e) {
    return e.what();
  }
  return "(no error: the file was accepted)";
}

bool same_float(float a, float b) {
  return (std::isnan(a) && std::isnan(b)) ||
         std::bit_cast<std::uint32_t>(a) == std::bit_cast<std::uint32_t>(b);
}
bool same_half(std::uint16_t a, std::uint16_t b) {
  return (std::isnan(npy::half_to_float(a)) && std::isnan(npy::half_to_float(b))) || a == b;
}

void numpy_writes_we_read(const std::string& python, const std::string& script, const fs::path& dir,
                          const std::vector<Case>& cases) {
  write_list(dir / "cases.txt", cases);
  if (!run_script(python, script, "numpy-writes", dir)) return;
  const int before = failures;
  for (const auto& c : cases) {
    const fs::path path = dir / c.file;
    try {
      const npy::Array a = npy::read(path);
      const npy::Array want = expected(c.dtype, c.shape);
      std::ifstream in(path, std::ios::binary);
      char magic[8] = {};
      in.read(magic, 8);
      check(magic[6] == c.version, "{}: numpy wrote format version {}, asked for {}", c.file, int{magic[6]},
            c.version);
      if (!check(a.dtype == c.dtype && a.shape == c.shape, "{}: read as {} {}, expected {} {}", c.file,
                 npy::descr(a.dtype), npy::shape_string(a.shape), npy::descr(c.dtype),
                 npy::shape_string(c.shape)))
        continue;
      std::size_t k = 0;
      const std::size_t item = npy::item_size(a.dtype);
      while (k < a.size() && std::equal(a.data.begin() + k * item, a.data.begin() + (k + 1) * item,
                                        want.data.begin() + k * item))
        ++k;
      check(k == a.size(), "{}: element {} reads as {}, expected {}", c.file, k,
            k < a.size() ? a.to_double()[k] : 0.0, k < a.size() ? want.to_double()[k] : 0.0);
    } catch (const npy::Error& e) {
      check(false, "reading a file numpy wrote: {}", e.what());
    }
  }
  fmt::print("numpy writes, labkit reads: {} files, {} failed\n", cases.size(), failures - before);
}

void we_write_numpy_reads(const std::string& python, const std::string& script, const fs::path& dir,
                          std::vector<Case> cases) {
  // A shape with more dims than numpy allows makes a header past 1.0's 64 KiB: numpy still
  // parses the header and checks it is 2.0 and aligned.
  cases.push_back({"ours_v2.npy", npy::DType::f4, std::vector<std::int64_t>(25000, 1), 2});
  for (const auto& c : cases) npy::write(dir / c.file, expected(c.dtype, c.shape));
  write_list(dir / "ours.txt", cases);
  run_script(python, script, "numpy-reads", dir);
}

void numpy_writes_we_refuse(const std::string& python, const std::string& script, const fs::path& dir) {
  if (!run_script(python, script, "rejects", dir)) return;
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"fortran.npy", "Fortran order is not supported; save with np.ascontiguousarray"},
      {"bigendian_f4.npy",
       "big-endian dtype '>f4' is not supported; save a little-endian copy with a.astype('<f4')"},
      {"bigendian_i8.npy", "big-endian dtype '>i8'"},
      {"bigendian_f2.npy", "big-endian dtype '>f2'"},
      {"object.npy", "object dtype '|O'"},
      {"bool.npy", "unsupported dtype '|b1'"},
      {"complex.npy", "unsupported dtype '<c8'"},
      {"int16.npy", "unsupported dtype '<i2'"},
      {"uint16.npy", "unsupported dtype '<u2'"},
      {"structured.npy", "structured dtype"},
      {"archive.npz", "zip archive"},
  };
  const int before = failures;
  for (const auto& [file, words] : cases) {
    const fs::path path = dir / file;
    const std::string m = message_of(path);
    check(m.starts_with(path.string() + ": ") && m.find(words) != std::string::npos &&
              m.find('\n') == std::string::npos,
          "{}: expected a one-line error naming the file and saying \"{}\", got \"{}\"", file, words, m);
  }
  fmt::print("numpy writes what labkit refuses: {} files, {} failed\n", cases.size(), failures - before);
}

void float16_against_numpy(const std::string& python, const std::string& script, const fs::path& dir) {
  if (!run_script(python, script, "half-tables", dir)) return;
  const int before = failures;
  try {
    const auto halves = npy::read_as<std::uint16_t>(dir / "every_half.npy");
    const auto as_float = npy::read_as<float>(dir / "every_half_as_f4.npy");
    check(halves.size() == 65536 && as_float.size() == 65536, "every_half: {} and {} values, expected 65536",
          halves.size(), as_float.size());
    int bad = 0;
    for (std::size_t i = 0; i < halves.size() && i < as_float.size(); ++i)
      if (!same_float(npy::half_to_float(halves[i]), as_float[i]) && ++bad <= 5)
        check(false, "half_to_float(0x{:04x}) = {} but numpy says {}", halves[i],
              npy::half_to_float(halves[i]), as_float[i]);
    check(bad == 0, "half_to_float differs from numpy on {} of 65536 halves", bad);

    const auto probe = npy::read_as<float>(dir / "probe_f4.npy");
    const auto want = npy::read_as<std::uint16_t>(dir / "probe_as_f2.npy");
    check(probe.size() == want.size() && probe.size() > 200000, "probe: {} floats, {} halves", probe.size(),
          want.size());
    bad = 0;
    for (std::size_t i = 0; i < probe.size() && i < want.size(); ++i)
      if (!same_half(npy::float_to_half(probe[i]), want[i]) && ++bad <= 5)
        check(false, "float_to_half({:.9g}) = 0x{:04x} but numpy says 0x{:04x}", probe[i],
              npy::float_to_half(probe[i]), want[i]);
    check(bad == 0, "float_to_half differs from numpy on {} of {} floats", bad, probe.size());
    fmt::print("float16 conversions against numpy: {} halves and {} floats, {} failed\n", halves.size(),
               probe.size(), failures - before);
  } catch (const npy::Error& e) {
    check(false, "reading numpy's float16 tables: {}", e.what());
  }
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 3) {
    fmt::print(stderr, "usage: {} PYTHON tests/unit/npy_numpy.py\n", argc > 0 ? argv[0] : "test-npy-numpy");
    return 99;
  }
  const std::string python = argv[1], script = argv[2];
  const Result probe = shell(quoted(python) + " -c 'import numpy'");
  if (probe.status != 0) {
    const std::string why = probe.output.empty() ? fmt::format("status {}", probe.status) : probe.output;
    fmt::print("SKIP: {} cannot import numpy (install python3-numpy): {}\n", python, why);
    return 77;
  }

  std::string templ = (fs::temp_directory_path() / "labkit-npy-numpy-XXXXXX").string();
  if (!::mkdtemp(templ.data())) {
    fmt::print("FAIL cannot create a temporary directory from {}\n", templ);
    return 1;
  }
  const fs::path dir = templ;

  const std::vector<std::vector<std::int64_t>> shapes = {{}, {0}, {7}, {3, 4}, {2, 1, 5, 6}, {2, 0, 3}};
  const npy::DType dtypes[] = {npy::DType::f4, npy::DType::f8, npy::DType::f2,
                               npy::DType::i4, npy::DType::i8, npy::DType::u1};
  std::vector<Case> numpy_cases, our_cases;
  for (npy::DType t : dtypes) {
    for (const auto& shape : shapes) {
      const std::string stem = fmt::format("{}_{}", npy::descr(t).substr(1), shape_token(shape));
      for (int version = 1; version <= 3; ++version)
        numpy_cases.push_back({fmt::format("numpy_{}_v{}.npy", stem, version), t, shape, version});
      our_cases.push_back({fmt::format("ours_{}.npy", stem), t, shape, 1});
    }
  }
  numpy_writes_we_read(python, script, dir, numpy_cases);
  we_write_numpy_reads(python, script, dir, our_cases);
  numpy_writes_we_refuse(python, script, dir);
  float16_against_numpy(python, script, dir);

  if (failures > 0) {
    fmt::print("npy-numpy: {} of {} checks failed; files kept in {}\n", failures, checks, dir.string());
    return 1;
  }
  std::error_code ec;
  fs::remove_all(dir, ec);
  fmt::print("npy-numpy: all {} checks passed\n", checks);
  return 0;
}
