// `labkit dist DIR` — the student distribution: the kit without its solutions and instructor-only
// files (tools/dist/manifest.json), with the student README, and a .labkit-dist.json that says
// where it came from. --check proves it stands alone: configure, build, `meson test --no-suite labs`
// (--gpu-arch: the gpu_arch option of that configure).
#include <fmt/core.h>
#include <fmt/ranges.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <memory>
#include <nlohmann/json.hpp>

#include "commands.h"
#include "lab_process.h"
#include "grader/core/exit_codes.h"
#include "grader/judge/subprocess.h"
#include "labkit_config.h"

namespace labkit::cli {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

constexpr const char* kMarker = ".labkit-dist.json";
constexpr const char* kManifest = "tools/dist/manifest.json";

struct DistOptions {
  std::string dir;
  bool force = false, check = false;
  double check_timeout_s = 3600;
  std::string gpu_arch;  // --check's -Dgpu_arch; empty: the kit's default
};

struct Manifest {
  std::vector<std::string> instructor_only;
  std::vector<std::pair<std::string, std::string>> replace;  // exported path <- kit path
};

Manifest read_manifest(const fs::path& root) {
  const fs::path file = root / kManifest;
  std::ifstream in(file);
  if (!in) throw std::runtime_error(fmt::format("{}: missing (it lists what students must not get)", file.string()));
  Manifest m;
  try {
    const json j = json::parse(in);
    m.instructor_only = j.at("instructor_only").get<std::vector<std::string>>();
    const json replace = j.value("replace", json::object());
    for (const auto& [to, from] : replace.items()) m.replace.push_back({to, from.get<std::string>()});
  } catch (const json::exception& e) {
    throw std::runtime_error(fmt::format("{}: {} (expected {{\"instructor_only\": [paths], \"replace\": {{path: path}}}})",
                                         file.string(), e.what()));
  }
  return m;
}

bool left_out(const std::string& rel, const Manifest& m) {
  for (const std::string& e : m.instructor_only)
    if (rel == e || rel.starts_with(e + "/")) return true;
  return false;
}

std::vector<std::string> lines0(const std::string& text) {
  std::vector<std::string> out;
  std::size_t start = 0;
  for (std::size_t end; (end = text.find('\0', start)) != std::string::npos; start = end + 1)
    if (end > start) out.push_back(text.substr(start, end - start));
  return out;
}

// The kit's files: what git tracks when the kit is a git checkout (build folders and local files
// stay out by construction), else every file outside build folders.
struct Listing {
  std::vector<std::string> files;
  std::string source;  // "git" or "walk"
  std::size_t untracked = 0;
  std::string commit;
};

Listing list_files(const fs::path& root, const fs::path& skip) {
  Listing l;
  const subprocess::Result git = subprocess::run({"git", "-C", root.string(), "ls-files", "-z"});
  if (git.started && git.exit_code == 0 && !git.out.empty()) {
    l.source = "git";
    for (std::string& f : lines0(git.out))
      if (fs::is_regular_file(root / f)) l.files.push_back(std::move(f));  // tracked but deleted: skip
    const subprocess::Result others = subprocess::run({"git", "-C", root.string(), "ls-files", "-z", "--others", "--exclude-standard"});
    if (others.exit_code == 0) l.untracked = lines0(others.out).size();
    const subprocess::Result head = subprocess::run({"git", "-C", root.string(), "rev-parse", "HEAD"});
    if (head.exit_code == 0) l.commit = head.out.substr(0, head.out.find('\n'));
    const subprocess::Result dirty = subprocess::run({"git", "-C", root.string(), "status", "--porcelain", "--untracked-files=no"});
    if (dirty.exit_code == 0 && !dirty.out.empty()) l.commit += " (with uncommitted changes)";
    return l;
  }
  l.source = "walk";
  for (auto it = fs::recursive_directory_iterator(root); it != fs::recursive_directory_iterator(); ++it) {
    const fs::path& p = it->path();
    const std::string name = p.filename().string();
    std::error_code ec;
    if (it->is_directory() && (name == ".git" || name == "__pycache__" || fs::exists(p / "meson-private") ||
                               fs::equivalent(p, skip, ec))) {
      it.disable_recursion_pending();
      continue;
    }
    if (it->is_regular_file()) l.files.push_back(fs::relative(p, root).generic_string());
  }
  std::sort(l.files.begin(), l.files.end());
  return l;
}

std::string now_iso() {
  const auto t = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&t));
  return buf;
}

// Configure, build and run the kit's own tests in the export, as a student would.
int check_export(const fs::path& dir, const DistOptions& o) {
  const fs::path meson = find_tool("meson", "");
  if (meson.empty()) {
    fmt::print(stderr, "labkit dist: --check needs meson on PATH\n");
    return exit_code::kKitError;
  }
  subprocess::Options so;
  so.timeout = std::chrono::milliseconds(static_cast<long long>(o.check_timeout_s * 1000));
  so.working_directory = dir;
  so.max_output_bytes = 64u << 20;
  std::vector<std::vector<std::string>> steps{
      {meson.string(), "setup", "build", "--native-file", "tools/cuda.ini"},
      {meson.string(), "test", "-C", "build", "--no-suite", "labs", "--print-errorlogs"}};
  // Passed as it is: meson itself reports a value it does not take (printed below on failure).
  if (!o.gpu_arch.empty()) steps[0].push_back("-Dgpu_arch=" + o.gpu_arch);
  for (const auto& argv : steps) {
    fmt::print("check: {} (in {}) ...\n", fmt::join(argv.begin() + 1, argv.end(), " "), dir.string());
    std::fflush(stdout);
    const subprocess::Result p = subprocess::run(argv, so);
    if (!p.started || p.exit_code != 0) {
      fmt::print(stderr, "labkit dist: the export does not stand alone: `meson {}` {}:\n{}\n{}\n", argv[1], p.describe(),
                 tail(p.out, 30), tail(p.err, 10));
      return exit_code::kFail;
    }
    const std::string last = tail(p.out, 8);
    fmt::print("{}", last.ends_with('\n') ? last : last + "\n");
  }
  fmt::print("check: the distribution builds and passes `meson test --no-suite labs` on its own\n");
  return exit_code::kPass;
}

int run_dist(const DistOptions& o) {
  if (!o.gpu_arch.empty() && !o.check) {
    fmt::print(stderr, "labkit dist: --gpu-arch is the gpu_arch option of --check's build: add --check, or leave it out\n");
    return exit_code::kUsage;
  }
  const fs::path root = fs::canonical(LABKIT_SOURCE_ROOT);
  if (fs::exists(root / kMarker)) {
    fmt::print(stderr, "labkit dist: {} is already a student distribution ({} is there): export from the instructor's kit\n",
               root.string(), kMarker);
    return exit_code::kUsage;
  }
  const fs::path dir = fs::weakly_canonical(fs::absolute(o.dir));
  if (root == dir || std::mismatch(dir.begin(), dir.end(), root.begin(), root.end()).first == dir.end()) {
    fmt::print(stderr, "labkit dist: {} holds the kit itself: choose a folder outside it\n", dir.string());
    return exit_code::kUsage;
  }
  if (fs::exists(dir) && !fs::is_empty(dir)) {
    if (!o.force) {
      fmt::print(stderr, "labkit dist: {} is not empty: choose a new folder, or pass --force to replace an earlier export\n", dir.string());
      return exit_code::kUsage;
    }
    if (!fs::exists(dir / kMarker)) {
      fmt::print(stderr, "labkit dist: {} is not empty and holds no {}: it is not an earlier export, so --force will not delete it\n",
                 dir.string(), kMarker);
      return exit_code::kUsage;
    }
    fs::remove_all(dir);
  }
  const Manifest m = read_manifest(root);
  const Listing listing = list_files(root, dir);
  std::size_t exported = 0, excluded = 0;
  for (const std::string& rel : listing.files) {
    if (left_out(rel, m)) {
      ++excluded;
      continue;
    }
    fs::create_directories((dir / rel).parent_path());
    fs::copy_file(root / rel, dir / rel, fs::copy_options::overwrite_existing);
    fs::permissions(dir / rel, fs::status(root / rel).permissions());
    ++exported;
  }
  for (const auto& [to, from] : m.replace) {
    if (!fs::is_regular_file(root / from))
      throw std::runtime_error(fmt::format("{}: replaces {} but is missing ({})", from, to, kManifest));
    fs::create_directories((dir / to).parent_path());
    fs::copy_file(root / from, dir / to, fs::copy_options::overwrite_existing);
  }
  const json marker{{"made_by", "labkit dist"}, {"date", now_iso()}, {"source_commit", listing.commit},
                    {"listed_by", listing.source}, {"files", exported}, {"left_out", m.instructor_only},
                    {"replaced", json(m.replace)}};
  std::ofstream(dir / kMarker) << marker.dump(2) << "\n";

  fmt::print("labkit dist: {} files exported to {} ({} instructor-only files left out: {})\n", exported, dir.string(),
             excluded, fmt::join(m.instructor_only, ", "));
  for (const auto& [to, from] : m.replace) fmt::print("  {} is {}\n", to, from);
  if (listing.source == "git") {
    fmt::print("  from git's tracked files at {}\n", listing.commit.empty() ? "(no commit)" : listing.commit);
    if (listing.untracked > 0)
      fmt::print("  {} untracked file{} of the kit {} left out: `git add` what students need, then export again\n",
                 listing.untracked, listing.untracked == 1 ? "" : "s", listing.untracked == 1 ? "was" : "were");
  }
  return o.check ? check_export(dir, o) : exit_code::kPass;
}

}  // namespace

void add_dist(CLI::App& app, int& status) {
  auto o = std::make_shared<DistOptions>();
  auto* cmd = app.add_subcommand("dist", "Export the student distribution (no solutions, no instructor-only files)");
  cmd->add_option("dir", o->dir, "where to export (a new or empty folder)")->required();
  cmd->add_flag("--force", o->force, "replace an earlier export in DIR");
  cmd->add_flag("--check", o->check, "then configure, build and run `meson test --no-suite labs` in the export");
  cmd->add_option("--check-timeout", o->check_timeout_s, "seconds for each --check step")->check(CLI::Range(60.0, 86400.0));
  cmd->add_option("--gpu-arch", o->gpu_arch,
                  "the kit's gpu_arch option for --check's build, e.g. 9.0+PTX (default: the kit's)");
  cmd->callback([o, &status] {
    try {
      status = run_dist(*o);
    } catch (const std::exception& e) {
      fmt::print(stderr, "labkit dist: {}\n", e.what());
      status = exit_code::kKitError;
    }
  });
}

}  // namespace labkit::cli
