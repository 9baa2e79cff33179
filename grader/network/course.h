// grader/network/course.h — the course's own comparison (`labkit report --course`). The course the kit
// comes from (ECE408's project milestones) measures each optimization on its own against the fused
// kernel, on one number: the SUM of conv1's and conv2's Op Time at batch 10000. This table is that
// measure, drawn from the same runs (grader/network/network_run.h) as the milestone tables.
//
//   course_cells   one batch, one row per implementation: Op Time 1 (conv1), Op Time 2 (conv2),
//                  conv1 + conv2, that sum against the reference row's sum in words a student
//                  reads right ("2.06x slower", "1.62x faster", "reference"), Accuracy
//   course_table   the same table as md/csv/tex, or json (the runs with their sum and ratio)
//   course_ratio   a row's sum / the reference's sum (> 1: slower than the reference)
//   ratio_words    a ratio as the table says it
//
// Contract
//   * The reference is a row of the table, named `reference` (by default "06-fusion (solution)",
//     the instructor's fused kernel): its own ratio is 1 and its cell says "reference".
//   * Ratios are of the unrounded sums. A ratio rounding to 1.00 says "same (1.00x)"; above it
//     "<ratio>x slower", below it "<1/ratio>x faster": the larger number is always the factor.
//   * A failed run keeps its row, its message in place of its numbers (md, tex: "failed: ...";
//     csv, json: an "error" field), never a number. When the reference itself failed, or is not
//     among the rows, every vs cell is empty and the caption says why.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "grader/network/milestone.h"

namespace labkit::milestone {

// The row name of a lab's instructor solution in a report ("06-fusion" -> "06-fusion (solution)").
std::string solution_row(const std::string& lab);

// nullopt when the row or the reference has no run.
std::optional<double> course_ratio(const Entry& row, const Entry* reference);
std::string ratio_words(double ratio);

Cells course_cells(int batch, const std::vector<Entry>& rows, const std::string& reference, bool csv);
std::string course_table(int batch, const std::vector<Entry>& rows, const std::string& reference, Format f);

}  // namespace labkit::milestone
