// grader/tools/bulk.h — merging a class's bulk-grading results (`labkit bulk collect`): the class CSV,
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
//                  (StoppingRule::max_noise of grader/judge/pair_timing.h unless told otherwise)
//       other-gpu  the student's GPU model differs from the majority of the class's
//       low-clock  a timed shape ran below 90% of the GPU's maximum SM clock (throttled)
//       other-clock  the student's GPU has another maximum SM clock than the majority's (counted
//                  per student, as other-gpu): same model, differently set up
//       not-graded the student has no complete result yet (see below)
//   * Which GPU graded a student: the node, the GPU index as Slurm gave it (task.json
//     "slurm_gpus", else its CUDA_VISIBLE_DEVICES) and the UUID nvidia-smi gave for it
//     (task.json "gpu".uuid); on every row of the student, and per GPU in gpu_rows().
//   * Not graded yet: a student of students.txt without a complete result (no folder, grade.json
//     or results.json missing or unreadable: the task never ran, was killed or is running) is a
//     Problem. class_csv() lists such a student with one row per lab of `Problem::labs`, verdict
//     not-graded, every other field empty but the flag; histograms and leaderboard leave them out.
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

inline const char* kNotGraded = "not-graded";

struct LabRow {
  std::string student, lab, kind, verdict, gpu;
  std::string node, gpu_index, gpu_uuid;  // which GPU graded it (see the contract)
  std::optional<bool> correct;
  double speedup = 0, speedup_low = 0, speedup_high = 0;  // 0: not measured
  double score = 0, max_score = 0;
  double worst_noise = 0;     // largest noise of a timed shape
  int min_sm_clock_mhz = 0;   // lowest SM clock read after a timed shape (0: unknown)
  int max_sm_clock_mhz = 0;   // the GPU's maximum SM clock (0: unknown)
  std::vector<std::string> flags;
};

struct StudentResult {
  std::string student, gpu, node, gpu_index, gpu_uuid;
  int max_sm_clock_mhz = 0;  // the GPU's maximum SM clock (0: unknown)
  std::vector<LabRow> rows;
};

// `task` is OUT_DIR/<student>/task.json when there is one (node, nvidia-smi GPU name), else null.
StudentResult parse_student(const std::string& student, const nlohmann::json& grade,
                            const nlohmann::json& task, double max_noise);

std::string majority_gpu(const std::vector<StudentResult>& students);
// Adds other-gpu (against `majority`) to every row of a student on another GPU.
void flag_other_gpu(std::vector<StudentResult>& students, const std::string& majority);

// Adds other-clock to every row of a student whose GPU's maximum SM clock is known and differs
// from the majority of the known ones (students counted; a tie goes to the higher clock).
void flag_other_clock(std::vector<StudentResult>& students);

struct Problem {
  std::string student, reason;
  std::vector<std::string> labs;  // the rows class.csv lists as not-graded
};

// student,lab,verdict,correct,speedup,score,max_score,gpu,flags,node,gpu_index,gpu_uuid,
// max_sm_clock_mhz,min_sm_clock_mhz (RFC 4180 quoting); then the not-graded rows of `pending`.
std::string class_csv(const std::vector<StudentResult>& students, const std::vector<Problem>& pending = {});
// One row's fields of the class CSV, unquoted (the class page shows the same strings).
std::vector<std::string> csv_cells(const LabRow& r);
// The not-graded rows of one pending student.
std::vector<LabRow> not_graded_rows(const Problem& p);

// One GPU of the class (node + UUID, else node + index, else model): who it graded and how.
struct GpuRow {
  std::string node, index, uuid, name;
  int max_sm_clock_mhz = 0;
  int students = 0, results = 0, timed = 0, low_clock = 0;
  // Median over labs of (this GPU's median speedup of the lab's correct results / the class's
  // median of the lab); 0 when no lab has a correct timed result on this GPU.
  double relative_speed = 0;
  std::vector<std::string> flags;  // other-gpu, other-clock, low-clock (any of its results)
};
std::vector<GpuRow> gpu_rows(const std::vector<StudentResult>& students);

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

std::string summary_text(const std::vector<StudentResult>& students, const std::vector<Problem>& problems,
                         const std::string& majority, double max_noise);
std::string summary_svg(const std::vector<Histogram>& hists, const std::string& subtitle);
std::string leaderboard_text(const std::map<std::string, std::vector<LeaderEntry>>& board);

}  // namespace labkit::bulk
