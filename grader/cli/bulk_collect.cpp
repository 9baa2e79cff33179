// `labkit bulk collect OUT_DIR` — merges every student's grade.json (written by the Slurm tasks)
// into OUT_DIR/class.csv, summary.txt, summary.svg, leaderboard.txt, missing.txt and class.html (the
// dashboard, linking to each student's grade pages, OUT_DIR/<student>/pages/<lab>.html, which it
// writes again from grade.json so that they match what was merged). The students
// are those of OUT_DIR/students.txt (written by submit); a student whose folder, grade.json or
// results.json is missing or unreadable is not graded yet: listed in missing.txt with the reason
// and in class.csv with not-graded rows, never dropped. A task writes grade.json last and by
// rename (`labkit bulk finish`), so a task killed mid-grade leaves no grade.json: nothing partial
// is merged, and `labkit bulk submit --resubmit OUT_DIR` grades exactly these students again.
// Exit 0 when every student merged, 1 when any is missing or corrupt (everything still written),
// 2 when OUT_DIR is not a bulk output folder.
#include <fmt/core.h>

#include <filesystem>
#include <fstream>
#include <memory>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

#include "bulk.h"
#include "grader/tools/bulk.h"
#include "grader/core/exit_codes.h"
#include "grader/judge/html.h"
#include "grader/judge/pages.h"
#include "grader/judge/pair_timing.h"

namespace labkit::cli::bulk_cmd {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

struct CollectOptions {
  std::string out_dir;
  double max_noise = StoppingRule{}.max_noise;
  int top = 10;
};

// Parses FILE; on failure returns null and says why in `why`.
json read_json(const fs::path& file, std::string& why) {
  std::ifstream in(file);
  if (!in) {
    why = fmt::format("{} is missing", file.filename().string());
    return nullptr;
  }
  try {
    return json::parse(in);
  } catch (const json::parse_error& e) {
    why = fmt::format("{} is not valid JSON ({})", file.filename().string(), e.what());
    return nullptr;
  }
}

}  // namespace

std::string read_student(const std::string& dir_arg, const std::string& student, const std::string& index,
                         double max_noise, bulk::StudentResult& result) {
  const fs::path dir = dir_arg;
  if (!fs::is_directory(dir)) return fmt::format("no output folder {} (task {} never ran?)", dir.string(), index);
  std::string why;
  const json grade = read_json(dir / "grade.json", why);
  if (grade.is_null())
    return why + (fs::exists(dir / "grade.log") ? "; see grade.log (killed, or still running?)" : "; the task left no grade.log");
  const json results = read_json(dir / "results.json", why);
  if (results.is_null() || !results.is_object() || !results.contains("tests"))
    return results.is_null() ? why : "results.json is not Gradescope output (no \"tests\")";
  std::string ignored;
  const json task = read_json(dir / "task.json", ignored);
  try {
    result = bulk::parse_student(student, grade, task, max_noise);
  } catch (const bulk::BulkError& e) {
    return e.what();
  }
  return "";
}

namespace {

int run_collect(const CollectOptions& o) {
  const fs::path out = o.out_dir;
  const fs::path list = out / "students.txt";
  std::ifstream in(list);
  if (!in) {
    fmt::print(stderr, "labkit bulk: {}: missing; expected the output folder of `labkit bulk submit` "
                       "(students.txt: task index, student, labs folder)\n", list.string());
    return exit_code::kUsage;
  }
  std::vector<bulk::StudentResult> students;
  std::vector<bulk::Problem> problems;
  std::map<std::string, std::string> submitted_of;  // student -> "03-tiling,06-fusion" (students.txt)
  std::string ignored;
  int line_no = 0;
  for (std::string line; std::getline(in, line);) {
    ++line_no;
    if (line.empty() || line[0] == '#') continue;
    std::istringstream fields(line);
    std::string index, student, labs_folder, submitted;
    std::getline(fields, index, '\t');
    std::getline(fields, student, '\t');
    std::getline(fields, labs_folder, '\t');
    std::getline(fields, submitted, '\t');
    submitted_of[student] = submitted;
    if (!bulk::valid_student_id(student)) {
      problems.push_back({fmt::format("students.txt line {}", line_no), fmt::format("not a student id: \"{}\"", student), {}});
      continue;
    }
    const fs::path dir = out / student;
    bulk::StudentResult result;
    const std::string why = read_student(dir.string(), student, index, o.max_noise, result);
    if (!why.empty()) {
      problems.push_back({student, why, {}});
      continue;
    }
    write_grade_pages(dir.string(), read_json(dir / "grade.json", ignored)["results"]);
    students.push_back(std::move(result));
  }
  // A student not graded yet gets a not-graded row per lab the others have (every lab of the kit:
  // a task grades them all), else per lab of theirs in students.txt.
  std::set<std::string> kit_labs;
  for (const auto& s : students)
    for (const auto& r : s.rows) kit_labs.insert(r.lab);
  for (auto& p : problems) {
    std::set<std::string> labs = kit_labs;
    if (labs.empty()) {
      std::istringstream ids(submitted_of[p.student]);
      for (std::string id; std::getline(ids, id, ',');)
        if (!id.empty()) labs.insert(id);
    }
    p.labs.assign(labs.begin(), labs.end());
  }
  const std::string majority = bulk::majority_gpu(students);
  bulk::flag_other_gpu(students, majority);
  bulk::flag_other_clock(students);
  const auto board = bulk::leaderboard(students, static_cast<std::size_t>(o.top));
  const std::string summary = bulk::summary_text(students, problems, majority, o.max_noise);
  std::string missing = "student\treason\n";
  for (const auto& p : problems) missing += p.student + "\t" + p.reason + "\n";
  write_file((out / "class.csv").string(), bulk::class_csv(students, problems));
  write_file((out / "summary.txt").string(), summary);
  write_file((out / "summary.svg").string(),
             bulk::summary_svg(bulk::histograms(students),
                               fmt::format("{} students merged, {} missing or corrupt; majority GPU {}", students.size(),
                                           problems.size(), majority.empty() ? "(none)" : majority)));
  write_file((out / "leaderboard.txt").string(), bulk::leaderboard_text(board));
  write_file((out / "missing.txt").string(), missing);
  pages::ClassData page{students, problems, majority, o.max_noise, board, [](const std::string& student, const std::string& lab) {
                          return bulk::valid_student_id(lab) ? student + "/" + kPagesFolder + "/" + lab + ".html" : std::string();
                        }};
  html::write_page((out / "class.html").string(), pages::class_page(page));
  fmt::print("{}\nWrote {}/class.csv, summary.txt, summary.svg, leaderboard.txt, missing.txt, class.html\n", summary,
             out.string());
  return problems.empty() ? exit_code::kPass : exit_code::kFail;
}

}  // namespace

void add_collect(CLI::App& bulk, int& status) {
  auto o = std::make_shared<CollectOptions>();
  auto* cmd = bulk.add_subcommand("collect", "Merge the class's results: class.csv, summary (text, SVG), leaderboard, "
                                             "missing/corrupt list");
  cmd->add_option("out_dir", o->out_dir, "the output folder of `labkit bulk submit`")->required();
  cmd->add_option("--max-noise", o->max_noise, "flag timings noisier than this (default: the grader's bound)")
      ->check(CLI::Range(0.0001, 1.0));
  cmd->add_option("--top", o->top, "leaderboard entries per lab")->check(CLI::Range(1, 100000));
  cmd->callback([o, &status] {
    try {
      status = run_collect(*o);
    } catch (const std::exception& e) {
      fmt::print(stderr, "labkit bulk: {}\n", e.what());
      status = exit_code::kKitError;
    }
  });
}

}  // namespace labkit::cli::bulk_cmd
