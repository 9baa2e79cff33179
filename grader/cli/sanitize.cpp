#include "sanitize.h"

#include <fmt/core.h>
#include <unistd.h>


#include "lab_process.h"
#include "grader/judge/grade_result.h"
#include "grader/tools/sanitizer.h"
#include "grader/judge/subprocess.h"
#include "labkit_config.h"

namespace labkit::cli {

using nlohmann::json;
namespace fs = std::filesystem;

json report_json(const sanitizer::Report& r, double seconds) {
  json findings = json::array();
  for (const sanitizer::Finding& f : r.findings) {
    json detail = json::array();
    for (const std::string& d : f.detail) detail.push_back(sanitizer::relative_to(d, LABKIT_SOURCE_ROOT));
    findings.push_back({{"headline", sanitizer::relative_to(f.headline, LABKIT_SOURCE_ROOT)},
                        {"location", sanitizer::relative_to(f.location, LABKIT_SOURCE_ROOT)},
                        {"detail", detail},
                        {"explain", sanitizer::explain(f)}});
  }
  return {{"tool", r.tool}, {"completed", r.completed}, {"errors", r.errors},
          {"findings_total", r.findings_total}, {"findings", findings}, {"problem", r.problem},
          {"seconds", seconds}};
}

json run_sanitized(const LabEntry& lab, const SanitizeOptions& o) {
  const ScratchDir scratch("sanitize");
  const fs::path& dir = scratch.path();
  json base;
  json tools = json::array();
  int errors = 0;
  std::vector<std::string> failed_to_run;  // "tool: problem"
  for (const std::string& tool : o.tools) {
    if (o.progress) fmt::print(stderr, "  compute-sanitizer --tool {} ...\n", tool);
    const fs::path log = dir / (tool + ".log");
    const std::vector<std::string> wrapper = sanitizer::wrapper(o.sanitizer, tool, log.string());
    const auto t0 = std::chrono::steady_clock::now();
    json r = o.grade(wrapper);
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    const sanitizer::Report rep = sanitizer::parse_log(tool, read_text(log), lab.folder + "/kernel.cu");
    if (!o.keep_logs.empty()) {
      fs::create_directories(o.keep_logs);
      std::error_code ec;
      fs::copy_file(log, o.keep_logs / fmt::format("{}-{}.log", lab.id, tool), fs::copy_options::overwrite_existing, ec);
    }
    tools.push_back(report_json(rep, seconds));
    if (!rep.completed) failed_to_run.push_back(fmt::format("{}: {}", tool, rep.problem));
    errors += rep.errors;
    if (base.is_null() || (base.value("verdict", "") == verdict::kPassed && r.value("verdict", "") != verdict::kPassed))
      base = r;  // the first run's result, or the first that failed on its own
  }

  base["sanitizer"] = {{"tools", tools}, {"batch", o.batch}};
  const std::string lab_verdict = base.value("verdict", "");
  if (errors > 0) {
    const json* t = nullptr;  // the first tool with errors
    for (const json& x : tools)
      if (x.value("errors", 0) > 0) {
        t = &x;
        break;
      }
    const json& f = t->at("findings").empty() ? json::object() : t->at("findings").at(0);
    std::string counts;
    for (const json& x : tools)
      counts += fmt::format("{}{} {}", counts.empty() ? "" : ", ", x.value("tool", ""), x.value("errors", 0));
    base["message"] = fmt::format(
        "compute-sanitizer found {} error{} in the correctness cases (errors per tool: {}).\n"
        "The first ({}): {}{}\nThe cases themselves: {}.",
        errors, errors == 1 ? "" : "s", counts, t->value("tool", ""), f.value("headline", "(no detail)"),
        f.value("location", "").empty() || f.value("headline", "").find(f.value("location", "")) != std::string::npos
            ? ""
            : " (" + f.value("location", "") + ")",
        lab_verdict);
    base["hint"] = f.value("explain", "").empty() ? "Read the sanitizer's findings above: each names the line."
                                                  : f.value("explain", "");
    base["verdict"] = verdict::kSanitizerError;
    base["exit_code"] = verdict::exit_code(verdict::kSanitizerError);
    if (base.contains("score") && base["score"].is_object()) {
      base["score"]["total"] = 0;
      base["score"]["lines"] = json::array({{{"item", "sanitizer"}, {"points", 0},
                                             {"max", base["score"].value("max", 0.0)},
                                             {"why", "memory-safety errors: no credit"}}});
    }
  } else if (!failed_to_run.empty() && lab_verdict != verdict::kNoDevice) {
    std::string why;
    for (const std::string& w : failed_to_run) why += "\n  " + w;
    base["verdict"] = verdict::kKitError;
    base["exit_code"] = verdict::exit_code(verdict::kKitError);
    base["message"] = "compute-sanitizer could not check this lab (its log has no ERROR SUMMARY):" + why;
    const std::string tool = failed_to_run.front().substr(0, failed_to_run.front().find(':'));
    base["hint"] = fmt::format("Check that `compute-sanitizer --tool {}` runs on this machine (a program of its own "
                               "under it), and read its log with --sanitize-logs DIR.", tool);
  } else if (lab_verdict != verdict::kNoDevice) {
    std::string names;
    for (const std::string& t : o.tools) names += (names.empty() ? "" : ", ") + t;
    base["message"] = base.value("message", "") + fmt::format("\ncompute-sanitizer: no errors ({}).", names);
  }
  return base;
}

}  // namespace labkit::cli
