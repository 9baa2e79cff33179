// bulk.h — `labkit bulk`: grading a whole class on a Slurm cluster (docs/instructor-guide.md,
// "Bulk grading on a Slurm cluster"). submit writes and submits a job array (one task per
// student, tools/slurm/bulk-task.sh); each task ends with `labkit bulk finish`, which turns what
// the task left in its folder into results.json (Gradescope), grade.json and task.json; collect
// merges every student's grade.json (labkit/bulk.h).
#pragma once

#include <CLI/CLI.hpp>
#include <string>

namespace labkit::cli::bulk_cmd {

void add_submit(CLI::App& bulk, int& status);
void add_collect(CLI::App& bulk, int& status);
void add_finish(CLI::App& bulk, int& status);

// Writes `text` to `file`; throws std::runtime_error naming the file when it cannot.
void write_file(const std::string& file, const std::string& text);

}  // namespace labkit::cli::bulk_cmd
