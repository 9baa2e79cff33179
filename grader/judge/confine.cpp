// Where the judge's sandbox defaults come from: this build's own trees (grader/judge/judge.h's hide list).
#include <cstdlib>
#include <filesystem>

#include "grader/judge/judge.h"
#include "remote.h"
#include "labkit_config.h"

namespace labkit::judge {

std::vector<std::string> kit_paths_to_hide() {
  std::vector<std::string> hide{LABKIT_SOURCE_ROOT, LABKIT_BUILD_ROOT, LABKIT_DATASET_DIR, LABKIT_MODEL_DIR};
  if (const char* home = std::getenv("HOME")) hide.emplace_back(home);
  return hide;
}

std::string kit_harness(const std::string& kind) {
  return std::string(LABKIT_KIT_HARNESS_DIR) + "/harness-kit-" + kind;
}

}  // namespace labkit::judge
