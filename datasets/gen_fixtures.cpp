// labkit-gen-fixtures — writes the conv and map fixtures: inputs from a fixed seed, expected
// outputs from the double-precision CPU reference, and a manifest (grader/judge/fixtures.h).
//
//   labkit-gen-fixtures --set small --out datasets/fixtures      (committed; regenerate after a
//                                                                  change to the reference only)
//   labkit-gen-fixtures --set large --out BUILD/datasets/fixtures-large --manifest BUILD/...json
//                                                                  (at build time, never committed)
// Output is byte-for-byte deterministic: a unit test regenerates the small set and compares.
#include <CLI/CLI.hpp>
#include <fmt/core.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <vector>

#include "labkit/conv.h"
#include "grader/core/exit_codes.h"
#include "labkit/map.h"
#include "grader/io/npy.h"
#include "grader/core/random.h"
#include "reference/conv_reference.h"
#include "reference/map_workload.h"

namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using labkit::ConvShape;

constexpr std::uint64_t kSeed = 408;  // the course number; any fixed value would do

struct ConvSpec {
  const char* name;
  const char* description;
  ConvShape shape;
  float input_lo, input_hi;  // the value range of the input: pixels for conv1, signed otherwise
};

struct MapSpec {
  const char* name;
  const char* description;
  int dimx, dimy, niterations;
};

// The committed set: the two ECE408 layers at small batch and the odd shapes of design.md
// section 5 (K 1/3/5/7, C 1/3/4, M not a multiple of 16, H != W, B = 1).
const std::vector<ConvSpec> kSmallConv = {
    {"ece408-conv1-b2", "network conv1 (pixels 0..255), batch 2", {2, 4, 1, 86, 86, 7}, 0.f, 255.f},
    {"ece408-conv2-b2", "network conv2, batch 2", {2, 16, 4, 40, 40, 7}, 0.f, 4.f},
    {"k1-c3-m5", "K=1 (a per-pixel channel mix), W_out not a multiple of 16", {3, 5, 3, 9, 13, 1}, -1.f, 1.f},
    {"k3-c3-m17-b1", "B=1, M=17 (one past a multiple of 16), H != W", {1, 17, 3, 20, 31, 3}, -1.f, 1.f},
    {"k5-c4-m7", "K=5, H > W", {2, 7, 4, 23, 17, 5}, -1.f, 1.f},
    {"k7-c1-m1-b1", "the smallest case: one output element", {1, 1, 1, 7, 7, 7}, -1.f, 1.f},
    {"k7-c4-m20", "M=20, W_out=29: partial tiles in both directions", {2, 20, 4, 18, 35, 7}, -1.f, 1.f},
    {"k3-c1-m16-tall", "H=33 > W=16, W_out=14", {5, 16, 1, 33, 16, 3}, -1.f, 1.f},
};
const std::vector<MapSpec> kSmallMap = {
    {"map-1030x7-i50", "dimx not a multiple of 4 or 256", 1030, 7, 50},
    {"map-256x64-i200", "aligned rows, 200 iterations", 256, 64, 200},
    {"map-5x3-i1000", "tiny and long: 1000 iterations", 5, 3, 1000},
    {"map-4x1-i1", "one float4, one iteration", 4, 1, 1},
};
// Built at build time into the build dir: too large to commit.
const std::vector<ConvSpec> kLargeConv = {
    {"ece408-conv1-b100", "network conv1, batch 100", {100, 4, 1, 86, 86, 7}, 0.f, 255.f},
    {"ece408-conv2-b100", "network conv2, batch 100", {100, 16, 4, 40, 40, 7}, 0.f, 4.f},
};
const std::vector<MapSpec> kLargeMap = {
    {"map-2052x512-i20", "a million elements, dimx = 4 * 513", 2052, 512, 20},
};

fs::path write_case_file(const fs::path& root, const fs::path& rel, std::vector<std::int64_t> shape,
                         auto values) {
  fs::create_directories((root / rel).parent_path());
  labkit::npy::write(root / rel, std::move(shape), values);
  return rel;
}

json make_conv(const fs::path& root, const fs::path& manifest_dir, const ConvSpec& spec) {
  const ConvShape& s = spec.shape;
  std::vector<float> input(s.input_size()), mask(s.mask_size());
  labkit::fill_uniform(input, spec.input_lo, spec.input_hi, labkit::seed_for(kSeed, std::string(spec.name) + "/input"));
  labkit::fill_uniform(mask, -0.5f, 0.5f, labkit::seed_for(kSeed, std::string(spec.name) + "/mask"));
  std::vector<double> expected(s.output_size());
  labkit::reference::conv_forward_cpu(expected, input, mask, s);

  const fs::path dir = (fs::relative(root, manifest_dir) / "conv" / spec.name).lexically_normal();
  const fs::path base = manifest_dir;
  json files;
  files["input"] = write_case_file(base, dir / "input.npy", {s.B, s.C, s.H, s.W}, std::span<const float>(input)).generic_string();
  files["mask"] = write_case_file(base, dir / "mask.npy", {s.M, s.C, s.K, s.K}, std::span<const float>(mask)).generic_string();
  files["expected"] = write_case_file(base, dir / "expected.npy", {s.B, s.M, s.H_out(), s.W_out()},
                                      std::span<const double>(expected)).generic_string();
  return {{"name", spec.name}, {"kind", "conv"}, {"description", spec.description},
          {"shape", {{"B", s.B}, {"M", s.M}, {"C", s.C}, {"H", s.H}, {"W", s.W}, {"K", s.K}}},
          {"files", files}};
}

json make_map(const fs::path& root, const fs::path& manifest_dir, const MapSpec& spec) {
  const std::size_t n = std::size_t(spec.dimx) * spec.dimy;
  std::vector<float> input(n);
  labkit::fill_uniform(input, labkit::kMapInputMin, labkit::kMapInputMax,
                       labkit::seed_for(kSeed, std::string(spec.name) + "/input"));
  std::vector<double> expected(n);
  labkit::reference::map_forward_cpu(expected, input, spec.dimx, spec.dimy, spec.niterations);

  const fs::path dir = (fs::relative(root, manifest_dir) / "map" / spec.name).lexically_normal();
  const fs::path base = manifest_dir;
  json files;
  files["input"] = write_case_file(base, dir / "input.npy", {spec.dimy, spec.dimx}, std::span<const float>(input)).generic_string();
  files["expected"] = write_case_file(base, dir / "expected.npy", {spec.dimy, spec.dimx},
                                      std::span<const double>(expected)).generic_string();
  return {{"name", spec.name}, {"kind", "map"}, {"description", spec.description},
          {"dimx", spec.dimx}, {"dimy", spec.dimy}, {"niterations", spec.niterations},
          {"files", files}};
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"labkit-gen-fixtures: write the conv and map fixtures and their manifest"};
  std::string set = "small";
  fs::path out, manifest;
  app.add_option("--set", set, "which fixture set: small (committed) or large (build time)")
      ->check(CLI::IsMember({"small", "large"}));
  app.add_option("--out", out, "directory to write the .npy files into")->required();
  app.add_option("--manifest", manifest, "manifest path (default: OUT/manifest.json)");
  CLI11_PARSE(app, argc, argv);

  try {
    if (manifest.empty()) manifest = out / "manifest.json";
    fs::create_directories(out);
    out = fs::weakly_canonical(out);
    manifest = fs::weakly_canonical(manifest);
    fs::create_directories(manifest.parent_path());
    const fs::path manifest_dir = manifest.parent_path();

    const bool small = set == "small";
    json cases = json::array();
    for (const auto& spec : small ? kSmallConv : kLargeConv) cases.push_back(make_conv(out, manifest_dir, spec));
    for (const auto& spec : small ? kSmallMap : kLargeMap) cases.push_back(make_map(out, manifest_dir, spec));

    json doc = {{"generator", "labkit-gen-fixtures"}, {"set", set}, {"seed", kSeed},
                {"note", "expected = double-precision CPU reference (reference/conv_cpu.cpp, reference/map_cpu.cpp)"},
                {"cases", cases}};
    std::ofstream(manifest) << doc.dump(2) << '\n';
    fmt::print("wrote {} cases to {}\n", cases.size(), manifest.string());
  } catch (const std::exception& e) {
    fmt::print(stderr, "labkit-gen-fixtures: {}\n", e.what());
    return labkit::exit_code::kFail;
  }
  return labkit::exit_code::kPass;
}
