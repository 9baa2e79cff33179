// source_file.h — the CPU unit tests' access to files committed in the kit (fixtures recorded
// from real tools under tests/unit/tools/): LABKIT_SOURCE_DIR, set by tests/meson.build, is the root.
#pragma once

#include <doctest/doctest.h>

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>

namespace labkit::test {

inline std::string source_file(const std::string& relative) {
  const char* root = std::getenv("LABKIT_SOURCE_DIR");
  REQUIRE_MESSAGE(root, "LABKIT_SOURCE_DIR is not set (run through meson test)");
  std::ifstream in(std::string(root) + "/" + relative);
  REQUIRE_MESSAGE(in, "missing fixture " << relative);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

}  // namespace labkit::test
