// lab.json validation: a good file loads; every kind of mistake is one line naming the key.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>

#include "labkit/lab_spec.h"

namespace {

std::filesystem::path write(const std::string& text) {
  static int n = 0;
  const auto dir = std::filesystem::temp_directory_path() / "labkit-test-lab-spec";
  std::filesystem::create_directories(dir);
  const auto p = dir / ("lab" + std::to_string(n++) + ".json");
  std::ofstream(p) << text;
  return p;
}

const char* kGood = R"({"id": "03-tiling", "title": "Tiling", "points": 2, "kind": "conv",
  "precision": "fp32", "timed": "op", "target_speedup": 1.8, "correctness_share": 0.5,
  "evidence": [{"name": "ld.shared", "regex": "ld\\.shared", "description": "tile loads", "hint": "use shared memory"}],
  "hints": {"performance": "bigger tiles"}})";

std::string error_of(const std::string& text, const std::string& id = "") {
  try {
    labkit::load_lab_spec(write(text), id);
  } catch (const labkit::LabSpecError& e) {
    return e.what();
  }
  return "";
}

std::string replace(std::string s, const std::string& from, const std::string& to) {
  s.replace(s.find(from), from.size(), to);
  return s;
}

}  // namespace

TEST_CASE("a good lab.json loads") {
  const auto s = labkit::load_lab_spec(write(kGood), "03-tiling");
  CHECK(s.points == 2);
  CHECK(s.target_speedup == 1.8);
  CHECK(s.evidence.size() == 1);
  CHECK(s.hint_performance == "bigger tiles");
  CHECK(s.kind == labkit::LabKind::conv);
}

TEST_CASE("mistakes are named") {
  const std::string g = kGood;
  CHECK(error_of("{").find("not valid JSON") != std::string::npos);
  CHECK(error_of(g, "04-float4").find("\"id\" is \"03-tiling\" but the lab's folder is \"04-float4\"") != std::string::npos);
  CHECK(error_of(replace(g, "\"points\": 2", "\"points\": -1")).find("\"points\" must be a positive number") != std::string::npos);
  CHECK(error_of(replace(g, "\"conv\"", "\"matmul\"")).find("\"kind\" must be \"conv\" or \"map\"") != std::string::npos);
  CHECK(error_of(replace(g, "\"target_speedup\"", "\"target_speedups\"")).find("unknown key \"target_speedups\"") != std::string::npos);
  CHECK(error_of(replace(g, "1.8", "1.0")).find("\"target_speedup\" must be a number above 1") != std::string::npos);
  CHECK(error_of(replace(g, "0.5", "1.5")).find("correctness_share") != std::string::npos);
  CHECK(error_of(replace(g, "\"performance\"", "\"speed\"")).find("unknown hint \"speed\"") != std::string::npos);
  CHECK(error_of(replace(g, "ld\\\\.shared\"", "ld[\"")).find("evidence[0]") != std::string::npos);
  const std::string with_map = replace(g, "\"hints\": {\"performance\": \"bigger tiles\"}",
                                       "\"map\": {\"dimx\": 4, \"dimy\": 4, \"niterations\": 4}");
  CHECK(error_of(with_map).find("\"map\" is only allowed when \"kind\" is \"map\"") != std::string::npos);
  const auto map_lab = labkit::load_lab_spec(write(replace(with_map, "\"conv\"", "\"map\"")));
  CHECK(map_lab.map.dimx == 4);
  CHECK(map_lab.map.niterations == 4);
}
