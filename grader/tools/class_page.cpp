// class_page.cpp — the class dashboard (grader/judge/pages.h class_page), written by `labkit bulk
// collect` beside class.csv. A student's row shows the CSV's own fields (bulk::csv_cells), so the
// page and the CSV cannot disagree; the histograms are the kit's own SVG (bulk::summary_svg).
#include <fmt/core.h>

#include <algorithm>
#include <map>

#include "grader/judge/html.h"
#include "grader/judge/pages.h"

namespace labkit::pages {
namespace {

std::string join(const std::vector<std::string>& v, const char* sep) {
  std::string out;
  for (const auto& s : v) out += (out.empty() ? "" : sep) + s;
  return out;
}

std::vector<std::pair<std::string, int>> verdict_counts(const ClassData& d, const std::string& lab) {
  std::map<std::string, int> n;
  for (const auto& s : d.students)
    for (const auto& r : s.rows)
      if (r.lab == lab) ++n[r.verdict];
  std::vector<std::pair<std::string, int>> v(n.begin(), n.end());
  std::stable_sort(v.begin(), v.end(), [](const auto& a, const auto& b) { return a.second > b.second; });
  return v;
}

std::string tone_of(const std::string& verdict) {
  if (verdict == "passed") return "good";
  if (verdict == "missing-evidence" || verdict == "no-device" || verdict == bulk::kNotGraded) return "warn";
  return "bad";
}

// The students of one lab: the CSV's fields, the student linking to their page.
html::Table students_table(const ClassData& d, const std::string& lab) {
  html::Table t{"students-" + lab, "Every student (the rows of class.csv for this lab)",
                {"Student", "Verdict", "Correct", "Speedup", "Score", "Max score", "GPU", "Flags"}, {}, true};
  std::vector<const bulk::LabRow*> rows;
  for (const auto& s : d.students)
    for (const auto& r : s.rows) rows.push_back(&r);
  std::vector<bulk::LabRow> pending;  // the not-graded rows, as class.csv lists them
  for (const auto& p : d.problems)
    for (auto& r : bulk::not_graded_rows(p)) pending.push_back(std::move(r));
  for (const auto& r : pending) rows.push_back(&r);
  for (const bulk::LabRow* row : rows) {
      const bulk::LabRow& r = *row;
      if (r.lab != lab) continue;
      const std::vector<std::string> f = bulk::csv_cells(r);  // student,lab,verdict,correct,speedup,score,max,gpu,flags
      html::Cell student{f[0]};
      if (d.page_of && r.verdict != bulk::kNotGraded) student.href = d.page_of(r.student, r.lab);
      t.rows.push_back({student, html::Cell{f[2], tone_of(r.verdict)}, html::Cell{f[3]},
                        r.speedup > 0 ? html::number(f[4], r.speedup) : html::Cell{f[4]}, html::number(f[5], r.score),
                        html::number(f[6], r.max_score), html::Cell{f[7]}, html::Cell{f[8], f[8].empty() ? "" : "warn"}});
  }
  return t;
}

// Which GPU graded whom: the same kernels graded on every GPU of a node should score alike.
html::Table gpu_table(const ClassData& d) {
  html::Table t{"gpus", "GPUs: which GPU graded whom (node, index as Slurm gave it, nvidia-smi's UUID)",
                {"Node", "GPU", "UUID", "Model", "Max SM MHz", "Students", "Results", "Timed", "Low-clock",
                 "Relative speed", "Flags"}, {}, true};
  for (const bulk::GpuRow& g : bulk::gpu_rows(d.students)) {
    html::Cell low_clock = html::number(std::to_string(g.low_clock), g.low_clock);
    if (g.low_clock) low_clock.tone = "warn";
    t.rows.push_back({html::Cell{g.node}, html::Cell{g.index}, html::Cell{g.uuid}, html::Cell{g.name},
                      html::number(g.max_sm_clock_mhz > 0 ? std::to_string(g.max_sm_clock_mhz) : "", g.max_sm_clock_mhz),
                      html::number(std::to_string(g.students), g.students), html::number(std::to_string(g.results), g.results),
                      html::number(std::to_string(g.timed), g.timed),
                      low_clock,
                      g.relative_speed > 0 ? html::number(fmt::format("{:.3f}", g.relative_speed), g.relative_speed)
                                           : html::Cell{""},
                      html::Cell{join(g.flags, ", "), g.flags.empty() ? "" : "warn"}});
  }
  return t;
}

void lab_section(html::Page& page, const ClassData& d, const bulk::Histogram& h) {
  page.heading(2, h.lab, "lab-" + h.lab);
  page.paragraph(fmt::format("{} result(s), mean score {:.2f} of {:g}.", h.count, h.mean, h.max_score));
  page.svg(bulk::summary_svg({h}, "students per bin of score / points"));
  html::Table verdicts{"verdicts-" + h.lab, "Verdicts", {"Verdict", "Students"}, {}, true};
  for (const auto& [v, n] : verdict_counts(d, h.lab))
    verdicts.rows.push_back({html::Cell{v, tone_of(v)}, html::number(std::to_string(n), n)});
  page.table(verdicts);
  if (const auto it = d.leaderboard.find(h.lab); it != d.leaderboard.end()) {
    html::Table board{"leaderboard-" + h.lab, "Leaderboard: the fastest correct results (speedup over the baseline)",
                      {"Rank", "Student", "Speedup", "95% interval", "GPU", "Flags"}, {}, true};
    int rank = 0;
    for (const bulk::LeaderEntry& e : it->second) {
      ++rank;
      html::Cell student{e.student};
      if (d.page_of) student.href = d.page_of(e.student, h.lab);
      board.rows.push_back({html::number(std::to_string(rank), rank), student,
                            html::number(fmt::format("{:.2f}x", e.speedup), e.speedup),
                            html::number(fmt::format("[{:.3f}, {:.3f}]", e.low, e.high), e.low), html::Cell{e.gpu},
                            html::Cell{join(e.flags, ", "), e.flags.empty() ? "" : "warn"}});
    }
    page.table(board);
  }
  page.table(students_table(d, h.lab));
}

}  // namespace

std::string class_page(const ClassData& d) {
  html::Page page("labkit class dashboard");
  page.heading(1, "Class dashboard");
  std::size_t other_gpu = 0, noisy = 0;
  for (const auto& s : d.students)
    for (const auto& r : s.rows) {
      other_gpu += std::count(r.flags.begin(), r.flags.end(), "other-gpu");
      noisy += std::count(r.flags.begin(), r.flags.end(), "noisy");
    }
  page.facts({{"Students merged", std::to_string(d.students.size())},
              {"Missing or corrupt", std::to_string(d.problems.size())},
              {"Majority GPU", d.majority_gpu.empty() ? "(none recorded)" : d.majority_gpu},
              {"Results on another GPU (other-gpu)", std::to_string(other_gpu)},
              {"Noisy timings (noise above " + fmt::format("{:g}", 100 * d.max_noise) + "% or not converged)",
               std::to_string(noisy)},
              {"Flags", "noisy: a timed shape did not settle; other-gpu: not the class's majority GPU; "
                        "other-clock: a GPU whose maximum SM clock is not the class's majority; "
                        "low-clock: a timed shape ran below 90% of the GPU's maximum SM clock; "
                        "not-graded: no complete result yet (labkit bulk submit --resubmit)"}});
  const std::vector<bulk::Histogram> hists = bulk::histograms(d.students);
  html::Table labs{"labs", "Labs", {"Lab", "Results", "Mean score", "Of", "Verdicts"}, {}, true};
  for (const auto& h : hists) {
    std::string counts;
    for (const auto& [v, n] : verdict_counts(d, h.lab)) counts += fmt::format("{}{} {}", counts.empty() ? "" : ", ", v, n);
    labs.rows.push_back({html::Cell{h.lab, "", "#lab-" + h.lab}, html::number(std::to_string(h.count), h.count),
                         html::number(fmt::format("{:.2f}", h.mean), h.mean),
                         html::number(fmt::format("{:g}", h.max_score), h.max_score), html::Cell{counts}});
  }
  page.table(labs);
  page.table(gpu_table(d));
  for (const auto& h : hists) lab_section(page, d, h);
  if (!d.problems.empty()) {
    page.heading(2, "Not graded yet: missing, incomplete or corrupt results", "not-merged");
    page.paragraph("Their rows in class.csv say not-graded. `labkit bulk submit --resubmit OUT_DIR` grades these "
                   "students again, and only these.");
    html::Table missing{"missing", "", {"Student", "Reason"}, {}, true};
    for (const auto& p : d.problems) missing.rows.push_back({html::Cell{p.student}, html::Cell{p.reason}});
    page.table(missing);
  }
  return page.render();
}

}  // namespace labkit::pages
