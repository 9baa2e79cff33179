// grader/judge/report.h — a grading result (its JSON, grader/judge/grade_result.h) for people and machines.
//
//   format_text(result)      the terminal report: verdict, cases, times, speedup with its
//                            interval, evidence, score line by line, the next hint
//   gradescope(results)      Gradescope's results.json: one test per lab, the score, the report
//                            text as each test's output; status "passed"/"failed"
// Both read only the JSON, so they work for results that came back from a child process.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace labkit {

// The phase (a result's "phases") of a timing measured again because the baseline ran slower
// beside the lab (grade_conv.cpp, timing_checks.h): the report counts them.
inline constexpr const char* kMeasuredAgainPhase = "the baseline ran slower beside the lab: measured again";

std::string format_text(const nlohmann::json& result, bool color = false);
nlohmann::json gradescope(const std::vector<nlohmann::json>& results);

}  // namespace labkit
