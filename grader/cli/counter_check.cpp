// The counter check of `labkit grade` (counter_check.h).
//
// What a lab could do against it, and what holds:
//   1. Write a forged CSV into ncu's log (fd 7 is inherited, and /proc/<ncu>/fd/7 opens it): ncu
//      writes its own rows when its target has ended, so only the last header block of the log is
//      read, and a count above kMaxCounterFraction of its base (the conv's multiply-adds, or the
//      metrics it is compared with; counter_rule.h) is protocol-error. A lab
//      that leaves a process behind to append a forged block after ncu's own is a deliberate
//      attack on the grader, in kernel.cu for anyone to read (as memory_check.cpp's 9): not closed.
//   2. Make ncu fail (kill it, exhaust /tmp): the check is then "not available" and the grade's
//      evidence stays the CUPTI attribution, which the lab has already had to satisfy: no gain.
//   3. Run the math only when profiled (ncu's injection library is in its address space): the
//      same as a lab that cheats only when not under compute-sanitizer (memory_check.cpp, 8): not
//      closed; the CUPTI evidence of the timed calls still holds in the graded run.
#include "counter_check.h"

#include "counter_rule.h"

#include <fmt/core.h>
#include <fmt/ranges.h>

#include <chrono>
#include <string_view>
#include <fstream>
#include <regex>

#include "lab_process.h"
#include "grader/judge/grade_result.h"
#include "grader/tools/ncu.h"
#include "log_pipe.h"

namespace labkit::cli {
namespace {

using nlohmann::json;
namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

constexpr int kLogFd = 7;                              // as the memory check's (grader/tools/sanitizer.h)
constexpr std::size_t kMaxLogBytes = std::size_t(8) << 20;

// The Nsight Compute folder the sandbox must show: its root above target/<platform>/ncu.
fs::path ncu_root(const fs::path& binary) {
  const fs::path dir = binary.parent_path();
  return dir.parent_path().filename() == "target" ? dir.parent_path().parent_path() : dir;
}

void not_available(json& r, const std::string& why, double seconds) {
  r["counters"] = {{"check", "executed counters"}, {"available", false}, {"why", why}, {"seconds", seconds}};
  if (r.contains("evidence") && r["evidence"].is_object())
    r["evidence"]["decided_by"] = "the kernels that ran in the timed calls (CUPTI); executed counters not read: " + why;
  r["message"] = r.value("message", "") + fmt::format("\nExecuted counters not read ({}): the evidence is the kernels "
                                                      "that ran in the timed calls.", why);
}

void zero_performance(json& r, const std::string& why) {
  if (!r.contains("score") || !r["score"].is_object() || !r["score"].contains("lines")) return;
  double total = 0;
  for (json& line : r["score"]["lines"]) {
    if (line.value("item", "") != "correctness") {
      line["points"] = 0;
      line["why"] = why;
    }
    total += line.value("points", 0.0);
  }
  r["score"]["total"] = total;
}

// The lab wrote into the tool's log: no credit at all.
void forged(json& r, const std::string& message) {
  r["verdict"] = verdict::kProtocolError;
  r["exit_code"] = verdict::exit_code(verdict::kProtocolError);
  r["message"] = message;
  zero_performance(r, "protocol-error in the counter check: no credit");
  if (r.contains("score") && r["score"].is_object()) r["score"]["total"] = 0;
}

}  // namespace

double macs_of_shape(const std::string& shape) {
  static const std::regex re(R"(B=(\d+) M=(\d+) C=(\d+) H=(\d+) W=(\d+) K=(\d+))");
  std::smatch m;
  if (!std::regex_search(shape, m, re)) return 0;
  const double B = std::stod(m[1]), M = std::stod(m[2]), C = std::stod(m[3]), H = std::stod(m[4]),
               W = std::stod(m[5]), K = std::stod(m[6]);
  if (H < K || W < K) return 0;
  return B * M * C * (H - K + 1) * (W - K + 1) * K * K;
}

bool needs_counter_check(const json& r, const LabSpec& spec) {
  return !spec.counters.empty() && r.value("verdict", "") == verdict::kPassed;
}

void counter_check(const LabEntry& lab, json& r, const CounterCheckOptions& o) {
  const LabSpec spec = load_lab_spec(lab.lab_json, lab.id);
  const auto t0 = Clock::now();
  auto seconds = [&] { return std::chrono::duration<double>(Clock::now() - t0).count(); };
  if (o.ncu.empty()) return not_available(r, "Nsight Compute (ncu) not found", 0);
  const fs::path binary = ncu::cli_binary(o.ncu, ncu_install_dirs());
  if (binary.empty()) return not_available(r, fmt::format("{} is a script, and no target/<platform>/ncu for this machine was found "
                                        "beside it or in Nsight Compute's install folders", o.ncu.string()), 0);
  if (o.progress) fmt::print(stderr, "  executed counters: Nsight Compute ...\n");

  std::string metrics = "gpu__time_duration.sum";
  for (const CounterEvidence& c : spec.counters)
    for (const std::vector<std::string>* list : {&c.metrics, &c.over})
      for (const std::string& m : *list)
        if (("," + metrics + ",").find("," + m + ",") == std::string::npos) metrics += "," + m;
  LogPipe pipe(kMaxLogBytes);
  SessionEnd end;  // ncu writes its rows after its target ended: under_tool waits for it
  const judge::Options so = under_tool(
      o,
      {binary.string(), "--target-processes", "all", "--clock-control", "none", "--csv", "--page", "raw", "--print-units",
       "base", "--metrics", metrics, "--log-file", fmt::format("/proc/self/fd/{}", kLogFd)},
      {ncu_root(binary).string()}, pipe.write_fd(), kLogFd, &end);
  const json run = o.grade(lab, so);
  const std::string log = pipe.finish(std::chrono::seconds(2));
  if (!o.keep_logs.empty()) {
    fs::create_directories(o.keep_logs);
    std::ofstream(o.keep_logs / fmt::format("{}-counters.csv", lab.id)) << log;
  }
  const double took = seconds();
  if (!r.contains("phases") || !r["phases"].is_array()) r["phases"] = json::array();
  r["phases"].push_back({{"phase", "executed counters (Nsight Compute)"}, {"seconds", took}});
  r["seconds"] = r.value("seconds", 0.0) + took;
  if (pipe.bytes() > kMaxLogBytes) {
    return forged(r, fmt::format("The counter check: Nsight Compute's log carried more than {} MiB, far more than "
                                 "the tool writes; the lab's process wrote into it. No credit.", kMaxLogBytes >> 20));
  }
  const ncu::Complaint c = ncu::problem_of(log);
  if (c.problem == ncu::Problem::no_permission)
    return not_available(r, "this GPU's performance counters are for administrators only here (ERR_NVGPUCTRPERM)", took);
  if (c.problem != ncu::Problem::none)
    return not_available(r, fmt::format("Nsight Compute: {:.200}", c.text), took);
  if (run.value("verdict", "") != verdict::kPassed && run.value("verdict", "") != verdict::kMissingEvidence) {
    // What ncu itself said (its complaints go to the sandbox's stderr, the run's log): the last
    // lines, on one line, for the instructor who has to make the counters readable.
    std::string said = run.value("log", "");
    if (said.size() > 400) said = said.substr(said.size() - 400);
    for (char& ch : said)
      if (ch == '\n' || ch == '\r' || ch == '\t') ch = ' ';
    if (!o.keep_logs.empty()) std::ofstream(o.keep_logs / fmt::format("{}-counters-run.log", lab.id)) << run.value("log", "");
    return not_available(r, fmt::format("the run under Nsight Compute ended {} ({:.160}); its log ends: {}",
                                        run.value("verdict", ""), run.value("message", ""), said), took);
  }
  // ncu's own block: the last header row (anything the lab wrote came before it; see 1. above).
  std::size_t block = log.rfind("\n\"ID\",");
  block = block == std::string::npos ? 0 : block + 1;
  const std::vector<ncu::Kernel> kernels = ncu::parse_csv(std::string_view(log).substr(block));
  if (kernels.empty()) return not_available(r, "Nsight Compute profiled no kernel", took);
  double macs = 0;
  for (const json& cs : run.value("cases", json::array())) macs += macs_of_shape(cs.value("shape", ""));
  if (macs <= 0) return not_available(r, "the run's cases have no multiply-adds to compare with", took);

  json results = json::array();
  std::string failed, why, summary;
  for (const CounterEvidence& ce : spec.counters) {
    const CounterReading c = read_counter(ce, kernels, macs);
    if (!c.known) return not_available(r, fmt::format("this GPU's Nsight Compute reported none of {}", c.missing), took);
    if (c.forged) {
      return forged(r, fmt::format("The counter check: {} counted {:.0f} against a base of {:.0f}, more than any conv "
                                   "executes: the counts were not Nsight Compute's. No credit.", ce.name, c.count, c.base));
    }
    json one = {{"name", ce.name}, {"metrics", ce.metrics}, {"count", c.count}, {"fraction", c.fraction},
                {"min_fraction", ce.min_fraction}, {"ok", c.ok}};
    if (!ce.over.empty()) one["over"] = ce.over, one["base"] = c.base;
    if (ce.max_fraction) one["max_fraction"] = *ce.max_fraction;
    results.push_back(std::move(one));
    summary += (summary.empty() ? "" : "; ") + c.summary;
    if (!c.ok && failed.empty()) failed = c.failure, why = c.why;
  }
  r["counters"] = {{"check", "executed counters"}, {"available", true}, {"seconds", took}, {"macs", macs},
                   {"kernels", kernels.size()}, {"results", results}};
  if (r.contains("evidence") && r["evidence"].is_object())
    r["evidence"]["decided_by"] = "executed counters (Nsight Compute) and the kernels that ran in the timed calls (CUPTI)";
  if (failed.empty()) {
    r["message"] = r.value("message", "") + fmt::format("\nExecuted counters: {} (Nsight Compute; {:.1f} s).", summary, took);
    return;
  }
  r["verdict"] = verdict::kMissingEvidence;
  r["exit_code"] = verdict::exit_code(verdict::kMissingEvidence);
  r["message"] = fmt::format("Executed counters (Nsight Compute): {}. {}", failed, why);
  r["hint"] = spec.hint_evidence.empty() ? "Do the conv's multiply-adds with the lab's technique, in the kernels that run."
                                         : spec.hint_evidence;
  zero_performance(r, "no credit beyond correctness: the executed counters do not show the technique");
}

}  // namespace labkit::cli
