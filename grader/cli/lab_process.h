// lab_process.h — one lab's grading executable as a child process, for the subcommands that run
// labs (grade, calibrate, profile): its result JSON, or a verdict made from how it ended when it
// could not report (timeout, crash, could not start); and where the kit's external tools are.
#pragma once

#include <filesystem>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "labkit/subprocess.h"
#include "registry.h"

namespace labkit::cli {

// The child's JSON when it printed one (a "verdict" object on stdout), else a result with the
// verdict timeout / crashed / kit-error, the child's last words and the lab's points as max.
nlohmann::json result_of(const LabEntry& lab, const subprocess::Result& p);

// The last `lines` lines of a child's stderr.
std::string tail(const std::string& text, std::size_t lines);

// A file a child wrote (a tool's log); empty when it is missing.
std::string read_text(const std::filesystem::path& file);

// The lab of `role` named `id` in this build's registry; prints "labkit <command>: no ... named"
// and returns nullopt when there is none.
std::optional<LabEntry> find_lab(const std::string& command, const std::string& role, const std::string& id);

// An external program: `given` when not empty (must exist), else `name` on PATH, else in the CUDA
// toolkit's bin/ this build used, else under `extra_dirs`. Empty when none is found.
std::filesystem::path find_tool(const std::string& name, const std::string& given,
                                const std::vector<std::filesystem::path>& extra_dirs = {});

}  // namespace labkit::cli
