// report_page.cpp — `labkit report --html` (grader/judge/pages.h): the milestone report as a page. The
// cells are milestone_cells/compare_cells, the very strings the Markdown report prints; numbers
// also carry their value so that a click on a header sorts them as numbers. With --course the
// page opens with the course's table (grader/network/course.h), its vs column sorted by the ratio.
#include <fmt/core.h>

#include <algorithm>
#include <cstdlib>
#include <set>

#include "grader/network/course.h"
#include "grader/judge/html.h"
#include "grader/judge/pages.h"

namespace labkit::pages {
namespace {

namespace ms = labkit::milestone;

std::string plain(std::string caption) {
  std::erase(caption, '*');  // the Markdown bold of a caption
  return caption;
}

// A cell of the text report as a page cell: a number with at most a unit after it ("2.500 ms",
// "1.94x", "29.3%", "0 images") sorts by its value; anything else as text, so that
// "01-restrict-unroll (solution)" sorts by name, not as the number 1.
html::Cell cell(const std::string& text) {
  char* end = nullptr;
  const double v = std::strtod(text.c_str(), &end);
  if (text.empty() || end == text.c_str()) return html::Cell{text};
  std::string unit(end);
  std::erase(unit, ' ');
  if (unit.empty() || unit == "ms" || unit == "s" || unit == "x" || unit == "%" || unit == "images")
    return html::number(text, v);
  return html::Cell{text};
}

html::Table table_of(const ms::Cells& c, const std::string& id) {
  html::Table t;
  t.id = id;
  t.caption = plain(c.caption);
  t.header = c.header;
  for (const auto& r : c.rows) {
    std::vector<html::Cell> row;
    if (r.size() == 2 && c.header.size() > 2) {  // a failed run: its message across the row
      row.push_back(cell(r[0]));
      row.push_back(html::Cell{"failed: " + r[1], "bad", "", static_cast<int>(c.header.size()) - 1});
    } else {
      for (const auto& x : r) row.push_back(cell(x));
    }
    t.rows.push_back(std::move(row));
  }
  return t;
}

// The course's table at one batch: the vs cells sort by the ratio ("1.62x faster" before
// "2.06x slower"), faster in green, slower in amber (the words say it too).
html::Table course_table_of(int batch, const std::vector<ms::Entry>& column, const std::string& reference) {
  html::Table t = table_of(ms::course_cells(batch, column, reference, false), fmt::format("course-{}", batch));
  const ms::Entry* ref = nullptr;
  for (const ms::Entry& e : column)
    if (e.name == reference) ref = &e;
  for (std::size_t i = 0; i < column.size() && i < t.rows.size(); ++i) {
    const auto ratio = ms::course_ratio(column[i], ref);
    if (!ratio || t.rows[i].size() < 5) continue;
    html::Cell& vs = t.rows[i][4];
    vs = html::number(vs.text, *ratio);
    if (&column[i] != ref) vs.tone = *ratio < 1 ? "good" : vs.text.starts_with("same") ? "" : "warn";
  }
  return t;
}

void context(html::Page& page, const ms::Report& report, const std::string& saved_from) {
  std::vector<ms::Entry> all;
  for (const auto& row : report.runs) all.insert(all.end(), row.begin(), row.end());
  std::set<std::string> data, models;
  int clock = 0;
  for (const ms::Entry& e : all)
    if (e.run) {
      data.insert(fmt::format("{} (checksum {})", e.run->data_source, e.run->data_checksum));
      models.insert(e.run->model_dir);
      clock = std::max(clock, e.run->sm_clock_mhz);
    }
  auto join = [](const std::set<std::string>& s) {
    std::string out;
    for (const auto& x : s) out += (out.empty() ? "" : "; ") + x;
    return out.empty() ? std::string("(no run finished)") : out;
  };
  std::vector<std::string> batches;
  for (int b : report.batches) batches.push_back(std::to_string(b));
  std::string batch_list;
  for (const auto& b : batches) batch_list += (batch_list.empty() ? "" : ", ") + b;
  page.facts({{"GPU and driver", ms::device_of(all)},
              {"SM clock after the runs", clock > 0 ? fmt::format("{} MHz", clock) : "not read"},
              {"Batch sizes", batch_list},
              {"Implementations", std::to_string(report.runs.size())},
              {"Test set", join(data)},
              {"Model", join(models)},
              {"Source", saved_from.empty() ? "measured by this labkit report run"
                                            : "runs saved in " + saved_from + " (labkit report --from)"}});
}

void method(html::Page& page, const ms::Report& report) {
  std::size_t repeats = 0;
  for (const auto& row : report.runs)
    for (const ms::Entry& e : row)
      if (e.run) repeats = std::max(repeats, e.run->conv[0].samples_ms.size());
  page.heading(2, "How it was measured", "method");
  page.bullets({
      "Each implementation runs the whole network (conv1, ReLU, max-pool, conv2, ReLU, max-pool, two fully "
      "connected layers) on the first Batch Size images of the test set, in a process of its own.",
      repeats > 0 ? fmt::format("Op Time k: CUDA events around conv_forward_gpu of conv layer k, with the L2 cache "
                                "flushed before the call; the median of {} more timed calls on fresh inputs after the "
                                "network's own call.", repeats)
                  : "Op Time k: CUDA events around conv_forward_gpu of conv layer k, with the L2 cache flushed "
                    "before the call (the network's own call; no repeats were asked for). The CPU reference is "
                    "timed by the host clock.",
      "A lab's conv runs in its sandboxed harness and is judged as in grading: its output sealed by a digest, "
      "its time bounded by the judge's own clock and by the shape's physical floor.",
      "Total Execution Time: the host clock from the program's start until the accuracy is known (loading the "
      "data and model, CUDA start-up, both conv layers and the CPU layers; the repeats are not in it).",
      "Accuracy: the share of the images the network classifies right; every other layer is the same CPU code "
      "for every implementation, so two implementations that differ, differ in their conv.",
  });
}

}  // namespace

std::string report_page(const ms::Report& report, const std::string& saved_from) {
  html::Page page("labkit milestone report");
  page.heading(1, "Milestone report");
  context(page, report, saved_from);
  if (!report.course_reference.empty()) {
    page.heading(2, "Course comparison", "course");
    page.paragraph(fmt::format("As the course measures each optimization: the sum of conv1's and conv2's Op Time, "
                               "against {}'s sum.", report.course_reference));
    for (std::size_t k = 0; k < report.batches.size(); ++k) {
      std::vector<ms::Entry> column;
      for (const auto& row : report.runs) column.push_back(row.at(k));
      page.table(course_table_of(report.batches[k], column, report.course_reference));
    }
  }
  if (report.compare && !report.runs.empty()) {
    std::vector<ms::Entry> last;
    for (const auto& row : report.runs) last.push_back(row.back());
    page.heading(2, fmt::format("Comparison at batch {}", report.batches.back()), "chart");
    page.svg(ms::compare_svg(report.batches.back(), last, ms::device_of(last)));
    for (std::size_t k = 0; k < report.batches.size(); ++k) {
      std::vector<ms::Entry> column;
      for (const auto& row : report.runs) column.push_back(row.at(k));
      page.heading(3, fmt::format("Batch {}", report.batches[k]));
      page.table(table_of(ms::compare_cells(report.batches[k], column, false), fmt::format("compare-{}", report.batches[k])));
    }
  }
  // Where each implementation's Total Execution Time went, at the largest batch (milestone.h).
  if (!report.runs.empty()) {
    std::vector<ms::Entry> last;
    for (const auto& row : report.runs)
      if (!row.empty()) last.push_back(row.back());
    const ms::Cells parts = ms::breakdown_cells(report.batches.empty() ? 0 : report.batches.back(), last, false);
    if (!parts.rows.empty()) {
      page.heading(2, "Where the Total Execution Time went", "breakdown");
      page.table(table_of(parts, "breakdown"));
    }
    const ms::Cells startup = ms::startup_cells(report.batches.empty() ? 0 : report.batches.back(), last);
    if (!startup.rows.empty()) {
      page.heading(2, "Where a harness's start-up went", "startup");
      page.table(table_of(startup, "startup"));
    }
  }
  page.heading(2, "Milestone tables", "milestones");
  for (std::size_t s = 0; s < report.runs.size(); ++s) {
    const auto& row = report.runs[s];
    const std::string name = row.empty() ? "" : row.front().name;
    page.table(table_of(ms::milestone_cells(name, row, false), fmt::format("milestone-{}", s + 1)));
    if (!row.empty() && row.front().layer_timed)
      page.paragraph(fmt::format("{} is graded on Layer Time (prolog + op + epilog, host to host, on pinned host "
                                 "arrays, as this program's are); the Op Time above is not what it optimizes.", name), "warn");
  }
  method(page, report);
  return page.render();
}

}  // namespace labkit::pages
