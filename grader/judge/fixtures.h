// grader/judge/fixtures.h — the committed and generated test cases, read through their manifest.
//
// Contract
//   * A fixture set is a directory with a manifest (JSON) listing cases; each case names its .npy
//     files relative to the manifest's directory:
//       {"set": "small", "seed": 408, "cases": [
//         {"name": "ece408-conv1-b2", "kind": "conv", "description": "...",
//          "shape": {"B": 2, "M": 4, "C": 1, "H": 86, "W": 86, "K": 7},
//          "files": {"input": "conv/ece408-conv1-b2/input.npy", "mask": ..., "expected": ...}},
//         {"name": "map-1030x7", "kind": "map", "dimx": 1030, "dimy": 7, "niterations": 50,
//          "files": {"input": ..., "expected": ...}}]}
//   * conv: input <f4 [B][C][H][W], mask <f4 [M][C][K][K], expected <f8 [B][M][H-K+1][W-K+1]
//     (the double-precision reference). map: input <f4 [dimy][dimx], expected <f8 [dimy][dimx].
//   * Every inconsistency (missing key, missing file, dtype or shape not matching the manifest)
//     throws FixtureError with one line naming the file, the case and what was expected.
#pragma once

#include <filesystem>
#include <stdexcept>
#include <string>
#include <vector>

#include "labkit/conv.h"

namespace labkit::fixtures {

class FixtureError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct CaseInfo {
  std::string name;
  std::string kind;  // "conv" or "map"
  std::string description;
};

struct ConvCase {
  CaseInfo info;
  ConvShape shape{};
  std::vector<float> input;      // [B][C][H][W]
  std::vector<float> mask;       // [M][C][K][K]
  std::vector<double> expected;  // [B][M][H_out][W_out]
};

struct MapCase {
  CaseInfo info;
  int dimx = 0, dimy = 0, niterations = 0;
  std::vector<float> input;      // [dimy][dimx]
  std::vector<double> expected;  // [dimy][dimx]
};

struct FixtureSet {
  std::filesystem::path manifest;
  std::vector<ConvCase> conv;
  std::vector<MapCase> map;
};

// Reads a manifest and every case it lists.
FixtureSet load(const std::filesystem::path& manifest);

}  // namespace labkit::fixtures
