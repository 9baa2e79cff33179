#include "grader/judge/report.h"

#include "grader/judge/roofline.h"

#include <fmt/core.h>

#include <cmath>

#include "grader/tools/timeline.h"

namespace labkit {
namespace {

using nlohmann::json;

std::string str(const json& j, const char* key) {
  return j.contains(key) && j.at(key).is_string() ? j.at(key).get<std::string>() : std::string();
}
double num(const json& j, const char* key) {
  return j.contains(key) && j.at(key).is_number() ? j.at(key).get<double>() : 0.0;
}
const json& sub(const json& j, const char* key) {
  static const json empty = json::object();
  return j.contains(key) && j.at(key).is_object() ? j.at(key) : empty;
}
const json& list(const json& j, const char* key) {
  static const json empty = json::array();
  return j.contains(key) && j.at(key).is_array() ? j.at(key) : empty;
}

std::string indent(const std::string& text, const char* prefix) {
  std::string out;
  std::size_t start = 0;
  while (start <= text.size()) {
    const std::size_t end = text.find('\n', start);
    out += prefix + text.substr(start, end == std::string::npos ? std::string::npos : end - start) + "\n";
    if (end == std::string::npos) break;
    start = end + 1;
  }
  return out;
}

void correctness(std::string& out, const json& r) {
  const json& cases = list(r, "cases");
  if (cases.empty()) return;
  const json& contract = sub(r, "contract");
  const bool course = str(contract, "name") == "course";
  out += fmt::format("\nCorrectness ({} cases; tolerance {}{})\n", cases.size(), str(r, "tolerance"),
                     course ? "; course contract: WARN cases are general shapes, shown, not counted" : "");
  for (const json& c : cases) {
    const bool ok = c.value("passed", false);
    out += fmt::format("  {:<5} {:<22} {:<36} {}\n", ok ? "ok" : c.value("counts", true) ? "FAIL" : "WARN", str(c, "name"),
                       str(c, "shape"),
                       ok ? fmt::format("worst error {:.2f} of allowed", num(c, "worst")) : str(c, "outcome"));
    if (!ok && !str(c, "detail").empty()) out += indent(str(c, "detail"), "        ");
  }
}

// How far each shape's median is from the device's limits (grader/judge/roofline.h): the distance a
// speedup over the baseline does not show, against the floor of the lab's precision class.
void roofline(std::string& out, const json& t, const std::string& precision) {
  const json& peaks = sub(t, "peaks");
  if (peaks.empty()) return;
  const std::string tensor_class = precision == "any" ? "fp16" : precision;  // "any" may use fp16's tensor cores
  const std::string tensor_key = tensor_class + "_tensor_gflops";
  const bool tensor = tensor_class != "fp32" && num(peaks, tensor_key.c_str()) > 0;
  out += fmt::format("\nRoofline (the lab's median against the GPU's rated peaks: fp32 FMA {:.1f} TFLOP/s{}, memory {:.0f} GB/s)\n",
                     num(peaks, "fp32_gflops") / 1e3,
                     tensor ? fmt::format(", {} tensor {:.1f} TFLOP/s", tensor_class, num(peaks, tensor_key.c_str()) / 1e3) : "",
                     num(peaks, "memory_gbps"));
  out += fmt::format("  {:<26} {:>9} {:>8} {:>9} {:>9} {:>9} {:>9}  {:<27} {}\n", "shape", "GFLOP/s", "of fp32",
                     tensor ? "of tensor" : "", "GB/s", "of memory", "floor ms", "bound", "of floor");
  for (const json& s : list(t, "shapes")) {
    const json& f = sub(s, "roofline");
    if (f.empty()) continue;
    const bool flops = num(f, "gflops") > 0;
    const double floor = num(f, "floor_ms"), lab = num(s, "lab_ms");
    const double share = f.contains("pct_of_floor") ? num(f, "pct_of_floor") : lab > 0 ? 100 * floor / lab : 0;
    out += fmt::format("  {:<26} {:>9} {:>8} {:>9} {:>9.1f} {:>8.1f}% {:>9.4f}  {:<27} {}\n", str(s, "name"),
                       flops ? fmt::format("{:.0f}", num(f, "gflops")) : "-",
                       flops ? fmt::format("{:.1f}%", num(f, "pct_fp32_peak")) : "-",
                       tensor && flops ? fmt::format("{:.1f}%", num(f, "pct_tensor_peak")) : "",
                       num(f, "gbps"), num(f, "pct_memory_peak"), floor, str(f, "bound"),
                       lab > 0 ? roofline::share_text(share) : "-");
  }
  out += fmt::format("  floor: the least time at those peaks for the lab's precision class ({}): the longer of its multiply-adds at the {} and its "
                     "bytes at full bandwidth (inputs read once, the output written once less the L2's {:.0f} MiB); "
                     "of floor: floor / lab ms; peaks from {}\n",
                     precision, tensor ? tensor_class + " tensor peak" : "fp32 FMA peak", num(peaks, "l2_bytes") / (1 << 20),
                     str(peaks, "basis"));
}

void timing(std::string& out, const json& r) {
  const json& t = sub(r, "timing");
  const json& shapes = list(t, "shapes");
  if (!t.value("measured", false) || shapes.empty()) return;
  const bool layer = str(sub(r, "lab"), "timed") == "layer";
  out += fmt::format("\nTiming ({}: median of baseline/lab pairs, interleaved, L2 flushed before each)\n",
                     layer ? "Layer Time, prolog + op + epilog, host to host" : "Op Time, conv_forward_gpu");
  out += fmt::format("  {:<26} {:>12} {:>10} {:>9}  {:<18} {:>7} {:>6} {:>6}\n", "shape", "baseline ms",
                     "lab ms", "speedup", "95% interval", "samples", "noise", "SM MHz");
  for (const json& s : shapes) {
    std::string flags;
    if (!s.value("converged", true)) flags += "  (noisy: stopped at the time cap)";
    if (s.value("hidden_work", false))
      flags += fmt::format("  (+{:.3f} ms of work outside the timed region)", num(s, "lab_extra_host_ms"));
    out += fmt::format("  {:<26} {:>12.4f} {:>10.4f} {:>8.2f}x  [{:.3f}, {:.3f}]{:>4} {:>7} {:>5.1f}% {:>6}{}\n",
                       str(s, "name"), num(s, "baseline_ms"),
                       num(s, "lab_ms"), num(s, "speedup"), num(s, "speedup_low"),
                       num(s, "speedup_high"), "", s.value("samples", 0), 100 * num(s, "noise"),
                       s.value("sm_clock_mhz", 0), flags);
  }
  out += fmt::format("  {:<26} {:>12} {:>10} {:>8.2f}x  [{:.3f}, {:.3f}]   target {:.2f}x\n",
                     str(t, "speedup_of") == "total" ? "total (summed times)" : "geometric mean", "", "", num(t, "speedup"), num(t, "speedup_low"),
                     num(t, "speedup_high"), num(t, "target_speedup"));
  if (!str(t, "target_source").empty()) out += fmt::format("  target: {}\n", str(t, "target_source"));
  std::string beside;
  for (const json& s : shapes)
    if (num(s, "baseline_beside_over_clean") > 0)
      beside += fmt::format("{}{} {:.3f}", beside.empty() ? "" : ", ", str(s, "name"), num(s, "baseline_beside_over_clean"));
  if (!beside.empty())
    out += fmt::format("  baseline beside the lab / with no lab process: {} (at most {:.2f})\n", beside,
                       num(shapes.front(), "interference_limit"));
  // Measurements taken again (grade_conv.cpp): their phases say so; the numbers above are the last.
  int again = 0;
  for (const json& p : list(r, "phases"))
    if (str(p, "phase").find(kMeasuredAgainPhase) != std::string::npos) ++again;
  if (again > 0)
    out += fmt::format("  measured {} times: the baseline ran slower beside the lab in the first {} (other work on "
                       "this machine?); the numbers above are the last measurement's\n",
                       again + 1, again == 1 ? std::string("one") : std::to_string(again));
  const json& still = sub(t, "still");
  if (still.value("lab_paused_for_baseline", false))
    out += fmt::format("  the lab was stopped for each of the baseline's {} samples; GPU busy after the stop before {} "
                       "(longest wait {:.2f} ms){}; idle probe {:.3f} ms (settled below {:.2f} ms)\n",
                       still.value("samples", 0), still.value("drained_samples", 0), num(still, "longest_drain_ms"),
                       still.value("capped_samples", 0) > 0
                           ? fmt::format(", still busy after {:.0f} ms before {}", num(still, "drain_cap_ms"),
                                         still.value("capped_samples", 0))
                           : "",
                       num(still, "idle_probe_ms"), num(still, "settled_ms"));
  roofline(out, t, str(sub(r, "lab"), "precision"));
}

void evidence(std::string& out, const json& r) {
  const json& e = sub(r, "evidence");
  const json& host = list(e, "host");
  if (list(e, "patterns").empty() && host.empty()) return;
  const int kernels = e.value("kernels", 0);
  const std::string basis = list(e, "patterns").empty() ? std::string() : e.value("basis", std::string());
  out += fmt::format("\nEvidence of the technique ({}PTX of {}, {} kernel{})\n", basis.empty() ? "" : basis + "; ",
                     str(sub(r, "lab"), "kernel"), kernels, kernels == 1 ? "" : "s");
  if (!list(e, "patterns").empty()) out += str(e, "text");  // evidence::format_report, one line a pattern
  for (const json& h : host)
    out += fmt::format("  {:<7} {} (run time): {}\n", h.value("ok", false) ? "found" : "MISSING",
                       str(h, "name"), str(h, "detail"));
}

// The streams timeline in two lines (grader/tools/timeline.h); its picture is the grade page's and the
// SVG file `labkit grade` names after the report.
void timelines(std::string& out, const json& r) {
  const json& all = list(r, "timeline");
  if (all.empty()) return;
  const timeline::Timeline first = timeline::from_json(all.front());
  out += fmt::format("\nTimeline of the recorded layer ({}; overlap: a kernel running while a copy or another kernel "
                     "runs on another stream)\n", first.shape);
  for (const json& j : all) {
    const timeline::Timeline t = timeline::from_json(j);
    if (!t.available) {
      out += fmt::format("  {:<9} not recorded: {}\n", t.side, t.why);
      continue;
    }
    const timeline::Overlap o = timeline::overlap_of(t);
    out += fmt::format("  {:<9} {} stream{}, {} record{}, overlap {:.3f} of {:.3f} ms busy ({:.1f}%), layer {:.3f} ms\n",
                       t.side, o.streams, o.streams == 1 ? "" : "s", t.records.size(), t.records.size() == 1 ? "" : "s",
                       o.overlap_ms, o.busy_ms, o.busy_ms > 0 ? 100 * o.overlap_ms / o.busy_ms : 0.0, t.span_ms);
  }
}

// `labkit grade --sanitize`, and the memory check of every grade (grader/cli/memory_check.h): one
// line per tool, then its first findings with their lines; or why the memory check did not run.
void sanitizer(std::string& out, const json& r) {
  const json& s = sub(r, "sanitizer");
  const bool memory = str(s, "check") == "memory";
  if (memory && !str(s, "skipped").empty()) {
    out += fmt::format("\nMemory check: skipped ({})\n", str(s, "skipped"));
    return;
  }
  const json& tools = list(s, "tools");
  if (tools.empty()) return;
  if (memory)
    out += fmt::format("\nMemory check (compute-sanitizer in the sandbox on the small correctness cases, grading "
                       "shapes at batch {}; {:.1f} s)\n", s.value("batch", 0), num(s, "seconds"));
  else
    out += fmt::format("\nSanitizer (compute-sanitizer on the correctness cases, grading shapes at batch {})\n",
                       s.value("batch", 0));
  for (const json& t : tools) {
    const int errors = t.value("errors", 0);
    // The memory check decides on the tool's exit status (its "verdict"), not on the log's count.
    const std::string verdict = str(t, "verdict");
    const std::string status = memory && verdict == "clean" ? "no errors"
                               : memory && errors == 0     ? fmt::format("{} (compute-sanitizer {})", verdict, str(t, "status"))
                               : !t.value("completed", false) ? "did not run: " + str(t, "problem")
                               : errors == 0               ? "no errors"
                                                           : fmt::format("{} error{}", errors, errors == 1 ? "" : "s");
    out += fmt::format("  {:<10} {} ({:.1f} s)\n", str(t, "tool"), status, num(t, "seconds"));
    for (const json& f : list(t, "findings")) {
      out += fmt::format("    {}\n", str(f, "headline"));
      int shown = 0;
      for (const json& d : list(f, "detail"))
        if (shown++ < 4 && d.is_string()) out += fmt::format("      {}\n", d.get<std::string>());
      if (!str(f, "explain").empty()) out += indent(str(f, "explain"), "      means: ");
    }
    const int total = t.value("findings_total", 0), listed = int(list(t, "findings").size());
    if (total > listed) out += fmt::format("    ... and {} more finding{}\n", total - listed, total - listed == 1 ? "" : "s");
  }
}

void score(std::string& out, const json& r) {
  const json& s = sub(r, "score");
  const json& lines = list(s, "lines");
  if (lines.empty()) return;
  out += "\nScore\n";
  for (const json& l : lines)
    out += fmt::format("  {:<12} {:>5.2f} / {:<5.2f} {}\n", str(l, "item"), num(l, "points"),
                       num(l, "max"), str(l, "why"));
  out += fmt::format("  {:<12} {:>5.2f} / {:<5.2f}\n", "total", num(s, "total"), num(s, "max"));
}

}  // namespace

std::string format_text(const json& r, bool color) {
  const json& lab = sub(r, "lab");
  const json& dev = sub(r, "device");
  // The course contract changes what counts (shapes, and the evidence where lab.json has
  // course_evidence): said on the first line, evidence-only grades included.
  const bool course = str(sub(r, "contract"), "name") == "course";
  std::string out = fmt::format("labkit: {} ({}) [{}, {} {}, {} time{}]\n", str(lab, "id"),
                                str(lab, "title"), str(lab, "role"), str(lab, "kind"),
                                str(lab, "precision"), str(lab, "timed"), course ? ", course contract" : "");
  if (!str(dev, "name").empty())
    out += fmt::format("GPU: {} (CUDA driver {}), peak SM clock {} MHz\n", str(dev, "name"),
                       str(dev, "driver"), dev.value("peak_sm_clock_mhz", 0));
  if (!str(r, "seed").empty() && !list(r, "cases").empty())
    out += fmt::format("Seed: {} (replay with --seed {}), batch {}\n", str(r, "seed"), str(r, "seed"),
                       r.value("batch", 0));
  correctness(out, r);
  timing(out, r);
  evidence(out, r);
  timelines(out, r);
  sanitizer(out, r);
  score(out, r);
  const std::string v = str(r, "verdict");
  const bool passed = v == "passed";
  std::string head = passed ? "PASSED" : v == "no-device" ? "SKIPPED" : "FAILED";
  if (color) head = fmt::format("{}{}\033[0m", passed ? "\033[32m" : "\033[31m", head);
  out += fmt::format("\nVerdict: {} ({})", head, v);
  if (r.contains("seconds")) out += fmt::format(" in {:.1f} s", num(r, "seconds"));
  // Appended piece by piece: GCC 12 warns falsely (-Wrestrict, bug 105329) on "\n" + string.
  out += '\n';
  out += indent(str(r, "message"), "  ");
  if (!str(r, "hint").empty()) out += fmt::format("Next: {}\n", str(r, "hint"));
  return out;
}

json gradescope(const std::vector<json>& results) {
  json tests = json::array();
  double total = 0, max = 0;
  for (const json& r : results) {
    const json& s = sub(r, "score");
    const json& lab = sub(r, "lab");
    total += num(s, "total");
    max += num(s, "max");
    tests.push_back({{"name", fmt::format("{}: {}", str(lab, "id"), str(lab, "title"))},
                     {"score", num(s, "total")},
                     {"max_score", num(s, "max")},
                     {"status", str(r, "verdict") == "passed" ? "passed" : "failed"},
                     {"output", format_text(r)},
                     {"visibility", "visible"}});
  }
  return {{"score", total},
          {"max_score", max},
          {"output", fmt::format("labkit graded {} lab(s): {:.2f} / {:.2f} points", results.size(), total, max)},
          {"tests", tests},
          {"visibility", "visible"}};
}

}  // namespace labkit
