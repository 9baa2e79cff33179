// labkit/bulk.h — merging a class's bulk-grading results (`labkit bulk collect`): the class CSV,
// the fairness flags, per-lab score histograms (text and SVG) and the leaderboard.
//
// Contract
//   * One student's results come from OUT_DIR/<student>/grade.json, written by the Slurm task
//     (`labkit bulk finish`): {"student", "mode", "results": [one `labkit grade --json` result per
//     lab of the kit]}. parse_student() throws BulkError saying what is wrong with it (not an
//     object, no "results" array, a result without "lab"/"verdict"/"score"); the caller lists
//     that student as corrupt, never drops them silently.
//   * correct: true when the verdict is passed / missing-evidence / hidden-work and correctness
//     cases were run; false for any other graded failure; unknown (nullopt) when correctness was
//     not checked (no-device, evidence-only runs, kit-error).
//   * Flags, one word each, in the CSV's flags column (';'-separated):
//       noisy      a timed shape did not converge or its noise exceeded the grader's bound
//                  (StoppingRule::max_noise of labkit/pair_timing.h unless told otherwise)
//       other-gpu  the student's GPU model differs from the majority of the class's
//       low-clock  a timed shape ran below 90% of the GPU's maximum SM clock (throttled)
//   * GPU of a student: the grader's device name in any of their results; else the task's
//     nvidia-smi name. The majority counts students, not labs; ties go to the name first in
//     alphabetical order. Students without a known GPU are never flagged other-gpu.
//   * Histogram bins of score / max: 0, (0, 25%), [25, 50%), [50, 75%), [75, 100%), 100%.
//   * Leaderboard: per conv lab, the correct results with a measured speedup, fastest first.
#pragma once

#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace labkit::bulk {

struct BulkError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// A folder name usable as a student id: letters, digits, '.', '_', '-', '@', '+'; not starting
// with '.'; at most 128 characters.
bool valid_student_id(const std::string& id);

struct LabRow {
  std::string student, lab, kind, verdict, gpu;
  std::optional<bool> correct;
  double speedup = 0, speedup_low = 0, speedup_high = 0;  // 0: not measured
  double score = 0, max_score = 0;
  double worst_noise = 0;     // largest noise of a timed shape
  int min_sm_clock_mhz = 0;   // lowest SM clock read after a timed shape (0: unknown)
  int max_sm_clock_mhz = 0;   // the GPU's maximum SM clock (0: unknown)
  std::vector<std::string> flags;
};

struct StudentResult {
  std::string student, gpu, node;
  std::vector<LabRow> rows;
};

// `task` is OUT_DIR/<student>/task.json when there is one (node, nvidia-smi GPU name), else null.
StudentResult parse_student(const std::string& student, const nlohmann::json& grade,
                            const nlohmann::json& task, double max_noise);

std::string majority_gpu(const std::vector<StudentResult>& students);
// Adds other-gpu (against `majority`) to every row of a student on another GPU.
void flag_other_gpu(std::vector<StudentResult>& students, const std::string& majority);

// student,lab,verdict,correct,speedup,score,max_score,gpu,flags (RFC 4180 quoting).
std::string class_csv(const std::vector<StudentResult>& students);
// One row's fields of the class CSV, unquoted (the class page shows the same strings).
std::vector<std::string> csv_cells(const LabRow& r);

struct Histogram {
  std::string lab;
  double max_score = 0, mean = 0;
  int count = 0;
  std::vector<int> bins;  // 6 bins, see the contract
};
std::vector<std::string> bin_labels();
std::vector<Histogram> histograms(const std::vector<StudentResult>& students);

struct LeaderEntry {
  std::string student, gpu;
  double speedup = 0, low = 0, high = 0;
  std::vector<std::string> flags;
};
// lab -> entries, fastest first, at most `top` each.
std::map<std::string, std::vector<LeaderEntry>> leaderboard(const std::vector<StudentResult>& students,
                                                            std::size_t top);

struct Problem {
  std::string student, reason;
};

std::string summary_text(const std::vector<StudentResult>& students, const std::vector<Problem>& problems,
                         const std::string& majority, double max_noise);
std::string summary_svg(const std::vector<Histogram>& hists, const std::string& subtitle);
std::string leaderboard_text(const std::map<std::string, std::vector<LeaderEntry>>& board);

}  // namespace labkit::bulk
