// grader/judge/pages.h — the kit's web pages, each drawn with grader/judge/html.h from the same data the text
// outputs come from (so a page and its Markdown/CSV can never disagree):
//
//   report_page   `labkit report --html`: the milestone tables (and with --compare the tables per
//                 batch and the chart, with the physical floor where the runs recorded it), the
//                 GPU and driver, the test set, and how the numbers were measured
//   grade_page    one lab's grading result (a `labkit grade --json` result): verdict, the failing
//                 cases with their first wrong elements, the timing table with its interval,
//                 evidence found and missing, the streams timeline (grader/tools/timeline.h: charts
//                 `svg.timeline`, section "timeline-section"), the score lines, the next hint, the
//                 lab's own log
//   class_page    the class dashboard of `labkit bulk collect`: per lab the score histogram, the
//                 verdict counts, the leaderboard, and a row per student (linking to that
//                 student's grade page); the students that could not be merged
//
// Table ids (tests/web reads them): report: "compare-<batch>", "milestone-<n>" (n from 1, one per
// implementation); grade: "cases", "timing", "evidence", "score"; class: "students-<lab>",
// "leaderboard-<lab>", "verdicts-<lab>", "missing".
#pragma once

#include <functional>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "grader/tools/bulk.h"
#include "grader/network/milestone.h"

namespace labkit::pages {

// `saved_from`: the file --from read the runs from ("" when they ran now).
std::string report_page(const milestone::Report& report, const std::string& saved_from);

// `back`: a link shown at the top (e.g. "../../class.html"), "" for none.
std::string grade_page(const nlohmann::json& result, const std::string& back = "");

struct ClassData {
  std::vector<bulk::StudentResult> students;
  std::vector<bulk::Problem> problems;
  std::string majority_gpu;
  double max_noise = 0;
  std::map<std::string, std::vector<bulk::LeaderEntry>> leaderboard;
  // The relative link of a student's page for one lab ("" when there is none).
  std::function<std::string(const std::string& student, const std::string& lab)> page_of;
};
std::string class_page(const ClassData& data);

}  // namespace labkit::pages
