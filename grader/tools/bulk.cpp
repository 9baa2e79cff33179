#include "grader/tools/bulk.h"

#include "grader/core/text_escape.h"

#include <fmt/core.h>

#include "grader/core/json_fields.h"

#include <algorithm>
#include <cctype>
#include <cmath>

namespace labkit::bulk {
namespace {

using nlohmann::json;

using json_fields::num;
using json_fields::str;
using json_fields::sub;

std::string join(const std::vector<std::string>& v, const char* sep) {
  std::string out;
  for (const auto& s : v) out += (out.empty() ? "" : sep) + s;
  return out;
}

std::string esc(const std::string& s) { return xml_escape(s); }

bool correct_verdict(const std::string& v) {
  return v == "passed" || v == "missing-evidence" || v == "hidden-work";
}

int bin_of(double score, double max) {
  if (max <= 0 || score <= 0) return 0;
  const double f = score / max;
  if (f >= 1 - 1e-9) return 5;
  if (f < 0.25) return 1;
  if (f < 0.5) return 2;
  return f < 0.75 ? 3 : 4;
}

// "passed 3, incorrect 1, not-submitted 2": the verdicts of one lab, most frequent first.
std::string verdict_counts(const std::vector<StudentResult>& students, const std::string& lab) {
  std::map<std::string, int> n;
  for (const auto& s : students)
    for (const auto& r : s.rows)
      if (r.lab == lab) ++n[r.verdict];
  std::vector<std::pair<std::string, int>> v(n.begin(), n.end());
  std::stable_sort(v.begin(), v.end(), [](const auto& a, const auto& b) { return a.second > b.second; });
  std::string out;
  for (const auto& [verdict, count] : v) out += fmt::format("{}{} {}", out.empty() ? "" : ", ", verdict, count);
  return out;
}

}  // namespace

bool valid_student_id(const std::string& id) {
  if (id.empty() || id.size() > 128 || id[0] == '.') return false;
  return std::all_of(id.begin(), id.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '_' || c == '-' || c == '@' || c == '+';
  });
}

StudentResult parse_student(const std::string& student, const json& grade, const json& task, double max_noise) {
  if (!grade.is_object()) throw BulkError("grade.json does not hold a JSON object");
  if (!grade.contains("results") || !grade.at("results").is_array())
    throw BulkError("grade.json has no \"results\" array");
  if (grade.at("results").empty()) throw BulkError("grade.json has an empty \"results\" array");
  StudentResult s;
  s.student = student;
  s.node = str(task, "node");
  const json& task_gpu = sub(task, "gpu");
  s.gpu_index = str(task, "slurm_gpus");
  if (s.gpu_index.empty()) s.gpu_index = str(task, "cuda_visible_devices");
  s.gpu_uuid = str(task_gpu, "uuid");
  s.max_sm_clock_mhz = static_cast<int>(num(task_gpu, "max_sm_clock_mhz"));
  for (const json& r : grade.at("results")) {
    if (!r.is_object() || !r.contains("lab") || !r.contains("verdict") || !r.contains("score") ||
        !r.at("verdict").is_string() || !r.at("score").is_object() || str(sub(r, "lab"), "id").empty())
      throw BulkError("a result in grade.json lacks \"lab\".id, \"verdict\" or \"score\"");
    LabRow row;
    row.student = student;
    row.node = s.node;
    row.gpu_index = s.gpu_index;
    row.gpu_uuid = s.gpu_uuid;
    row.lab = str(sub(r, "lab"), "id");
    row.kind = str(sub(r, "lab"), "kind");
    row.verdict = r.at("verdict").get<std::string>();
    row.score = num(sub(r, "score"), "total");
    row.max_score = num(sub(r, "score"), "max");
    const bool cases_run = r.contains("cases") && r.at("cases").is_array() && !r.at("cases").empty();
    if (correct_verdict(row.verdict)) {
      if (cases_run) row.correct = true;
    } else if (row.verdict != "no-device" && row.verdict != "kit-error") {
      row.correct = false;
    }
    const json& dev = sub(r, "device");
    row.gpu = str(dev, "name");
    row.max_sm_clock_mhz = static_cast<int>(num(dev, "max_sm_clock_mhz"));
    const json& t = sub(r, "timing");
    if (t.value("measured", false)) {
      row.speedup = num(t, "speedup");
      row.speedup_low = num(t, "speedup_low");
      row.speedup_high = num(t, "speedup_high");
      bool noisy = false, low_clock = false;
      if (t.contains("shapes") && t.at("shapes").is_array())
        for (const json& sh : t.at("shapes")) {
          const double noise = num(sh, "noise");
          row.worst_noise = std::max(row.worst_noise, noise);
          noisy |= !sh.value("converged", true) || noise > max_noise;
          const int clock = static_cast<int>(num(sh, "sm_clock_mhz"));
          if (clock > 0 && (row.min_sm_clock_mhz == 0 || clock < row.min_sm_clock_mhz)) row.min_sm_clock_mhz = clock;
          low_clock |= clock > 0 && row.max_sm_clock_mhz > 0 && clock < 0.9 * row.max_sm_clock_mhz;
        }
      if (noisy) row.flags.push_back("noisy");
      if (low_clock) row.flags.push_back("low-clock");
    }
    if (s.gpu.empty()) s.gpu = row.gpu;
    if (row.max_sm_clock_mhz > 0) s.max_sm_clock_mhz = row.max_sm_clock_mhz;  // the grader's own reading
    s.rows.push_back(std::move(row));
  }
  if (s.gpu.empty()) s.gpu = str(task_gpu, "name");
  for (LabRow& row : s.rows) {
    if (row.gpu.empty()) row.gpu = s.gpu;
    if (row.max_sm_clock_mhz == 0) row.max_sm_clock_mhz = s.max_sm_clock_mhz;
  }
  return s;
}

std::string majority_gpu(const std::vector<StudentResult>& students) {
  std::map<std::string, int> counts;
  for (const auto& s : students)
    if (!s.gpu.empty()) ++counts[s.gpu];
  std::string best;
  int most = 0;
  for (const auto& [name, n] : counts)  // alphabetical: the first of a tie wins
    if (n > most) best = name, most = n;
  return best;
}

void flag_other_gpu(std::vector<StudentResult>& students, const std::string& majority) {
  for (auto& s : students)
    if (!majority.empty() && !s.gpu.empty() && s.gpu != majority)
      for (auto& row : s.rows) row.flags.push_back("other-gpu");
}

void flag_other_clock(std::vector<StudentResult>& students) {
  std::map<int, int> counts;
  for (const auto& s : students)
    if (s.max_sm_clock_mhz > 0) ++counts[s.max_sm_clock_mhz];
  int majority = 0, most = 0;
  for (const auto& [clock, n] : counts)  // ascending: the higher clock of a tie wins
    if (n >= most) majority = clock, most = n;
  for (auto& s : students)
    if (majority > 0 && s.max_sm_clock_mhz > 0 && s.max_sm_clock_mhz != majority)
      for (auto& row : s.rows) row.flags.push_back("other-clock");
}

std::vector<std::string> csv_cells(const LabRow& r) {
  const bool pending = r.verdict == kNotGraded;
  auto clock = [](int mhz) { return mhz > 0 ? std::to_string(mhz) : std::string(); };
  return {r.student, r.lab, r.verdict, r.correct ? (*r.correct ? "true" : "false") : "",
          r.speedup > 0 ? fmt::format("{:.4f}", r.speedup) : "", pending ? "" : fmt::format("{:.4g}", r.score),
          pending ? "" : fmt::format("{:g}", r.max_score), r.gpu, join(r.flags, ";"), r.node, r.gpu_index,
          r.gpu_uuid, clock(r.max_sm_clock_mhz), clock(r.min_sm_clock_mhz)};
}

std::vector<LabRow> not_graded_rows(const Problem& p) {
  std::vector<LabRow> rows;
  if (!valid_student_id(p.student)) return rows;  // a broken students.txt line: missing.txt says so
  for (const std::string& lab : p.labs) {
    LabRow r;
    r.student = p.student;
    r.lab = lab;
    r.verdict = kNotGraded;
    r.flags = {kNotGraded};
    rows.push_back(std::move(r));
  }
  return rows;
}

std::string class_csv(const std::vector<StudentResult>& students, const std::vector<Problem>& pending) {
  std::string out = "student,lab,verdict,correct,speedup,score,max_score,gpu,flags,node,gpu_index,gpu_uuid,"
                    "max_sm_clock_mhz,min_sm_clock_mhz\n";
  auto line = [&out](const LabRow& r) {
    const std::vector<std::string> cells = csv_cells(r);
    for (std::size_t i = 0; i < cells.size(); ++i) {
      if (i) out += ',';
      out += csv_field(cells[i]);
    }
    out += "\n";
  };
  for (const auto& s : students)
    for (const auto& r : s.rows) line(r);
  for (const auto& p : pending)
    for (const auto& r : not_graded_rows(p)) line(r);
  return out;
}

std::vector<GpuRow> gpu_rows(const std::vector<StudentResult>& students) {
  std::map<std::string, GpuRow> by_key;
  std::map<std::string, std::map<std::string, std::vector<double>>> speedups;  // gpu -> lab -> correct speedups
  std::map<std::string, std::vector<double>> class_speedups;                 // lab -> every GPU's
  for (const auto& s : students) {
    const std::string key = s.node + "/" + (!s.gpu_uuid.empty() ? s.gpu_uuid : !s.gpu_index.empty() ? s.gpu_index : s.gpu);
    GpuRow& g = by_key[key];
    g.node = s.node, g.index = s.gpu_index, g.uuid = s.gpu_uuid, g.name = s.gpu;
    g.max_sm_clock_mhz = std::max(g.max_sm_clock_mhz, s.max_sm_clock_mhz);
    ++g.students;
    for (const auto& r : s.rows) {
      ++g.results;
      g.timed += r.speedup > 0;
      for (const auto& f : r.flags) {
        if (f == "low-clock") ++g.low_clock;
        if ((f == "other-gpu" || f == "other-clock" || f == "low-clock") &&
            std::find(g.flags.begin(), g.flags.end(), f) == g.flags.end())
          g.flags.push_back(f);
      }
      if (r.correct.value_or(false) && r.speedup > 0) {
        speedups[key][r.lab].push_back(r.speedup);
        class_speedups[r.lab].push_back(r.speedup);
      }
    }
  }
  auto median = [](std::vector<double> v) {
    std::sort(v.begin(), v.end());
    const std::size_t n = v.size();
    return n == 0 ? 0.0 : n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
  };
  std::vector<GpuRow> out;
  for (auto& [key, g] : by_key) {
    std::vector<double> ratios;
    for (const auto& [lab, v] : speedups[key]) ratios.push_back(median(v) / median(class_speedups[lab]));
    g.relative_speed = median(ratios);
    out.push_back(g);
  }
  return out;
}

std::vector<std::string> bin_labels() { return {"0", "<25%", "25-50%", "50-75%", "75-<100%", "100%"}; }

std::vector<Histogram> histograms(const std::vector<StudentResult>& students) {
  std::map<std::string, Histogram> by_lab;
  for (const auto& s : students)
    for (const auto& r : s.rows) {
      Histogram& h = by_lab[r.lab];
      if (h.bins.empty()) h.lab = r.lab, h.bins.assign(6, 0);
      h.max_score = std::max(h.max_score, r.max_score);
      h.mean += r.score;
      ++h.count;
      ++h.bins[bin_of(r.score, r.max_score)];
    }
  std::vector<Histogram> out;
  for (auto& [lab, h] : by_lab) {
    if (h.count) h.mean /= h.count;
    out.push_back(h);
  }
  return out;
}

std::map<std::string, std::vector<LeaderEntry>> leaderboard(const std::vector<StudentResult>& students,
                                                            std::size_t top) {
  std::map<std::string, std::vector<LeaderEntry>> board;
  for (const auto& s : students)
    for (const auto& r : s.rows)
      if (r.kind == "conv" && r.correct.value_or(false) && r.speedup > 0)
        board[r.lab].push_back({r.student, r.gpu, r.speedup, r.speedup_low, r.speedup_high, r.flags});
  for (auto& [lab, v] : board) {
    std::stable_sort(v.begin(), v.end(), [](const auto& a, const auto& b) { return a.speedup > b.speedup; });
    if (v.size() > top) v.resize(top);
  }
  return board;
}

std::string summary_text(const std::vector<StudentResult>& students, const std::vector<Problem>& problems,
                         const std::string& majority, double max_noise) {
  std::size_t flagged_gpu = 0, noisy = 0;
  for (const auto& s : students)
    for (const auto& r : s.rows) {
      flagged_gpu += std::count(r.flags.begin(), r.flags.end(), "other-gpu");
      noisy += std::count(r.flags.begin(), r.flags.end(), "noisy");
    }
  std::string out = fmt::format("labkit bulk collect: {} student(s) merged, {} missing or corrupt\n",
                                students.size(), problems.size());
  out += fmt::format("Majority GPU: {}; results on another GPU: {}; noisy timings (noise > {:g}% or not "
                     "converged): {}\n",
                     majority.empty() ? "(none recorded)" : majority, flagged_gpu, 100 * max_noise, noisy);
  const auto labels = bin_labels();
  for (const Histogram& h : histograms(students)) {
    out += fmt::format("\n{}: {} result(s), mean {:.2f} / {:g}; {}\n", h.lab, h.count, h.mean, h.max_score,
                       verdict_counts(students, h.lab));
    for (std::size_t b = 0; b < labels.size(); ++b)
      out += fmt::format("  {:>9} {:>4}  {}\n", labels[b], h.bins[b], std::string(h.bins[b] > 60 ? 60 : h.bins[b], '#'));
  }
  out += "\nGPUs (node, index as Slurm gave it, UUID): students, results, timed results, low-clock results, "
         "relative speed (median over labs of the GPU's median correct speedup / the class's)\n";
  for (const GpuRow& g : gpu_rows(students))
    out += fmt::format("  {} GPU {} {} {} ({} MHz max): {} student(s), {} result(s), {} timed, {} low-clock, {}{}\n",
                       g.node.empty() ? "?" : g.node, g.index.empty() ? "?" : g.index, g.uuid.empty() ? "(no UUID)" : g.uuid,
                       g.name.empty() ? "(unknown)" : g.name, g.max_sm_clock_mhz, g.students, g.results, g.timed,
                       g.low_clock, g.relative_speed > 0 ? fmt::format("{:.3f}", g.relative_speed) : "-",
                       g.flags.empty() ? "" : "  (" + join(g.flags, ", ") + ")");
  if (!problems.empty()) {
    out += "\nNot graded yet: missing, incomplete or corrupt results (not merged; class.csv lists them as not-graded;\n"
           "labkit bulk submit --resubmit OUT_DIR grades only these):\n";
    for (const Problem& p : problems) out += fmt::format("  {}: {}\n", p.student, p.reason);
  }
  return out;
}

std::string summary_svg(const std::vector<Histogram>& hists, const std::string& subtitle) {
  const int cols = 2, panel_w = 380, panel_h = 190, top = 56, bar_area = 120;
  const int rows = (static_cast<int>(hists.size()) + cols - 1) / cols;
  const int width = cols * panel_w + 20, height = top + std::max(rows, 1) * panel_h + 10;
  const auto labels = bin_labels();
  std::string svg = fmt::format(
      "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{}\" height=\"{}\" font-family=\"sans-serif\" font-size=\"12\">\n"
      "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n"
      "<text x=\"10\" y=\"22\" font-size=\"16\" font-weight=\"bold\">Scores per lab (students per bin of score / points)</text>\n"
      "<text x=\"10\" y=\"42\" fill=\"#555\">{}</text>\n",
      width, height, esc(subtitle));
  for (std::size_t i = 0; i < hists.size(); ++i) {
    const Histogram& h = hists[i];
    const int x0 = 10 + static_cast<int>(i % cols) * panel_w, y0 = top + static_cast<int>(i / cols) * panel_h;
    const int most = std::max(1, *std::max_element(h.bins.begin(), h.bins.end()));
    svg += fmt::format("<text x=\"{}\" y=\"{}\" font-weight=\"bold\">{} ({} results, mean {:.2f} / {:g})</text>\n",
                       x0, y0 + 14, esc(h.lab), h.count, h.mean, h.max_score);
    const int bw = (panel_w - 40) / static_cast<int>(labels.size());
    for (std::size_t b = 0; b < labels.size(); ++b) {
      const double bh = static_cast<double>(bar_area) * h.bins[b] / most;
      const int bx = x0 + static_cast<int>(b) * bw, base = y0 + 24 + bar_area;
      svg += fmt::format("<rect x=\"{}\" y=\"{:.1f}\" width=\"{}\" height=\"{:.1f}\" fill=\"{}\"/>\n", bx + 4,
                         base - bh, bw - 8, bh, b == 0 ? "#e45756" : b == 5 ? "#54a24b" : "#4c78a8");
      svg += fmt::format("<text x=\"{}\" y=\"{:.1f}\" text-anchor=\"middle\">{}</text>\n", bx + bw / 2,
                         base - bh - 3, h.bins[b]);
      svg += fmt::format("<text x=\"{}\" y=\"{}\" text-anchor=\"middle\" fill=\"#555\">{}</text>\n", bx + bw / 2,
                         base + 14, esc(labels[b]));
    }
  }
  return svg + "</svg>\n";
}

std::string leaderboard_text(const std::map<std::string, std::vector<LeaderEntry>>& board) {
  std::string out = "Leaderboard: fastest correct conv per lab (speedup over the baseline, 95% interval)\n";
  if (board.empty()) out += "\n(no correct conv result with a measured speedup)\n";
  for (const auto& [lab, entries] : board) {
    out += fmt::format("\n{}\n", lab);
    int rank = 0;
    for (const LeaderEntry& e : entries)
      out += fmt::format("  {:>2}. {:<24} {:>7.2f}x  [{:.3f}, {:.3f}]  {}{}\n", ++rank, e.student, e.speedup, e.low,
                         e.high, e.gpu, e.flags.empty() ? "" : "  (" + join(e.flags, ", ") + ")");
  }
  return out;
}

}  // namespace labkit::bulk
