// `labkit bulk` — registers submit, collect and finish. finish is the last step of every Slurm
// task (tools/slurm/bulk-task.sh): it turns what the task left in the student's folder into
//   results.json  Gradescope's format (grader/judge/report.h gradescope()), one test per lab of the kit
//   grade.json    {"student", "mode", "results": [the full per-lab results]}: what collect reads
//   task.json     where and how the task ran: node, job ids, times, GPU model and clocks, build
// so that a student whose build fails or whose lab crashes still gets a results.json that says so.
#include "bulk.h"

#include <fmt/core.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <sstream>

#include <unistd.h>

#include "commands.h"
#include "lab_process.h"
#include "grader/core/exit_codes.h"
#include "grader/tools/bulk.h"
#include "grader/judge/grade_result.h"
#include "grader/judge/html.h"
#include "grader/judge/lab_spec.h"
#include "grader/judge/pages.h"
#include "grader/judge/report.h"

namespace labkit::cli {
namespace bulk_cmd {
namespace fs = std::filesystem;
using nlohmann::json;

void write_file(const std::string& file, const std::string& text) {
  const std::string tmp = fmt::format("{}.tmp-{}", file, ::getpid());
  {
    std::ofstream out(tmp, std::ios::binary);
    out << text;
    out.flush();
    if (!out) {
      std::error_code ignored;
      fs::remove(tmp, ignored);
      throw std::runtime_error(fmt::format("{}: cannot write", tmp));
    }
  }
  std::error_code ec;
  fs::rename(tmp, file, ec);
  if (ec) {
    fs::remove(tmp, ec);
    throw std::runtime_error(fmt::format("{}: cannot rename {} to it", file, tmp));
  }
}

void write_grade_pages(const std::string& student_dir, const json& results) {
  if (!results.is_array()) return;
  const fs::path folder = fs::path(student_dir) / kPagesFolder;
  fs::create_directories(folder);
  for (const json& r : results) {
    const std::string lab = r.is_object() && r.contains("lab") && r["lab"].is_object() ? r["lab"].value("id", "") : "";
    if (!bulk::valid_student_id(lab)) {  // the same rule as a folder name: never a path
      fmt::print(stderr, "labkit bulk: {}: a result's lab id \"{}\" is not a folder name: no page for it\n", student_dir, lab);
      continue;
    }
    html::write_page((folder / (lab + ".html")).string(), pages::grade_page(r, "../../class.html"));
  }
}

namespace {

// What a student needs of a failed build: the compiler's messages, without ninja's progress lines,
// the compiler's command line and the scratch folder's prefix.
std::string compiler_errors(const std::string& log) {
  std::istringstream in(log);
  std::string out;
  for (std::string line; std::getline(in, line);) {
    if (line.empty() || line[0] == '[' || line.rfind("FAILED:", 0) == 0 || line.rfind("ninja:", 0) == 0 ||
        (line[0] == '/' && line.find(" -o ") != std::string::npos))
      continue;
    for (std::size_t at; (at = line.find("../kit/")) != std::string::npos;) line.erase(at, 7);
    out += line + "\n";
  }
  return out;
}

// task.env: key=value lines written by bulk-task.sh.
std::map<std::string, std::string> read_env(const fs::path& p) {
  std::map<std::string, std::string> env;
  std::istringstream in(read_text(p));
  for (std::string line; std::getline(in, line);)
    if (const auto eq = line.find('='); eq != std::string::npos) env[line.substr(0, eq)] = line.substr(eq + 1);
  return env;
}

// One line of `nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,clocks.mem,
// temperature.gpu,pstate,uuid,index,pci.bus_id --format=csv,noheader,nounits` (bulk-task.sh).
json gpu_of(const std::string& csv) {
  std::vector<std::string> f;
  std::istringstream in(csv);
  for (std::string x; std::getline(in, x, ',');) {
    const auto a = x.find_first_not_of(' '), b = x.find_last_not_of(' ');
    f.push_back(a == std::string::npos ? "" : x.substr(a, b - a + 1));
  }
  if (f.empty() || f[0].empty()) return nullptr;
  auto number = [&](std::size_t i) -> json {
    try {
      return i < f.size() ? json(std::stoi(f[i])) : json(nullptr);
    } catch (const std::exception&) {
      return nullptr;
    }
  };
  return {{"name", f[0]}, {"driver", f.size() > 1 ? f[1] : ""}, {"sm_clock_mhz", number(2)},
          {"max_sm_clock_mhz", number(3)}, {"mem_clock_mhz", number(4)}, {"temperature_c", number(5)},
          {"pstate", f.size() > 6 ? f[6] : ""}, {"uuid", f.size() > 7 ? f[7] : ""},
          {"nvidia_smi_index", f.size() > 8 ? f[8] : ""}, {"pci_bus_id", f.size() > 9 ? f[9] : ""},
          {"source", "nvidia-smi"}};
}

json synthetic(const std::string& id, const LabSpec* spec, const std::string& verdict, const std::string& message,
               const std::string& hint) {
  return unreported_result(id, "lab", spec ? to_string(spec->kind) : "", spec ? spec->title : id,
                           spec ? spec->points : 0.0, verdict, message, hint);
}

// The result of one lab from its state file and the grading output the task saved.
json lab_result(const fs::path& dir, const std::string& id, const LabSpec* spec, const std::string& mode) {
  // "WHAT [CODE]" or "kit-error [REASON]": the first word, then the rest of the first line.
  std::istringstream state(read_text(dir / "labs" / (id + ".state"), 1u << 20));
  std::string what, rest;
  int code = -1;
  state >> what;
  std::getline(state, rest);
  if (const auto a = rest.find_first_not_of(' '); a != std::string::npos) rest.erase(0, a); else rest.clear();
  try {
    if (what != "kit-error" && !rest.empty()) code = std::stoi(rest);
  } catch (const std::exception&) {
  }
  if (what == "not-submitted")
    return synthetic(id, spec, "not-submitted", fmt::format("labs/{}/kernel.cu is not in the submission (or is not a plain file).", id),
                     "");
  if (what == "build-failed")
    return synthetic(id, spec, "build-failed",
                     fmt::format("labs/{}/kernel.cu did not compile; the compiler said:\n{}", id,
                                 tail(compiler_errors(read_text(dir / ("build-" + id + ".log"), 1u << 20)), 25)),
                     "Build it on your machine (meson compile -C build) and fix the first error.");
  if (what == "kit-error" && !rest.empty())
    return synthetic(id, spec, "kit-error",
                     fmt::format("The kit could not grade {} on this node (not the submission's fault): {}", id, rest),
                     "Instructor: see the task's grade.log and build.log, then resubmit this task.");
  if (what == "kit-error")
    return synthetic(id, spec, "kit-error",
                     "The kit could not be built on this node (not the submission's fault); build.log ends with:\n" +
                         tail(read_text(dir / "build.log", 1u << 20), 15),
                     "Instructor: fix the kit build and resubmit this task.");
  const std::string out = read_text(dir / "labs" / (id + ".out"), 64u << 20);
  try {
    json j = json::parse(out);
    if (j.is_object() && j.contains("results") && j["results"].is_array() && !j["results"].empty()) j = j["results"][0];
    if (j.is_object() && j.contains("verdict") && j.contains("score")) return j;
  } catch (const json::parse_error&) {
  }
  const std::string all_err = read_text(dir / "labs" / (id + ".err"), 1u << 20);
  const std::string err = tail(all_err, 8);
  if (what == "timeout" || code == 124 || code == 137)
    return synthetic(id, spec, "timeout", fmt::format("The {} of {} did not finish in time and was stopped.", mode, id),
                     verdict::kNeverReturnsHint);
  // The runner's crash handler names the signal, the phase and the case (as `labkit grade` reads it).
  std::string message = crash_message(all_err);
  if (message.empty()) message = fmt::format("The {} of {} ended (exit {}) without a result.", mode, id, code);
  return synthetic(id, spec, "crashed", err.empty() ? message : message + "\nIts last words:\n" + err,
                   message.find("SIGSEGV") != std::string::npos ? verdict::kHostSegfaultHint : "");
}

int run_finish(const std::string& dir_arg) {
  const fs::path dir = dir_arg;
  auto env = read_env(dir / "task.env");
  if (env.empty()) {
    fmt::print(stderr, "labkit bulk: {}: missing or empty (expected the key=value lines of bulk-task.sh)\n",
               (dir / "task.env").string());
    return exit_code::kUsage;
  }
  const std::string mode = env["mode"], kit = env["kit"];
  std::vector<std::string> ids;
  if (fs::is_directory(dir / "labs"))
    for (const auto& e : fs::directory_iterator(dir / "labs"))
      if (e.path().extension() == ".state") ids.push_back(e.path().stem().string());
  std::sort(ids.begin(), ids.end());
  std::vector<json> results;
  double total = 0, max = 0;
  bool all_passed = !ids.empty(), any_kit_error = false, all_no_device = !ids.empty();
  for (const std::string& id : ids) {
    std::unique_ptr<LabSpec> spec;
    try {
      spec = std::make_unique<LabSpec>(load_lab_spec(fs::path(kit) / "labs" / id / "lab.json", id));
    } catch (const std::exception& e) {
      fmt::print(stderr, "labkit bulk: {}\n", e.what());
    }
    json r = lab_result(dir, id, spec.get(), mode == "evidence" ? "evidence check" : "grading");
    const std::string v = r.value("verdict", "");
    total += r["score"].value("total", 0.0);
    max += r["score"].value("max", 0.0);
    all_passed &= v == "passed";
    any_kit_error |= v == "kit-error";
    all_no_device &= v == "no-device";
    results.push_back(std::move(r));
  }
  const int status = ids.empty() || any_kit_error ? exit_code::kKitError
                     : all_no_device              ? exit_code::kNoDevice
                     : all_passed                 ? exit_code::kPass
                                                  : exit_code::kFail;
  json gs = gradescope(results);
  if (mode == "evidence") gs["output"] = "Evidence check only (PTX): correctness and speed were not measured. " + gs.value("output", "");
  write_file((dir / "results.json").string(), gs.dump(2) + "\n");
  write_grade_pages(dir.string(), results);
  auto number = [&](const char* key) -> json {
    try {
      return env.count(key) && !env[key].empty() ? json(std::stod(env[key])) : json(nullptr);
    } catch (const std::exception&) {
      return nullptr;
    }
  };
  json index = number("index");
  if (index.is_number()) index = static_cast<int>(index.get<double>());
  json task = {{"student", env["student"]}, {"index", index}, {"mode", mode}, {"node", env["node"]},
               {"job_id", env["job_id"]}, {"array_job_id", env["array_job_id"]},
               {"array_task_id", env["array_task_id"]}, {"start", env["start"]}, {"end", env["end"]},
               {"exit_status", status}, {"score", total}, {"max_score", max},
               {"build", {{"seconds", number("build_seconds")}, {"setup", env["setup"]}, {"kit", env["kit_build"]}}},
               {"cuda_visible_devices", env["cuda_visible_devices"]}, {"slurm_gpus", env["slurm_gpus"]},
               {"devices_constrained", env["devices_constrained"]}, {"cpus_allowed", env["cpus_allowed"]},
               {"grading_seconds", number("grading_seconds")},
               {"gpu", gpu_of(env["gpu_before"])}, {"gpu_after", gpu_of(env["gpu_after"])},
               {"gpu_other_processes", number("gpu_other_processes")}};
  json labs = json::object();
  for (const json& r : results) labs[r["lab"].value("id", "")] = r.value("verdict", "");
  task["labs"] = labs;
  write_file((dir / "task.json").string(), task.dump(2) + "\n");
  // Last: grade.json is what collect merges, so its presence means every other file is complete.
  write_file((dir / "grade.json").string(),
             json{{"student", env["student"]}, {"mode", mode}, {"score", total}, {"max_score", max}, {"results", results}}
                     .dump(2) + "\n");
  fmt::print("labkit bulk: {}: {:.2f} / {:.2f} points over {} lab(s) ({})\n", env["student"], total, max, ids.size(),
             (dir / "results.json").string());
  return exit_code::kPass;
}

}  // namespace

void add_finish(CLI::App& bulk, int& status) {
  auto dir = std::make_shared<std::string>();
  auto* cmd = bulk.add_subcommand("finish", "(run by each Slurm task) write results.json, grade.json and task.json "
                                            "from what the task left in its folder");
  cmd->add_option("dir", *dir, "the student's output folder OUT_DIR/<student>")->required();
  cmd->callback([dir, &status] {
    try {
      status = run_finish(*dir);
    } catch (const std::exception& e) {
      fmt::print(stderr, "labkit bulk: {}\n", e.what());
      status = exit_code::kKitError;
    }
  });
}

}  // namespace bulk_cmd

void add_bulk(CLI::App& app, int& status) {
  auto* cmd = app.add_subcommand("bulk", "Grade a whole class on a Slurm cluster: submit a job array, collect the results");
  cmd->require_subcommand(1);
  bulk_cmd::add_submit(*cmd, status);
  bulk_cmd::add_collect(*cmd, status);
  bulk_cmd::add_finish(*cmd, status);
}

}  // namespace labkit::cli
