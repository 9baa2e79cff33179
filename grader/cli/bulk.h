// bulk.h — `labkit bulk`: grading a whole class on a Slurm cluster (docs/instructor-guide.md,
// "Bulk grading on a Slurm cluster"). submit writes and submits a job array (one task per
// student, tools/slurm/bulk-task.sh); each task ends with `labkit bulk finish`, which turns what
// the task left in its folder into results.json (Gradescope), grade.json and task.json; collect
// merges every student's grade.json (grader/tools/bulk.h).
#pragma once

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>
#include <string>

#include "grader/tools/bulk.h"

namespace labkit::cli::bulk_cmd {

void add_submit(CLI::App& bulk, int& status);
void add_collect(CLI::App& bulk, int& status);
void add_finish(CLI::App& bulk, int& status);

// Writes `text` to `file` through a temporary name in the same folder and a rename, so that a
// reader (collect, a task killed mid-write) sees the whole old file or the whole new one, never a
// part; throws std::runtime_error naming the file when it cannot.
void write_file(const std::string& file, const std::string& text);

// One student's merged result from OUT_DIR/<student> (grade.json, results.json, task.json):
// "" and `result` set when it is complete, else why not (the not-graded reason of collect, and
// what `submit --resubmit` regrades). `index` is the student's task index, for the message.
std::string read_student(const std::string& student_dir, const std::string& student, const std::string& index,
                         double max_noise, bulk::StudentResult& result);

// A student's grade pages, STUDENT_DIR/pages/<lab>.html (grader/judge/pages.h grade_page), one per
// result of `results` (a `labkit grade --json` result each); each links back to OUT_DIR/class.html.
// A result whose lab id is not a plain folder name gets no page (and is named on stderr).
inline const char* kPagesFolder = "pages";
void write_grade_pages(const std::string& student_dir, const nlohmann::json& results);

}  // namespace labkit::cli::bulk_cmd
