// registry.h — the labs this build knows: grader/runner/meson.build writes labs.json at configure
// time (role, id, kind, folder, executable of every lab folder); `labkit list` and `labkit grade`
// read it. The lab.json of an entry is labs/<id>/lab.json for every role but "test".
#pragma once

#include <filesystem>
#include <string>
#include <vector>

namespace labkit::cli {

struct LabEntry {
  std::string role, id, kind, folder, exe;  // exe: the lab's harness
  std::string ptx;                          // the PTX built from its kernel.cu
  std::filesystem::path lab_json;  // absolute
  std::string unbuilt;  // why this build has no harness for it (lab.json "requires_gpu"), or ""
};

// Throws std::runtime_error naming the file when the registry is missing or malformed.
std::vector<LabEntry> read_registry();

}  // namespace labkit::cli
