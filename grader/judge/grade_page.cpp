// grade_page.cpp — one lab's grading result as a page (grader/judge/pages.h grade_page), read from its
// JSON alone (grader/judge/grade_result.h), like the terminal report (report.cpp format_text): a result
// that came back from a child process, a Slurm task or a saved file draws the same page.
#include <fmt/core.h>

#include "grader/core/json_fields.h"

#include "grader/judge/html.h"
#include "grader/judge/pages.h"
#include "grader/judge/roofline.h"
#include "grader/tools/timeline.h"

namespace labkit::pages {
namespace {

using nlohmann::json;

using json_fields::num;
using json_fields::str;
using json_fields::sub;
using json_fields::list;

html::Cell fixed(double v, const char* format, double key) { return html::number(fmt::format(fmt::runtime(format), v), key); }

void cases(html::Page& page, const json& r) {
  const json& all = list(r, "cases");
  if (all.empty()) return;
  int failed = 0;
  html::Table t{"cases", fmt::format("{} cases; tolerance {}", all.size(), str(r, "tolerance")),
                {"Case", "Origin", "Shape", "Result", "Worst error / allowed"}, {}, true};
  for (const json& c : all) {
    const bool ok = c.value("passed", false);
    failed += !ok;
    t.rows.push_back({html::Cell{str(c, "name")}, html::Cell{str(c, "origin")}, html::Cell{str(c, "shape")},
                      html::Cell{ok ? "ok" : "FAIL: " + str(c, "outcome"), ok ? "good" : "bad"},
                      ok ? fixed(num(c, "worst"), "{:.2f}", num(c, "worst")) : html::Cell{"-"}});
  }
  page.heading(2, "Correctness", "correctness");
  page.table(t);
  if (failed == 0) return;
  page.heading(3, "Failing cases: the first wrong elements");
  for (const json& c : all)
    if (!c.value("passed", false)) {
      page.paragraph(fmt::format("{} ({}): {}", str(c, "name"), str(c, "shape"), str(c, "outcome")), "bad");
      if (!str(c, "detail").empty()) page.preformatted(str(c, "detail"));
    }
}

void timing(html::Page& page, const json& r) {
  const json& t = sub(r, "timing");
  if (!t.value("measured", false) || list(t, "shapes").empty()) return;
  const bool layer = str(sub(r, "lab"), "timed") == "layer";
  html::Table table{"timing",
                    layer ? "Layer Time (prolog + op + epilog, host to host): median of baseline/lab pairs, interleaved, L2 flushed before each"
                          : "Op Time (conv_forward_gpu): median of baseline/lab pairs, interleaved, L2 flushed before each",
                    {"Shape", "Baseline ms", "Lab ms", "Speedup", "95% interval", "Samples", "Noise", "SM MHz", "Notes"}, {}, true};
  for (const json& s : list(t, "shapes")) {
    std::string notes;
    if (!s.value("converged", true)) notes += "noisy: stopped at the time cap. ";
    if (s.value("hidden_work", false))
      notes += fmt::format("+{:.3f} ms of work outside the timed region. ", num(s, "lab_extra_host_ms"));
    table.rows.push_back({html::Cell{str(s, "name")}, fixed(num(s, "baseline_ms"), "{:.4f}", num(s, "baseline_ms")),
                          fixed(num(s, "lab_ms"), "{:.4f}", num(s, "lab_ms")),
                          fixed(num(s, "speedup"), "{:.2f}x", num(s, "speedup")),
                          html::number(fmt::format("[{:.3f}, {:.3f}]", num(s, "speedup_low"), num(s, "speedup_high")),
                                       num(s, "speedup_low")),
                          html::number(std::to_string(s.value("samples", 0)), s.value("samples", 0)),
                          fixed(100 * num(s, "noise"), "{:.1f}%", num(s, "noise")),
                          html::number(std::to_string(s.value("sm_clock_mhz", 0)), s.value("sm_clock_mhz", 0)),
                          html::Cell{notes, notes.empty() ? "" : "warn"}});
  }
  page.heading(2, "Timing", "timing-section");
  page.table(table);
  page.paragraph(fmt::format("Geometric mean speedup {:.2f}x, 95% interval [{:.3f}, {:.3f}]; target {:.2f}x{}.",
                             num(t, "speedup"), num(t, "speedup_low"), num(t, "speedup_high"), num(t, "target_speedup"),
                             str(t, "target_source").empty() ? "" : " (" + str(t, "target_source") + ")"));
}

// How far each shape is from the GPU's limits (grader/judge/roofline.h), as the terminal report prints it:
// the floor of the lab's precision class, which bound decides it, the share of it the lab reached.
void roofline(html::Page& page, const json& r) {
  const json& t = sub(r, "timing");
  const json& peaks = sub(t, "peaks");
  if (peaks.empty()) return;
  const std::string precision = str(sub(r, "lab"), "precision");
  const std::string tensor_class = precision == "any" ? "fp16" : precision;  // "any" may use fp16's tensor cores
  const double tensor_peak = tensor_class == "fp32" ? 0 : num(peaks, (tensor_class + "_tensor_gflops").c_str());
  html::Table table{"roofline",
                    fmt::format("The lab's median against the GPU's rated peaks: fp32 FMA {:.1f} TFLOP/s{}, memory {:.0f} GB/s "
                                "(from {}); floor: the least time at those peaks for the lab's precision class ({}), the longer of its multiply-adds "
                                "at the {} and its bytes at full bandwidth (inputs read once, the output written once less "
                                "the L2's {:.0f} MiB); of floor: floor / lab ms",
                                num(peaks, "fp32_gflops") / 1e3,
                                tensor_peak > 0 ? fmt::format(", {} tensor {:.1f} TFLOP/s", tensor_class, tensor_peak / 1e3) : "",
                                num(peaks, "memory_gbps"), str(peaks, "basis"), precision,
                                tensor_peak > 0 ? tensor_class + " tensor peak" : "fp32 FMA peak",
                                num(peaks, "l2_bytes") / (1 << 20)),
                    {"Shape", "GFLOP/s", "Of fp32 peak", "Of tensor peak", "GB/s", "Of memory peak", "Floor ms", "Bound", "Of floor"},
                    {}, true};
  for (const json& s : list(t, "shapes")) {
    const json& f = sub(s, "roofline");
    if (f.empty()) continue;
    const bool flops = num(f, "gflops") > 0;
    const double floor = num(f, "floor_ms"), lab = num(s, "lab_ms");
    const double share = f.contains("pct_of_floor") ? num(f, "pct_of_floor") : lab > 0 ? 100 * floor / lab : 0;
    html::Cell of_floor = lab > 0 ? html::number(roofline::share_text(share), share) : html::Cell{"-"};
    if (share > 100) of_floor.tone = "bad";
    table.rows.push_back({html::Cell{str(s, "name")},
                          flops ? fixed(num(f, "gflops"), "{:.0f}", num(f, "gflops")) : html::Cell{"-"},
                          flops ? fixed(num(f, "pct_fp32_peak"), "{:.1f}%", num(f, "pct_fp32_peak")) : html::Cell{"-"},
                          flops && tensor_peak > 0 ? fixed(num(f, "pct_tensor_peak"), "{:.1f}%", num(f, "pct_tensor_peak"))
                                                   : html::Cell{"-"},
                          fixed(num(f, "gbps"), "{:.1f}", num(f, "gbps")),
                          fixed(num(f, "pct_memory_peak"), "{:.1f}%", num(f, "pct_memory_peak")),
                          fixed(floor, "{:.4f}", floor), html::Cell{str(f, "bound")}, of_floor});
  }
  if (table.rows.empty()) return;
  page.heading(3, "Roofline", "roofline-section");
  page.table(table);
}

// Executed-kernel evidence: which kernels carry the pattern and their share of the timed GPU time.
std::string executed_detail(const json& p) {
  if (!p.contains("share")) return "";
  std::string kernels;
  for (const json& k : list(p, "kernels")) kernels += (kernels.empty() ? "" : ", ") + k.get<std::string>();
  if (!kernels.empty())
    return fmt::format(" (in {}: {:.1f}% of timed GPU time; needs {:.0f}%)", kernels, 100 * num(p, "share"),
                       100 * num(p, "needed_share"));
  return str(p, "why").empty() ? "" : " (" + str(p, "why") + ")";
}

void evidence(html::Page& page, const json& r) {
  const json& e = sub(r, "evidence");
  if (list(e, "patterns").empty() && list(e, "host").empty()) return;
  const std::string basis = list(e, "patterns").empty() ? std::string() : e.value("basis", std::string()) + "; ";
  html::Table t{"evidence", fmt::format("{}PTX of {}, {} kernel(s); run-time checks", basis, str(sub(r, "lab"), "kernel"), e.value("kernels", 0)),
                {"Evidence", "Status", "Count", "What it shows", "Next"}, {}, true};
  for (const json& p : list(e, "patterns")) {
    const bool ok = p.value("ok", false), absent = p.value("absent", false);
    const std::string status = absent ? (ok ? "absent (as required)" : "PRESENT (must be absent)") : (ok ? "found" : "MISSING");
    t.rows.push_back({html::Cell{str(p, "name")}, html::Cell{status, ok ? "good" : "bad"},
                      html::number(std::to_string(p.value("count", 0)), p.value("count", 0)),
                      html::Cell{str(p, "description") + executed_detail(p)}, html::Cell{ok ? "" : str(p, "hint")}});
  }
  for (const json& h : list(e, "host")) {
    const bool ok = h.value("ok", false);
    t.rows.push_back({html::Cell{str(h, "name") + " (run time)"}, html::Cell{ok ? "found" : "MISSING", ok ? "good" : "bad"},
                      html::Cell{"-"}, html::Cell{str(h, "detail")}, html::Cell{""}});
  }
  page.heading(2, "Evidence of the technique", "evidence-section");
  page.table(t);
}

// The streams timeline of the recorded layer (grader/tools/timeline.h), the lab's above the baseline's.
void timelines(html::Page& page, const json& r) {
  const json& all = list(r, "timeline");
  if (all.empty()) return;
  page.heading(2, "Timeline of the recorded layer", "timeline-section");
  page.paragraph(
      "The layer the streams evidence was recorded on, drawn from CUPTI's records: one lane per stream and copy "
      "direction (HtoD copies, kernels, DtoH copies), time from the layer's start on the x axis, one scale for both. Shaded: overlap, "
      "time in which a kernel runs while a copy or another kernel runs on another stream; the evidence needs it to "
      "be at least 5% of the busy time. Hover a bar for its kernel's name, bytes and times.");
  std::vector<timeline::Timeline> charts;
  for (const json& t : all) charts.push_back(timeline::from_json(t));
  const double scale = timeline::common_scale(charts);  // one time scale: the two layers compare at a glance
  for (const timeline::Timeline& t : charts) page.svg(timeline::svg(t, scale));
}

void score(html::Page& page, const json& r) {
  const json& s = sub(r, "score");
  html::Table t{"score", "", {"Item", "Points", "Of", "Why"}, {}, false};
  for (const json& l : list(s, "lines"))
    t.rows.push_back({html::Cell{str(l, "item")}, fixed(num(l, "points"), "{:.2f}", num(l, "points")),
                      fixed(num(l, "max"), "{:.2f}", num(l, "max")), html::Cell{str(l, "why")}});
  t.rows.push_back({html::Cell{"total"}, fixed(num(s, "total"), "{:.2f}", num(s, "total")),
                    fixed(num(s, "max"), "{:.2f}", num(s, "max")), html::Cell{""}});
  page.heading(2, "Score", "score-section");
  page.table(t);
}

}  // namespace

std::string grade_page(const json& r, const std::string& back) {
  const json& lab = sub(r, "lab");
  const json& dev = sub(r, "device");
  const std::string v = str(r, "verdict");
  html::Page page(fmt::format("labkit grade: {} ({})", str(lab, "id"), v));
  if (!back.empty()) page.link("Back to the class dashboard", back);
  page.heading(1, fmt::format("{}: {}", str(lab, "id"), str(lab, "title")));
  const std::string head = v == "passed" ? "PASSED" : v == "no-device" ? "SKIPPED" : "FAILED";
  page.paragraph(fmt::format("Verdict: {} ({})", head, v), v == "passed" ? "good" : v == "no-device" ? "warn" : "bad");
  if (!str(r, "message").empty()) page.preformatted(str(r, "message"));
  if (!str(r, "hint").empty()) page.paragraph("Next: " + str(r, "hint"));
  std::vector<std::pair<std::string, std::string>> facts{
      {"Lab", fmt::format("{} ({}, {} {}, {} time)", str(lab, "id"), str(lab, "role"), str(lab, "kind"),
                          str(lab, "precision"), str(lab, "timed"))}};
  if (!str(dev, "name").empty())
    facts.push_back({"GPU and driver", fmt::format("{} (CUDA driver {}), peak SM clock {} MHz", str(dev, "name"),
                                                   str(dev, "driver"), dev.value("peak_sm_clock_mhz", 0))});
  if (!str(r, "seed").empty() && !list(r, "cases").empty())
    facts.push_back({"Seed", fmt::format("{} (replay with --seed {}), batch {}", str(r, "seed"), str(r, "seed"), r.value("batch", 0))});
  if (!str(r, "sandbox").empty()) facts.push_back({"Sandbox", str(r, "sandbox")});
  if (r.contains("seconds")) facts.push_back({"Graded in", fmt::format("{:.1f} s", num(r, "seconds"))});
  page.facts(facts);
  cases(page, r);
  timing(page, r);
  roofline(page, r);
  evidence(page, r);
  timelines(page, r);
  score(page, r);
  if (!str(r, "log").empty()) {
    page.heading(2, "The lab's own output (cut; shown, never parsed)", "log");
    page.preformatted(str(r, "log"));
  }
  return page.render();
}

}  // namespace labkit::pages
