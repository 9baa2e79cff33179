// The doctest main of the sandbox tests: the cases that need no bwrap always run; those of the
// "bwrap" suite need a bwrap that can create namespaces here. Without one they are left out and,
// once the others have passed, the test exits 77 (meson: SKIP) saying why. LABKIT_TEST_BWRAP
// names the bwrap to use (as probe()'s hint), e.g. a missing one to see the skip.
// `test-sandbox --gpu-check` is the CUDA program the GPU case runs inside the sandbox.
#define DOCTEST_CONFIG_IMPLEMENT
#include <doctest/doctest.h>

#include <fmt/core.h>

#include "sandbox_util.h"

#include <string_view>

namespace sandbox_test {
int gpu_check();
}

int main(int argc, char** argv) {
  if (argc == 2 && std::string_view(argv[1]) == "--gpu-check") return sandbox_test::gpu_check();
  const auto& probe = sandbox_test::bwrap();
  doctest::Context context(argc, argv);
  if (!probe.available) context.addFilter("test-suite-exclude", "bwrap");
  const int rc = context.run();
  if (rc != 0 || context.shouldExit()) return rc;
  if (!probe.available) {
    fmt::print("bubblewrap cannot run here ({}): the sandbox cases were skipped\n", probe.why);
    return 77;
  }
  return 0;
}
