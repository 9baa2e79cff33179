#include "lab_process.h"

#include <fmt/core.h>
#include <unistd.h>

#include <algorithm>
#include <csignal>
#include <filesystem>
#include <fstream>
#include <cstdlib>
#include <stdexcept>

#include "grader/judge/grade_result.h"
#include "grader/judge/lab_spec.h"
#include "labkit_config.h"

namespace labkit::cli {

using nlohmann::json;

std::string tail(const std::string& text, std::size_t lines) {
  std::size_t start = text.ends_with('\n') ? text.size() - 1 : text.size();
  for (std::size_t n = 0; n < lines && start != std::string::npos && start > 0; ++n)
    start = text.rfind('\n', start - 1);
  return start == std::string::npos || start == 0 ? text : text.substr(start + 1);
}

std::string read_text(const std::filesystem::path& file, std::size_t max_bytes) {
  std::ifstream in(file, std::ios::binary);
  if (!in) return {};
  std::string s(max_bytes, '\0');
  in.read(s.data(), static_cast<std::streamsize>(max_bytes));
  s.resize(static_cast<std::size_t>(in.gcount()));
  return s;
}

ScratchDir::ScratchDir(const std::string& prefix) {
  std::string name = "/tmp/labkit-" + prefix + "-XXXXXX";
  if (!::mkdtemp(name.data())) throw std::runtime_error("cannot create a temporary folder in /tmp");
  path_ = name;
}

ScratchDir::~ScratchDir() {
  std::error_code ec;
  if (!keep_) std::filesystem::remove_all(path_, ec);
}

json unreported_result(const std::string& id, const std::string& role, const std::string& kind,
                       const std::string& title, double points, const std::string& v, const std::string& message,
                       const std::string& hint) {
  // The lab's points still count in the class's maximum: a crash scores 0 of them, not 0 of 0.
  return {{"lab", {{"id", id}, {"role", role}, {"kind", kind}, {"title", title}}},
          {"verdict", v}, {"message", message}, {"hint", hint},
          {"score", {{"total", 0}, {"max", points}, {"lines", json::array()}}},
          {"exit_code", verdict::exit_code(v)}};
}

std::string crash_message(const std::string& err) {
  const auto at = err.find("labkit: the lab crashed:");
  if (at == std::string::npos) return {};
  return "T" + err.substr(at + 9, err.find('\n', at) - at - 9);
}

json result_of(const LabEntry& lab, const subprocess::Result& p) {
  if (p.started && !p.timed_out && p.signal == 0) {
    try {
      json j = json::parse(p.out);
      if (j.is_object() && j.contains("verdict")) return j;
    } catch (const json::parse_error&) {
    }
  }
  std::string v = verdict::kCrashed, message, hint;
  if (!p.started) {
    v = verdict::kKitError;
    message = fmt::format("Cannot run {}: {}", p.program, p.error);
  } else if (p.timed_out) {
    v = verdict::kTimeout;
    message = fmt::format("The grading of {} {}.", lab.id, p.describe());
    hint = verdict::kNeverReturnsHint;
  } else if (message = crash_message(p.err); !message.empty()) {
    // The runner's crash handler named the signal, the phase and the case (grader/runner/watchdog.h).
    if (message.find("SIGSEGV") != std::string::npos) hint = verdict::kHostSegfaultHint;
  } else {
    message = fmt::format("The lab's process {} before it could report.", p.describe());
    if (p.signal == SIGSEGV) hint = verdict::kHostSegfaultHint;
  }
  const std::string err = tail(p.err, 6);
  if (!err.empty()) message += "\nIts last words:\n" + err;
  std::string title = lab.id;
  double points = 0;
  try {
    const LabSpec spec = load_lab_spec(lab.lab_json);
    title = spec.title;
    points = spec.points;
  } catch (const LabSpecError&) {  // the child reports a broken lab.json itself
  }
  json r = unreported_result(lab.id, lab.role, lab.kind, title, points, v, message, hint);
  r["seconds"] = p.seconds;
  return r;
}

judge::LabUnderTest lab_under_test(const LabEntry& lab) {
  const std::filesystem::path root = LABKIT_SOURCE_ROOT;
  return {lab.id, lab.role, lab.lab_json.string(), lab.ptx, lab.folder + "/kernel.cu",
          (root / lab.folder / "kernel.cu").string(), lab.exe, lab.unbuilt};
}

void choose_sandbox(const std::string& mode_text, judge::Options& o) {
  std::string mode = mode_text;
  if (mode.empty()) {
    const char* env = std::getenv("LABKIT_SANDBOX");
    mode = env && *env ? env : "bubblewrap";
  }
  o.sandbox = sandbox::parse_mode(mode);
  if (o.sandbox == sandbox::Mode::none) return;
  o.probe = sandbox::probe();
  if (!o.probe.available)
    throw std::runtime_error(fmt::format(
        "the sandbox the lab's code runs in (bubblewrap) cannot start here: {}.\n"
        "  Install bubblewrap (Debian: apt-get install bubblewrap) or allow user namespaces; to grade without a "
        "sandbox on a machine you trust, pass --sandbox none (or set LABKIT_SANDBOX=none): every report then says \"sandbox: none\".",
        o.probe.why));
  // What the lab must not see: this kit (its fixtures, solutions, expected files, build tree and
  // results), the data, and the home folders.
  o.hide = judge::kit_paths_to_hide();
  for (const std::string& p : {o.fixtures, o.data_dir, o.model_dir})
    if (!p.empty()) o.hide.push_back(std::filesystem::absolute(p).parent_path().string());
  // More folders from the environment, ':'-separated (bulk grading hides the class's submissions).
  if (const char* more = std::getenv("LABKIT_HIDE"))
    for (std::string_view rest = more; !rest.empty();) {
      const std::size_t colon = rest.find(':');
      if (colon != 0) o.hide.emplace_back(rest.substr(0, colon));
      if (colon == std::string_view::npos) break;
      rest.remove_prefix(colon + 1);
    }
}

std::optional<LabEntry> find_lab(const std::string& command, const std::string& role, const std::string& id) {
  for (const LabEntry& l : read_registry()) {
    if (l.role != role || l.id != id) continue;
    if (l.unbuilt.empty()) return l;
    // lab.json "requires_gpu" against gpu_arch (grader/harness/discover_labs.py).
    fmt::print(stderr, "labkit {}: {} has no harness in this build: it {}; rebuild with `meson setup --reconfigure BUILD_DIR "
               "-Dgpu_arch=auto` on a GPU that has it\n", command, id, l.unbuilt);
    return std::nullopt;
  }
  fmt::print(stderr, "labkit {}: no {} named \"{}\" in this build (see `labkit list{}`)\n", command, role, id,
             role == "test" ? " --tests" : "");
  return std::nullopt;
}

std::filesystem::path find_tool(const std::string& name, const std::string& given,
                                const std::vector<std::filesystem::path>& extra_dirs) {
  namespace fs = std::filesystem;
  auto runnable = [](const fs::path& p) { return !p.empty() && ::access(p.c_str(), X_OK) == 0 && !fs::is_directory(p); };
  if (!given.empty()) return runnable(given) ? fs::path(given) : fs::path();
  if (const char* path = std::getenv("PATH")) {
    std::string_view rest = path;
    while (!rest.empty()) {
      const std::size_t colon = rest.find(':');
      const fs::path dir(std::string(rest.substr(0, colon)));
      if (!dir.empty() && runnable(dir / name)) return dir / name;
      if (colon == std::string_view::npos) break;
      rest.remove_prefix(colon + 1);
    }
  }
  std::vector<fs::path> dirs{fs::path(LABKIT_CUDA_ROOT) / "bin"};
  dirs.insert(dirs.end(), extra_dirs.begin(), extra_dirs.end());
  for (const fs::path& d : dirs)
    if (runnable(d / name)) return d / name;
  return {};
}

// Nsight Compute also installs outside the toolkit's bin/ (/opt/nvidia/nsight-compute/<version>).
std::vector<std::filesystem::path> ncu_install_dirs() {
  namespace fs = std::filesystem;
  std::vector<fs::path> dirs;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator("/opt/nvidia/nsight-compute", ec)) dirs.push_back(e.path());
  for (const auto& e : fs::directory_iterator(LABKIT_CUDA_ROOT, ec))
    if (e.path().filename().string().starts_with("nsight-compute")) dirs.push_back(e.path());
  std::sort(dirs.rbegin(), dirs.rend());  // newest version first
  return dirs;
}

}  // namespace labkit::cli
