#include "grader/judge/grade_result.h"

#include <string_view>

#include "grader/core/exit_codes.h"

namespace labkit {

int verdict::exit_code(const std::string& v) {
  if (v == kPassed) return exit_code::kPass;
  if (v == kNoDevice) return exit_code::kNoDevice;
  if (v == kKitError) return exit_code::kKitError;
  return exit_code::kFail;
}

nlohmann::json to_json(const GradeResult& r) {
  using nlohmann::json;
  json cases = json::array();
  for (const CaseReport& c : r.cases)
    cases.push_back({{"name", c.name}, {"origin", c.origin}, {"shape", c.shape}, {"passed", c.passed},
                     {"outcome", c.outcome}, {"detail", c.detail}, {"worst", c.worst},
                     {"counts", !c.warning_only}});
  json phases = json::array();
  for (const auto& [name, seconds] : r.phases) phases.push_back({{"phase", name}, {"seconds", seconds}});
  json timing = json::array();
  for (const ShapeTiming& t : r.timing)
    timing.push_back({{"name", t.name}, {"shape", t.shape}, {"baseline_ms", t.base_ms},
                      {"lab_ms", t.lab_ms}, {"speedup", t.speedup}, {"speedup_low", t.low},
                      {"speedup_high", t.high}, {"samples", t.samples}, {"noise", t.noise},
                      {"converged", t.converged}, {"hidden_work", t.hidden_work},
                      {"lab_extra_host_ms", t.lab_extra_host_ms}, {"sm_clock_mhz", t.sm_clock_mhz},
                      {"lab_wall_ms", t.lab_wall_ms}, {"round_trip_ms", t.round_trip_ms},
                      {"overhead_ms", t.overhead_ms}, {"overhead_clean_ms", t.overhead_clean_ms}, {"gpu_busy_ms", t.gpu_busy_ms},
                      {"floor_ms", t.floor_ms}, {"baseline_clean_ms", t.base_clean_ms},
                      {"baseline_samples_ms", t.base_samples_ms}, {"lab_samples_ms", t.lab_samples_ms}});
  for (std::size_t i = 0; i < r.timing.size(); ++i)
    if (r.timing[i].base_beside_over_clean > 0) {
      timing[i]["baseline_beside_ms"] = r.timing[i].base_beside_ms;
      timing[i]["baseline_beside_over_clean"] = r.timing[i].base_beside_over_clean;
      timing[i]["interference_limit"] = r.timing[i].interference_limit;
    }
  for (std::size_t i = 0; i < r.timing.size(); ++i)
    if (const auto& f = r.timing[i].roofline)
      timing[i]["roofline"] = {{"gflops", f->gflops}, {"gbps", f->gbps}, {"pct_fp32_peak", f->pct_fp32},
                               {"pct_tensor_peak", f->pct_tensor}, {"pct_memory_peak", f->pct_memory},
                               {"compute_ms", f->compute_ms}, {"memory_ms", f->memory_ms},
                               {"floor_ms", f->floor_ms}, {"bound", roofline::to_string(f->bound)},
                               {"pct_of_floor", f->pct_floor}, {"above_floor", f->pct_floor > 100}};
  json peaks = nullptr;
  if (r.peaks)
    peaks = {{"fp32_gflops", 2 * r.peaks->fp32_macs_per_s / 1e9},
             {"fp16_tensor_gflops", 2 * r.peaks->fp16_tensor_macs_per_s / 1e9},
             {"tf32_tensor_gflops", 2 * r.peaks->tf32_tensor_macs_per_s / 1e9},
             {"memory_gbps", r.peaks->bytes_per_s / 1e9}, {"l2_bytes", r.peaks->l2_bytes},
             {"basis", r.peaks->basis}};
  const StillReport& st = r.still;
  const json still = {{"lab_paused_for_baseline", st.paused}, {"samples", st.samples},
                      {"drained_samples", st.drained}, {"capped_samples", st.capped},
                      {"longest_drain_ms", st.longest_drain_ms}, {"idle_probe_ms", st.idle_probe_ms},
                      {"settled_ms", st.settled_ms}, {"drain_cap_ms", st.cap_ms},
                      {"longest_stop_ms", st.longest_stop_ms}, {"max_processes", st.max_processes}};
  json findings = json::array();
  for (const evidence::Finding& f : r.evidence.findings)
    findings.push_back({{"name", f.pattern.name}, {"regex", f.pattern.regex},
                        {"description", f.pattern.description}, {"hint", f.pattern.hint},
                        {"absent", f.pattern.absent}, {"min_count", f.pattern.min_count},
                        {"count", f.count}, {"functions", f.functions}, {"example", f.example},
                        {"ok", f.ok}});
  // Executed-kernel evidence: what share of the timed GPU time the kernels carrying each pattern took.
  if (r.evidence.executed)
    for (std::size_t i = 0; i < r.evidence.findings.size(); ++i) {
      const evidence::Finding& f = r.evidence.findings[i];
      findings[i]["share"] = f.share;
      findings[i]["needed_share"] = f.needed_share;
      findings[i]["kernels"] = f.kernels;
      findings[i]["why"] = f.why;
    }
  json ran = json::array();
  for (const auto& [kernel, share] : r.evidence.ran) ran.push_back({{"kernel", kernel}, {"share", share}});
  json host = json::array();
  for (const HostEvidenceReport& h : r.host_evidence)
    host.push_back({{"name", h.name}, {"ok", h.ok}, {"detail", h.detail}});
  json lines = json::array();
  for (const ScoreLine& l : r.score.lines)
    lines.push_back({{"item", l.item}, {"points", l.points}, {"max", l.max}, {"why", l.why}});

  json result = {
      {"lab", {{"id", r.id}, {"title", r.title}, {"role", r.role}, {"kind", r.kind},
               {"precision", r.precision}, {"timed", r.timed_region}, {"kernel", r.kernel_source}}},
      {"seed", std::to_string(r.seed)},  // a string: JSON numbers lose bits above 2^53
      {"batch", r.batch},
      {"device", {{"name", r.device}, {"driver", r.driver}, {"peak_sm_clock_mhz", r.peak_sm_clock_mhz},
                  {"max_sm_clock_mhz", r.max_sm_clock_mhz}}},
      {"verdict", r.verdict},
      {"message", r.message},
      {"hint", r.hint},
      {"tolerance", r.tolerance},
      {"contract", {{"name", r.contract}, {"note", r.contract_note}}},
      {"cases", cases},
      {"timing", {{"measured", r.timed}, {"shapes", timing}, {"speedup", r.speedup},
                  {"speedup_low", r.speedup_low}, {"speedup_high", r.speedup_high}, {"speedup_of", r.speedup_of},
                  {"target_speedup", r.target_speedup}, {"target_source", r.target_source},
                  {"peaks", peaks}, {"still", still}}},
      {"evidence", {{"ok", r.evidence.ok}, {"kernels", r.evidence.kernels}, {"patterns", findings},
                    {"text", evidence::format_report(r.evidence)},
                    {"basis", r.evidence.basis}, {"executed", r.evidence.executed},
                    {"unverified", r.evidence.unverified}, {"ran", ran},
                    {"host", host}}},
      {"score", {{"total", r.score.total}, {"max", r.score.max}, {"lines", lines}}},
      {"sandbox", r.sandbox},
      {"log", r.log},
      {"seconds", r.seconds},
      {"phases", phases},
      {"exit_code", r.exit_code},
  };
  if (!r.timelines.empty()) {
    json& t = result["timeline"] = json::array();
    for (const timeline::Timeline& x : r.timelines) t.push_back(timeline::to_json(x));
  }
  return result;
}

}  // namespace labkit
