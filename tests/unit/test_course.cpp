// The course's table (grader/network/course.h) from hand-made runs: the sum of conv1 and conv2, the
// ratio of sums against the reference row in words that say which way ("x slower"/"x faster"),
// failures in place (never a number), and a failed or missing reference leaving the ratios empty.
// (The same table from a real H100 report: tests/cli/test_report_course.py.)
#include <doctest/doctest.h>

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "grader/network/course.h"

namespace ms = labkit::milestone;
using labkit::network::RunResult;

namespace {

RunResult run(double op1, double op2, double accuracy) {
  RunResult r;
  r.backend = "test";
  r.batch = 10000;
  r.conv[0].op_ms = op1;
  r.conv[1].op_ms = op2;
  r.accuracy = accuracy;
  r.device = "NVIDIA Test GPU";
  return r;
}

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

const std::string kRef = "06-fusion (solution)";

std::vector<ms::Entry> rows() {
  return {{"baseline", 10000, run(5.0, 19.0, 0.9254), ""},
          {kRef, 10000, run(2.0, 3.0, 0.9254), ""},
          {"09-fp16 (solution)", 10000, run(1.25, 1.25, 0.9253), ""},
          {"05-unroll-matmul (solution)", 10000, run(2.0, 3.02, 0.9254), ""},
          {"02-constant-memory (solution)", 10000, std::nullopt, "timing-implausible: the kit's clock saw less"}};
}

}  // namespace

TEST_CASE("course: ratio words say which way, the larger number is the factor") {
  CHECK(ms::ratio_words(24.0 / 5.0) == "4.80x slower");
  CHECK(ms::ratio_words(0.5) == "2.00x faster");
  CHECK(ms::ratio_words(1.004) == "same (1.00x)");
  CHECK(ms::ratio_words(0.996) == "same (1.00x)");
  CHECK(ms::solution_row("06-fusion") == kRef);
}

TEST_CASE("course table, md: sum of the two Op Times, ratio against the reference, failure in place") {
  const std::string t = ms::course_table(10000, rows(), kRef, ms::Format::md);
  CHECK(contains(t, "| Implementation | Op Time 1 (conv1) | Op Time 2 (conv2) | conv1 + conv2 | vs 06-fusion (solution) | Accuracy |"));
  CHECK(contains(t, "| baseline | 5.000 ms | 19.000 ms | 24.000 ms | 4.80x slower | 0.9254 |"));
  CHECK(contains(t, "| 06-fusion (solution) | 2.000 ms | 3.000 ms | 5.000 ms | reference | 0.9254 |"));
  CHECK(contains(t, "| 09-fp16 (solution) | 1.250 ms | 1.250 ms | 2.500 ms | 2.00x faster | 0.9253 |"));
  CHECK(contains(t, "| 05-unroll-matmul (solution) | 2.000 ms | 3.020 ms | 5.020 ms | same (1.00x) | 0.9254 |"));
  CHECK(contains(t, "| 02-constant-memory (solution) | failed: timing-implausible: the kit's clock saw less |  |  |  |  |"));
  CHECK(contains(t, "**Course comparison, batch 10000** on NVIDIA Test GPU"));
}

TEST_CASE("course table, csv: plain numbers, the ratio as a number and in words, an error column") {
  const std::string t = ms::course_table(10000, rows(), kRef, ms::Format::csv);
  CHECK(contains(t, "implementation,op_time_1_ms,op_time_2_ms,conv1_plus_conv2_ms,time_ratio_to_reference,vs_reference,accuracy,error\n"));
  CHECK(contains(t, "baseline,5.000000,19.000000,24.000000,4.8000,4.80x slower,0.9254,\n"));
  CHECK(contains(t, "06-fusion (solution),2.000000,3.000000,5.000000,1.0000,reference,0.9254,\n"));
  CHECK(contains(t, "02-constant-memory (solution),,,,,,,timing-implausible: the kit's clock saw less\n"));
}

TEST_CASE("course table, tex and json") {
  const std::string tex = ms::course_table(10000, rows(), kRef, ms::Format::tex);
  CHECK(contains(tex, "\\begin{tabular}{lrrrrr}"));
  CHECK(contains(tex, "09-fp16 (solution) & 1.250 ms & 1.250 ms & 2.500 ms & 2.00x faster & 0.9253 \\\\"));
  CHECK(contains(tex, "\\multicolumn{5}{l}{failed: "));
  const auto j = nlohmann::json::parse(ms::course_table(10000, rows(), kRef, ms::Format::json));
  CHECK(j.at("batch") == 10000);
  CHECK(j.at("course_reference") == kRef);
  REQUIRE(j.at("runs").size() == 5);
  CHECK(j["runs"][0]["conv1_plus_conv2_ms"].get<double>() == doctest::Approx(24.0));
  CHECK(j["runs"][0]["time_ratio_to_reference"].get<double>() == doctest::Approx(4.8));
  CHECK(j["runs"][1]["time_ratio_to_reference"].get<double>() == doctest::Approx(1.0));
  CHECK_FALSE(j["runs"][4].contains("conv1_plus_conv2_ms"));
  CHECK(contains(j["runs"][4]["error"].get<std::string>(), "timing-implausible"));
}

TEST_CASE("course table: a failed or missing reference leaves every ratio empty and says why") {
  auto r = rows();
  r[1].run.reset();
  r[1].error = "crashed";
  const std::string failed = ms::course_table(10000, r, kRef, ms::Format::md);
  CHECK(contains(failed, "the reference 06-fusion (solution) failed: no ratios"));
  CHECK(contains(failed, "| baseline | 5.000 ms | 19.000 ms | 24.000 ms |  | 0.9254 |"));
  CHECK_FALSE(contains(failed, "x slower |"));  // the caption explains the words; no row has them
  const std::string missing = ms::course_table(10000, rows(), "11-register-tiling (solution)", ms::Format::md);
  CHECK(contains(missing, "no run of 11-register-tiling (solution) in this report: no ratios"));
  CHECK_FALSE(contains(missing, "x faster |"));
}

TEST_CASE("render: a report with a course reference prints the course's table per batch, not the others") {
  ms::Report report;
  report.batches = {10000};
  for (const auto& e : rows()) report.runs.push_back({e});
  report.compare = true;
  report.course_reference = kRef;
  const std::string text = ms::render(report, ms::Format::md);
  CHECK(contains(text, "vs 06-fusion (solution)"));
  CHECK_FALSE(contains(text, "Speedup"));
  CHECK_FALSE(contains(text, "Total Execution Time"));
}
