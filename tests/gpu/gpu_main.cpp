// The doctest main of the GPU tests: without a usable CUDA device they are skipped (exit 77,
// which meson counts as SKIP), never failed.
#define DOCTEST_CONFIG_IMPLEMENT
#include <doctest/doctest.h>

#include <cstdio>

#include "labkit/cuda_check.h"

int main(int argc, char** argv) {
  if (!labkit::cuda_device_available()) {
    std::puts("no usable CUDA device (no driver or no GPU): skipping the GPU tests");
    return 77;
  }
  doctest::Context context(argc, argv);
  return context.run();
}
