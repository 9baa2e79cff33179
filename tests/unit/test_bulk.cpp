// The class merge of `labkit bulk collect` (grader/tools/bulk.h) on hand-made results: correctness as
// the CSV states it, the fairness flags (noise above the grader's bound, another GPU model, a
// throttled clock), the majority GPU, histograms, the leaderboard and CSV quoting.
#include <doctest/doctest.h>

#include <nlohmann/json.hpp>
#include <string>

#include "grader/tools/bulk.h"
#include "grader/judge/pair_timing.h"

namespace bulk = labkit::bulk;
using nlohmann::json;

namespace {

const double kNoise = labkit::StoppingRule{}.max_noise;

json result(const std::string& lab, const std::string& verdict, double score, double max, double speedup = 0,
            double noise = 0.005, bool converged = true, const std::string& gpu = "NVIDIA H100", int clock = 1980) {
  json r = {{"lab", {{"id", lab}, {"kind", lab == "04-float4" ? "map" : "conv"}}},
            {"verdict", verdict},
            {"score", {{"total", score}, {"max", max}}},
            {"cases", json::array({{{"name", "k3"}, {"passed", verdict != "incorrect"}}})},
            {"device", {{"name", gpu}, {"max_sm_clock_mhz", 1980}}}};
  if (speedup > 0)
    r["timing"] = {{"measured", true}, {"speedup", speedup}, {"speedup_low", speedup * 0.99},
                   {"speedup_high", speedup * 1.01},
                   {"shapes", json::array({{{"noise", noise}, {"converged", converged}, {"sm_clock_mhz", clock}}})}};
  return r;
}

json grade(std::initializer_list<json> results) { return {{"student", "x"}, {"results", json(results)}}; }

std::vector<std::string> flags(const bulk::LabRow& r) { return r.flags; }

}  // namespace

TEST_CASE("correct is true, false or unknown by verdict and whether cases ran") {
  json no_cases = result("03-tiling", "passed", 1, 2);
  no_cases["cases"] = json::array();  // an evidence-only run
  const auto s = bulk::parse_student(
      "alice",
      grade({result("01-restrict-unroll", "passed", 3, 3, 1.2), result("02-constant-memory", "incorrect", 0, 1),
             no_cases, result("05-unroll-matmul", "no-device", 0, 3), result("06-fusion", "build-failed", 0, 2),
             result("07-atomics", "missing-evidence", 1, 2)}),
      nullptr, kNoise);
  REQUIRE(s.rows.size() == 6);
  CHECK(s.rows[0].correct == true);
  CHECK(s.rows[1].correct == false);
  CHECK_FALSE(s.rows[2].correct.has_value());
  CHECK_FALSE(s.rows[3].correct.has_value());
  CHECK(s.rows[4].correct == false);
  CHECK(s.rows[5].correct == true);
  CHECK(s.gpu == "NVIDIA H100");
}

TEST_CASE("noise above the grader's bound, a shape not converged, a throttled clock are flagged") {
  const auto s = bulk::parse_student(
      "bob",
      grade({result("01-restrict-unroll", "passed", 3, 3, 1.1, kNoise * 3), result("03-tiling", "passed", 2, 2, 1.9, 0.001, false),
             result("05-unroll-matmul", "passed", 3, 3, 1.3, 0.001, true, "NVIDIA H100", 1200),
             result("06-fusion", "passed", 2, 2, 3.1, kNoise * 0.5)}),
      nullptr, kNoise);
  CHECK(flags(s.rows[0]) == std::vector<std::string>{"noisy"});
  CHECK(flags(s.rows[1]) == std::vector<std::string>{"noisy"});
  CHECK(flags(s.rows[2]) == std::vector<std::string>{"low-clock"});
  CHECK(flags(s.rows[3]).empty());
}

TEST_CASE("the majority GPU counts students; the others are flagged other-gpu") {
  std::vector<bulk::StudentResult> c;
  c.push_back(bulk::parse_student("a", grade({result("03-tiling", "passed", 2, 2, 2.0)}), nullptr, kNoise));
  c.push_back(bulk::parse_student("b", grade({result("03-tiling", "passed", 2, 2, 1.5)}), nullptr, kNoise));
  c.push_back(bulk::parse_student(
      "c", grade({result("03-tiling", "passed", 2, 2, 2.5, 0.001, true, "NVIDIA A100"),
                  result("01-restrict-unroll", "passed", 2, 2, 1.1, 0.001, true, "NVIDIA A100")}),
      nullptr, kNoise));
  json cpu = result("03-tiling", "no-device", 0, 2);
  cpu["device"] = json::object();
  c.push_back(bulk::parse_student("d", grade({cpu}), json{{"gpu", {{"name", ""}}}}, kNoise));
  const std::string m = bulk::majority_gpu(c);
  CHECK(m == "NVIDIA H100");
  bulk::flag_other_gpu(c, m);
  CHECK(c[0].rows[0].flags.empty());
  CHECK(flags(c[2].rows[0]) == std::vector<std::string>{"other-gpu"});
  CHECK(flags(c[2].rows[1]) == std::vector<std::string>{"other-gpu"});
  CHECK(c[3].rows[0].flags.empty());  // no GPU known: never flagged

  const auto board = bulk::leaderboard(c, 2);
  REQUIRE(board.count("03-tiling") == 1);
  REQUIRE(board.at("03-tiling").size() == 2);
  CHECK(board.at("03-tiling")[0].student == "c");
  CHECK(board.at("03-tiling")[1].student == "a");
  CHECK(bulk::leaderboard_text(board).find("(other-gpu)") != std::string::npos);

  const auto h = bulk::histograms(c);
  REQUIRE(h.size() == 2);
  CHECK(h[1].lab == "03-tiling");
  CHECK(h[1].count == 4);
  CHECK(h[1].bins == std::vector<int>{1, 0, 0, 0, 0, 3});
  const std::string svg = bulk::summary_svg(h, "x < y");
  CHECK(svg.rfind("<svg", 0) == 0);
  CHECK(svg.find("x &lt; y") != std::string::npos);
}

TEST_CASE("the task's nvidia-smi GPU stands in when no result names a device") {
  json r = result("03-tiling", "build-failed", 0, 2);
  r["device"] = json::object();
  const auto s = bulk::parse_student("e", grade({r}), json{{"gpu", {{"name", "NVIDIA L40S"}}}, {"node", "n7"}}, kNoise);
  CHECK(s.gpu == "NVIDIA L40S");
  CHECK(s.node == "n7");
  CHECK(s.rows[0].gpu == "NVIDIA L40S");
}

TEST_CASE("the CSV has the stated columns and quotes what needs it") {
  std::vector<bulk::StudentResult> c{
      bulk::parse_student("o'neil", grade({result("03-tiling", "passed", 1.5, 2, 1.75, kNoise * 2, true, "GPU, \"big\"")}),
                          nullptr, kNoise)};
  const std::string csv = bulk::class_csv(c);
  CHECK(csv == "student,lab,verdict,correct,speedup,score,max_score,gpu,flags,node,gpu_index,gpu_uuid,"
               "max_sm_clock_mhz,min_sm_clock_mhz\n"
               "o'neil,03-tiling,passed,true,1.7500,1.5,2,\"GPU, \"\"big\"\"\",noisy,,,,1980,1980\n");
}

TEST_CASE("which GPU graded a student: node, Slurm's index, nvidia-smi's UUID on every row") {
  const json task = {{"node", "gpu07"}, {"slurm_gpus", "1"}, {"cuda_visible_devices", "0"},
                     {"gpu", {{"name", "NVIDIA H100 80GB HBM3"}, {"uuid", "GPU-abc"}, {"max_sm_clock_mhz", 1980}}}};
  const auto s = bulk::parse_student("f", grade({result("03-tiling", "passed", 2, 2, 1.9)}), task, kNoise);
  CHECK(s.gpu_index == "1");  // Slurm's index, not CUDA's renumbered one
  CHECK(s.gpu_uuid == "GPU-abc");
  CHECK(s.rows[0].node == "gpu07");
  const auto cells = bulk::csv_cells(s.rows[0]);
  REQUIRE(cells.size() == 14);
  CHECK(cells[9] == "gpu07");
  CHECK(cells[10] == "1");
  CHECK(cells[11] == "GPU-abc");
  // Without slurm_gpus (a task run by hand), CUDA_VISIBLE_DEVICES names it.
  const auto t = bulk::parse_student("g", grade({result("03-tiling", "passed", 2, 2, 1.9)}),
                                     json{{"cuda_visible_devices", "3"}}, kNoise);
  CHECK(t.gpu_index == "3");
}

TEST_CASE("a student not graded yet: not-graded rows in the CSV, nothing in histograms or leaderboard") {
  std::vector<bulk::StudentResult> c{bulk::parse_student("a", grade({result("03-tiling", "passed", 2, 2, 2.0)}), nullptr, kNoise)};
  const std::vector<bulk::Problem> pending{{"kim", "grade.json is missing; see grade.log", {"03-tiling", "06-fusion"}},
                                           {"students.txt line 9", "not a student id", {"03-tiling"}}};
  const std::string csv = bulk::class_csv(c, pending);
  CHECK(csv.find("\nkim,03-tiling,not-graded,,,,,,not-graded,,,,,\n") != std::string::npos);
  CHECK(csv.find("\nkim,06-fusion,not-graded,,,,,,not-graded,,,,,\n") != std::string::npos);
  CHECK(csv.find("students.txt") == std::string::npos);  // not a student: missing.txt names it, the CSV cannot
  CHECK(bulk::not_graded_rows(pending[0]).size() == 2);
  CHECK(bulk::histograms(c).at(0).count == 1);
  const std::string text = bulk::summary_text(c, pending, "NVIDIA H100", kNoise);
  CHECK(text.find("Not graded yet") != std::string::npos);
  CHECK(text.find("kim: grade.json is missing") != std::string::npos);
  CHECK(text.find("--resubmit") != std::string::npos);
}

TEST_CASE("a GPU whose maximum SM clock is not the majority's is flagged other-clock; GPU rows") {
  auto student = [](const std::string& id, const std::string& index, int max_clock, double speedup) {
    json r = result("03-tiling", "passed", 2, 2, speedup);
    r["device"]["max_sm_clock_mhz"] = max_clock;
    return bulk::parse_student(id, grade({r}),
                               json{{"node", "n1"}, {"slurm_gpus", index}, {"gpu", {{"uuid", "GPU-" + index}}}}, kNoise);
  };
  std::vector<bulk::StudentResult> c{student("a", "0", 1980, 2.00), student("b", "0", 1980, 2.02),
                                     student("c", "1", 1980, 1.98), student("d", "2", 1755, 1.80)};
  bulk::flag_other_clock(c);
  CHECK(c[0].rows[0].flags.empty());
  CHECK(flags(c[3].rows[0]) == std::vector<std::string>{"other-clock"});
  const auto gpus = bulk::gpu_rows(c);
  REQUIRE(gpus.size() == 3);
  CHECK(gpus[0].uuid == "GPU-0");
  CHECK(gpus[0].students == 2);
  CHECK(gpus[0].max_sm_clock_mhz == 1980);
  CHECK(gpus[2].flags == std::vector<std::string>{"other-clock"});
  // Class median of 03: 1.99; GPU 0's median 2.01, GPU 2's 1.80.
  CHECK(gpus[0].relative_speed == doctest::Approx(2.01 / 1.99));
  CHECK(gpus[2].relative_speed == doctest::Approx(1.80 / 1.99));
  // A tie of clocks goes to the higher one: nobody at the higher clock is flagged.
  std::vector<bulk::StudentResult> tie{student("e", "0", 1980, 2.0), student("f", "1", 1755, 2.0)};
  bulk::flag_other_clock(tie);
  CHECK(tie[0].rows[0].flags.empty());
  CHECK(flags(tie[1].rows[0]) == std::vector<std::string>{"other-clock"});
}

TEST_CASE("malformed grade.json is an error that says what is wrong") {
  CHECK_THROWS_WITH_AS(bulk::parse_student("x", json::array(), nullptr, kNoise), "grade.json does not hold a JSON object",
                       bulk::BulkError);
  CHECK_THROWS_WITH_AS(bulk::parse_student("x", json{{"results", 3}}, nullptr, kNoise),
                       "grade.json has no \"results\" array", bulk::BulkError);
  CHECK_THROWS_AS(bulk::parse_student("x", json{{"results", json::array({{{"verdict", "passed"}}})}}, nullptr, kNoise),
                  bulk::BulkError);
}

TEST_CASE("student ids") {
  CHECK(bulk::valid_student_id("jdoe42"));
  CHECK(bulk::valid_student_id("jane.doe@uni.edu"));
  CHECK_FALSE(bulk::valid_student_id(""));
  CHECK_FALSE(bulk::valid_student_id(".hidden"));
  CHECK_FALSE(bulk::valid_student_id("a b"));
  CHECK_FALSE(bulk::valid_student_id("../x"));
}
