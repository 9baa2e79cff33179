// The correctness contract (grader/judge/contract.h): its names, the course's batches and layers, and
// the sentence that names what every failing shape has; lab.json's "contract" key.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <stdexcept>

#include "grader/judge/contract.h"
#include "grader/judge/lab_spec.h"

using labkit::ConvShape;
using labkit::ShapeOutcome;

namespace {

std::filesystem::path write_spec(const std::string& extra, const char* kind = "conv") {
  static int n = 0;
  const auto dir = std::filesystem::temp_directory_path() / "labkit-test-contract";
  std::filesystem::create_directories(dir);
  const auto p = dir / ("lab" + std::to_string(n++) + ".json");
  std::ofstream(p) << R"({"id": "x", "title": "x", "points": 1, "kind": ")" << kind
                   << R"(", "precision": "fp32", "timed": "op", "target_speedup": 1.5, "correctness_share": 0.5,)"
                   << R"( "evidence": [])" << extra << "}";
  return p;
}

std::string load_error(const std::string& extra, const char* kind = "conv") {
  try {
    labkit::load_lab_spec(write_spec(extra, kind));
  } catch (const labkit::LabSpecError& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST_CASE("lab.json's contract: general by default, course when asked, anything else named") {
  CHECK(labkit::load_lab_spec(write_spec("")).contract == labkit::Contract::general);
  CHECK(labkit::load_lab_spec(write_spec(R"(, "contract": "course")")).contract == labkit::Contract::course);
  CHECK(labkit::load_lab_spec(write_spec(R"(, "contract": "general")")).contract == labkit::Contract::general);
  CHECK(load_error(R"(, "contract": "ece408")").find("\"contract\" must be \"general\" or \"course\"") != std::string::npos);
  CHECK(load_error(R"(, "contract": 1)").find("\"contract\"") != std::string::npos);
  CHECK(load_error(R"(, "contract": "course", "map": {"dimx": 4, "dimy": 4, "niterations": 1})", "map")
            .find("only allowed when \"kind\" is \"conv\"") != std::string::npos);
}

TEST_CASE("contract names both ways; --contract's spelling") {
  CHECK(labkit::contract_from_string("course") == labkit::Contract::course);
  CHECK(std::string(labkit::to_string(labkit::Contract::general)) == "general");
  CHECK_THROWS_AS(labkit::contract_from_string("Course"), std::invalid_argument);
}

TEST_CASE("the course's batches: 100, 1000 and the grading batch, each once, ascending") {
  CHECK(labkit::course_batches(1000) == std::vector<int>{100, 1000});
  CHECK(labkit::course_batches(10000) == std::vector<int>{100, 1000, 10000});
  CHECK(labkit::course_batches(64) == std::vector<int>{64, 100, 1000});
  CHECK(labkit::course_batches(1, true) == std::vector<int>{100});  // the memory check: the smallest course batch
}

TEST_CASE("the course's layers are the network's conv1 and conv2") {
  const ConvShape a = labkit::course_conv1(100), b = labkit::course_conv2(1000);
  CHECK((a.B == 100 && a.M == 4 && a.C == 1 && a.H == 86 && a.W == 86 && a.K == 7));
  CHECK((b.B == 1000 && b.M == 16 && b.C == 4 && b.H == 40 && b.W == 40 && b.K == 7));
  CHECK(a.H_out() == 80);
  CHECK(b.H_out() == 34);
}

TEST_CASE("failure_pattern names the trait that separates failing from passing shapes") {
  const ConvShape k7{2, 4, 1, 86, 86, 7}, k3{1, 17, 3, 20, 31, 3}, k5{2, 7, 4, 23, 17, 5}, k7b{1, 1, 1, 7, 7, 7};
  SUBCASE("a K = 7-only kernel") {
    const std::string s = labkit::failure_pattern({{k7, true}, {k3, false}, {k5, false}, {k7b, true}});
    CHECK(s.find("K != 7") != std::string::npos);
  }
  SUBCASE("a batch split in 4") {
    const ConvShape b100{100, 4, 1, 86, 86, 7}, b4{4, 5, 3, 9, 13, 1}, b2{2, 4, 1, 86, 86, 7}, b1{1, 16, 1, 33, 16, 3};
    const std::string s = labkit::failure_pattern({{b100, true}, {b4, true}, {b2, false}, {b1, false}});
    CHECK(s.find("B not a multiple of 4") != std::string::npos);
  }
  SUBCASE("a batch split in 10: B = 4 fails too") {
    const ConvShape b100{100, 4, 1, 86, 86, 7}, b4{4, 5, 3, 9, 13, 1}, b2{2, 4, 1, 86, 86, 7};
    const std::string s = labkit::failure_pattern({{b100, true}, {b4, false}, {b2, false}});
    CHECK(s.find("B not a multiple of 10") != std::string::npos);
  }
  SUBCASE("nothing to say: all pass, all fail, or no single trait") {
    CHECK(labkit::failure_pattern({{k7, true}, {k3, true}}).empty());
    CHECK(labkit::failure_pattern({{k7, false}, {k3, false}}).empty());
    CHECK(labkit::failure_pattern({{k7, false}, {k7b, true}, {k3, true}}).empty());
  }
}
