// The committed fixtures: consistent with their manifest, reproducible by the generator, and
// equal to what the current reference computes; and the loader's errors on broken fixture sets.
#include <doctest/doctest.h>
#include <fmt/core.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

#include "grader/judge/fixtures.h"
#include "grader/io/npy.h"
#include "reference/conv_reference.h"
#include "reference/map_workload.h"

namespace fs = std::filesystem;
using labkit::fixtures::FixtureError;

namespace {

fs::path env_path(const char* name) {
  const char* v = std::getenv(name);
  REQUIRE_MESSAGE(v != nullptr, std::string(name) << " is not set (run this test through meson test)");
  return v;
}

std::string slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), {}};
}

struct TempDir {
  fs::path path;
  TempDir() {
    path = fs::temp_directory_path() / ("labkit-test-" + std::to_string(std::rand()) + "-" +
                                        std::to_string(reinterpret_cast<std::uintptr_t>(this)));
    fs::create_directories(path);
  }
  ~TempDir() { fs::remove_all(path); }
};

std::string load_error(const fs::path& manifest) {
  try {
    labkit::fixtures::load(manifest);
  } catch (const FixtureError& e) {
    return e.what();
  }
  return "(no error)";
}

}  // namespace

TEST_CASE("committed fixtures load and cover the shapes design.md asks for") {
  const auto set = labkit::fixtures::load(env_path("LABKIT_FIXTURES") / "manifest.json");
  REQUIRE(set.conv.size() >= 8);
  REQUIRE(set.map.size() >= 4);
  bool k[8] = {}, c[5] = {}, m_odd = false, h_ne_w = false, b1 = false;
  for (const auto& f : set.conv) {
    if (f.shape.K < 8) k[f.shape.K] = true;
    if (f.shape.C < 5) c[f.shape.C] = true;
    m_odd |= f.shape.M % 16 != 0;
    h_ne_w |= f.shape.H != f.shape.W;
    b1 |= f.shape.B == 1;
  }
  CHECK((k[1] && k[3] && k[5] && k[7]));
  CHECK((c[1] && c[3] && c[4]));
  CHECK(m_odd);
  CHECK(h_ne_w);
  CHECK(b1);
  bool map_unaligned = false;
  for (const auto& f : set.map) map_unaligned |= f.dimx % 4 != 0;
  CHECK(map_unaligned);
}

TEST_CASE("committed expected outputs equal the current double reference, bit for bit") {
  const auto set = labkit::fixtures::load(env_path("LABKIT_FIXTURES") / "manifest.json");
  for (const auto& f : set.conv) {
    CAPTURE(f.info.name);
    std::vector<double> out(f.shape.output_size());
    labkit::reference::conv_forward_cpu(out, f.input, f.mask, f.shape);
    CHECK(out == f.expected);
  }
  for (const auto& f : set.map) {
    CAPTURE(f.info.name);
    std::vector<double> out(f.input.size());
    labkit::reference::map_forward_cpu(out, f.input, f.dimx, f.dimy, f.niterations);
    CHECK(out == f.expected);
  }
}

TEST_CASE("the generator reproduces the committed fixtures byte for byte") {
  const fs::path committed = env_path("LABKIT_FIXTURES");
  TempDir tmp;
  const std::string cmd = fmt::format("\"{}\" --set small --out \"{}\" > /dev/null",
                                      env_path("LABKIT_GEN_FIXTURES").string(), tmp.path.string());
  REQUIRE(std::system(cmd.c_str()) == 0);
  int files = 0;
  for (const auto& entry : fs::recursive_directory_iterator(committed)) {
    if (!entry.is_regular_file()) continue;
    const fs::path rel = fs::relative(entry.path(), committed);
    CAPTURE(rel.string());
    REQUIRE(fs::exists(tmp.path / rel));
    CHECK(slurp(entry.path()) == slurp(tmp.path / rel));
    ++files;
  }
  int generated = 0;
  for (const auto& entry : fs::recursive_directory_iterator(tmp.path)) generated += entry.is_regular_file();
  CHECK(files == generated);
  CHECK(files > 20);
}

TEST_CASE("broken fixture sets are reported with the file, the case and what was expected") {
  TempDir tmp;
  const fs::path manifest = tmp.path / "manifest.json";
  auto write_manifest = [&](const std::string& text) { std::ofstream(manifest) << text; };
  const std::vector<float> four(4, 1.0f);
  const std::vector<double> one(1, 4.0);

  SUBCASE("missing manifest") {
    CHECK(load_error(tmp.path / "nope.json").find("nope.json: cannot open") != std::string::npos);
  }
  SUBCASE("not JSON") {
    write_manifest("{\"cases\": [");
    CHECK(load_error(manifest).find("not valid JSON") != std::string::npos);
  }
  SUBCASE("missing key") {
    write_manifest(R"({"cases": [{"name": "a", "kind": "conv", "files": {}}]})");
    CHECK(load_error(manifest).find("case \"a\": missing \"shape\"") != std::string::npos);
  }
  SUBCASE("unknown kind") {
    write_manifest(R"({"cases": [{"name": "a", "kind": "pool"}]})");
    CHECK(load_error(manifest).find("unknown kind \"pool\"") != std::string::npos);
  }
  SUBCASE("K larger than the image") {
    write_manifest(R"({"cases": [{"name": "a", "kind": "conv",
        "shape": {"B": 1, "M": 1, "C": 1, "H": 2, "W": 2, "K": 3}, "files": {}}]})");
    CHECK(load_error(manifest).find("invalid shape B=1 M=1 C=1 H=2 W=2 K=3") != std::string::npos);
  }
  SUBCASE("missing .npy file") {
    write_manifest(R"({"cases": [{"name": "a", "kind": "conv",
        "shape": {"B": 1, "M": 1, "C": 1, "H": 2, "W": 2, "K": 2},
        "files": {"input": "in.npy", "mask": "mask.npy", "expected": "out.npy"}}]})");
    const std::string e = load_error(manifest);
    CHECK(e.find("in.npy") != std::string::npos);
    CHECK(e.find("case \"a\"") != std::string::npos);
  }
  SUBCASE("shape or dtype not matching the manifest") {
    labkit::npy::write(tmp.path / "in.npy", {1, 1, 2, 2}, std::span<const float>(four));
    labkit::npy::write(tmp.path / "mask.npy", {1, 1, 2, 2}, std::span<const float>(four));
    labkit::npy::write(tmp.path / "out.npy", {1, 1, 1, 1}, std::span<const double>(one));
    labkit::npy::write(tmp.path / "out32.npy", {1, 1, 1, 1}, std::span<const float>(four.data(), 1));
    write_manifest(R"({"cases": [{"name": "a", "kind": "conv",
        "shape": {"B": 1, "M": 1, "C": 1, "H": 2, "W": 2, "K": 2},
        "files": {"input": "in.npy", "mask": "mask.npy", "expected": "out.npy"}}]})");
    CHECK(labkit::fixtures::load(manifest).conv.size() == 1);  // the consistent version loads

    write_manifest(R"({"cases": [{"name": "a", "kind": "conv",
        "shape": {"B": 1, "M": 1, "C": 1, "H": 3, "W": 2, "K": 2},
        "files": {"input": "in.npy", "mask": "mask.npy", "expected": "out.npy"}}]})");
    std::string e = load_error(manifest);
    CHECK(e.find("in.npy") != std::string::npos);
    CHECK(e.find("(1, 1, 2, 2)") != std::string::npos);
    CHECK(e.find("(1, 1, 3, 2)") != std::string::npos);

    write_manifest(R"({"cases": [{"name": "a", "kind": "conv",
        "shape": {"B": 1, "M": 1, "C": 1, "H": 2, "W": 2, "K": 2},
        "files": {"input": "in.npy", "mask": "mask.npy", "expected": "out32.npy"}}]})");
    e = load_error(manifest);
    CHECK(e.find("out32.npy") != std::string::npos);
    CHECK(e.find("<f8") != std::string::npos);
  }
}
