// Reports: the JSON of a result, its text, and Gradescope's results.json.
#include <doctest/doctest.h>

#include "grader/judge/grade_result.h"
#include "grader/judge/report.h"

TEST_CASE("a result's JSON gives a readable report and a valid Gradescope file") {
  labkit::GradeResult r;
  r.id = "03-tiling";
  r.title = "Tiling";
  r.role = "lab";
  r.verdict = labkit::verdict::kIncorrect;
  r.message = "1 of 2 cases are wrong.";
  r.seed = 18446744073709551557ull;  // above 2^53: kept exactly as a string
  r.cases.push_back({"k3", "fixture", "B=1 M=1 C=1 H=5 W=5 K=3", false, "wrong values",
                     "wrong values: 1 of 9\n    (b=0, m=0, h=1, w=1): got 1, expected 2", 3});
  r.score = labkit::compute_score({2, 0.5, 2, false, false, 0, false, true});
  const auto j = labkit::to_json(r);
  CHECK(j["seed"] == "18446744073709551557");
  const std::string text = labkit::format_text(j);
  CHECK(text.find("FAIL") != std::string::npos);
  CHECK(text.find("(b=0, m=0, h=1, w=1)") != std::string::npos);
  CHECK(text.find("Verdict: FAILED (incorrect)") != std::string::npos);
  CHECK(text.find("--seed 18446744073709551557") != std::string::npos);
  CHECK(text.find("course contract") == std::string::npos);  // the general contract goes unsaid
  r.contract = "course";
  r.timed_region = "op";
  CHECK(labkit::format_text(labkit::to_json(r)).find("op time, course contract]") != std::string::npos);

  const auto g = labkit::gradescope({j});
  CHECK(g["score"] == 0);
  CHECK(g["max_score"] == 2);
  REQUIRE(g["tests"].size() == 1);
  CHECK(g["tests"][0]["status"] == "failed");
  CHECK(g["tests"][0]["max_score"] == 2);
  CHECK(g["tests"][0]["output"].get<std::string>().find("03-tiling") != std::string::npos);
  CHECK(labkit::verdict::exit_code("passed") == 0);
  CHECK(labkit::verdict::exit_code("timeout") == 1);
  CHECK(labkit::verdict::exit_code("no-device") == 77);
}

TEST_CASE("the Timing section says the lab was stopped for the baseline, with the drain and each shape's ratio") {
  labkit::GradeResult r;
  r.id = "10-streams";
  r.verdict = labkit::verdict::kPassed;
  r.timed = true;
  r.timed_region = "layer";
  labkit::ShapeTiming s;
  s.name = "conv1 B=1000";
  s.base_ms = 10.5;
  s.lab_ms = 8;
  s.speedup = 1.31;
  s.base_beside_ms = 10.5;
  s.base_clean_ms = 10;
  s.base_beside_over_clean = 1.05;
  s.interference_limit = 1.25;
  r.timing.push_back(s);
  r.still = {true, 40, 3, 1, 20.4, 0.031, 0.1, 20, 0.4, 4};
  r.phases.emplace_back(std::string(labkit::kMeasuredAgainPhase) + " (2 of 3)", 4.2);
  const auto j = labkit::to_json(r);
  CHECK(j["timing"]["still"]["lab_paused_for_baseline"] == true);
  CHECK(j["timing"]["still"]["capped_samples"] == 1);
  CHECK(j["timing"]["still"]["idle_probe_ms"] == 0.031);
  CHECK(j["timing"]["shapes"][0]["baseline_beside_over_clean"] == 1.05);
  CHECK(j["timing"]["shapes"][0]["interference_limit"] == 1.25);
  const std::string text = labkit::format_text(j);
  CHECK_MESSAGE(text.find("the lab was stopped for each of the baseline's 40 samples") != std::string::npos, text);
  CHECK_MESSAGE(text.find("still busy after 20 ms before 1") != std::string::npos, text);
  CHECK_MESSAGE(text.find("conv1 B=1000 1.050 (at most 1.25)") != std::string::npos, text);
  CHECK_MESSAGE(text.find("measured 2 times: the baseline ran slower beside the lab in the first one") !=
                    std::string::npos, text);
}

TEST_CASE("the memory check's section: skipped, clean, or the tool's finding with how the tool ended") {
  labkit::GradeResult r;
  r.id = "03-tiling";
  r.verdict = labkit::verdict::kPassed;
  nlohmann::json j = labkit::to_json(r);
  j["sanitizer"] = {{"check", "memory"}, {"skipped", "--quick"}};
  CHECK(labkit::format_text(j).find("Memory check: skipped (--quick)") != std::string::npos);

  j["sanitizer"] = {{"check", "memory"}, {"batch", 1}, {"seconds", 2.5},
                    {"tools", {{{"tool", "memcheck"}, {"completed", true}, {"errors", 0}, {"findings", nlohmann::json::array()},
                                {"seconds", 1.0}, {"status", "exited with code 0"}, {"verdict", "clean"}},
                               {{"tool", "racecheck"}, {"completed", false}, {"errors", 0}, {"findings", nlohmann::json::array()},
                                {"seconds", 1.5}, {"status", "was killed by SIGKILL"}, {"verdict", "protocol-error"}}}}};
  const std::string text = labkit::format_text(j);
  CHECK(text.find("Memory check (compute-sanitizer in the sandbox") != std::string::npos);
  CHECK(text.find("memcheck   no errors (1.0 s)") != std::string::npos);
  CHECK(text.find("racecheck  protocol-error (compute-sanitizer was killed by SIGKILL) (1.5 s)") != std::string::npos);
}

