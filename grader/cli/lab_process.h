// lab_process.h — one lab's grading executable as a child process, for the subcommands that run
// labs (grade, calibrate, profile): its result JSON, or a verdict made from how it ended when it
// could not report (timeout, crash, could not start); and where the kit's external tools are.
#pragma once

#include <filesystem>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "grader/judge/judge.h"
#include "grader/judge/subprocess.h"
#include "registry.h"

namespace labkit::cli {

// The child's JSON when it printed one (a "verdict" object on stdout), else a result with the
// verdict timeout / crashed / kit-error, the child's last words and the lab's points as max.
nlohmann::json result_of(const LabEntry& lab, const subprocess::Result& p);

// The result of a lab that could not report its own (grader/judge/grade_result.h's JSON, score 0 of the
// lab's points): what `labkit grade` and `labkit bulk finish` write for a crash, a timeout, a
// failed build. `message` says what happened; `hint` may be empty.
nlohmann::json unreported_result(const std::string& id, const std::string& role, const std::string& kind,
                                 const std::string& title, double points, const std::string& verdict,
                                 const std::string& message, const std::string& hint);

// The message of a child the runner's crash handler stopped ("The lab crashed: SIGSEGV during
// conv_forward_gpu ..."), read from its stderr; empty when the handler did not fire.
std::string crash_message(const std::string& stderr_text);

// The last `lines` lines of a child's stderr.
std::string tail(const std::string& text, std::size_t lines);

// A file a child wrote (a tool's log, a lab's output); empty when it is missing. At most
// max_bytes are read: the writer may be a student's program.
std::string read_text(const std::filesystem::path& file, std::size_t max_bytes = 64u << 20);

// A fresh folder under /tmp for a child's files, removed with everything in it when this goes
// out of scope unless keep() was called.
class ScratchDir {
 public:
  explicit ScratchDir(const std::string& prefix);
  ~ScratchDir();
  ScratchDir(const ScratchDir&) = delete;
  ScratchDir& operator=(const ScratchDir&) = delete;
  const std::filesystem::path& path() const { return path_; }
  void keep() { keep_ = true; }

 private:
  std::filesystem::path path_;
  bool keep_ = false;
};

// The judge's view of a registry entry (grader/judge/judge.h).
judge::LabUnderTest lab_under_test(const LabEntry& lab);

// How the lab's harness is confined: "bubblewrap" (the default; LABKIT_SANDBOX in the
// environment may say "none") after probing it. Throws std::runtime_error with what to do when
// bubblewrap cannot run here. Sets options.sandbox, options.probe and the folders to hide (this
// kit's source and build trees, the fixtures, the data, the home folders).
void choose_sandbox(const std::string& mode, judge::Options& options);

// The lab of `role` named `id` in this build's registry; prints "labkit <command>: no ... named"
// and returns nullopt when there is none, or why the build has no harness for it.
std::optional<LabEntry> find_lab(const std::string& command, const std::string& role, const std::string& id);

// An external program: `given` when not empty (must exist), else `name` on PATH, else in the CUDA
// toolkit's bin/ this build used, else under `extra_dirs`. Empty when none is found.
std::filesystem::path find_tool(const std::string& name, const std::string& given,
                                const std::vector<std::filesystem::path>& extra_dirs = {});
// Where Nsight Compute installs besides PATH and the toolkit's bin/, newest first.
std::vector<std::filesystem::path> ncu_install_dirs();

}  // namespace labkit::cli
