// bulk.h — `labkit bulk`: grading a whole class on a Slurm cluster (docs/instructor-guide.md,
// "Bulk grading on a Slurm cluster"). submit writes and submits a job array (one task per
// student, tools/slurm/bulk-task.sh); each task ends with `labkit bulk finish`, which turns what
// the task left in its folder into results.json (Gradescope), grade.json and task.json; collect
// merges every student's grade.json (labkit/bulk.h).
#pragma once

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>
#include <string>

namespace labkit::cli::bulk_cmd {

void add_submit(CLI::App& bulk, int& status);
void add_collect(CLI::App& bulk, int& status);
void add_finish(CLI::App& bulk, int& status);

// Writes `text` to `file`; throws std::runtime_error naming the file when it cannot.
void write_file(const std::string& file, const std::string& text);

// A student's grade pages, STUDENT_DIR/pages/<lab>.html (labkit/pages.h grade_page), one per
// result of `results` (a `labkit grade --json` result each); each links back to OUT_DIR/class.html.
// A result whose lab id is not a plain folder name gets no page (and is named on stderr).
inline const char* kPagesFolder = "pages";
void write_grade_pages(const std::string& student_dir, const nlohmann::json& results);

}  // namespace labkit::cli::bulk_cmd
