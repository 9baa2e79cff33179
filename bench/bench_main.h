// bench_main.h — what every bench-* executable does around its benchmarks.
//
//   int main(int argc, char** argv) { return bench::run(argc, argv, setup, teardown); }
//
// run(): without a usable CUDA device, prints a line and returns 77 (meson's SKIP). Otherwise
// records the GPU in the benchmark context, calls setup() (register benchmarks, allocate what
// they share; a throw is a kit error, 99), runs the benchmarks, calls teardown() (free device
// memory before the CUDA runtime shuts down) and returns 1 if any benchmark called fail().
#pragma once

#include <benchmark/benchmark.h>

#include <cstdio>
#include <exception>

#include "labkit/cuda_check.h"
#include "grader/judge/device.h"
#include "grader/core/exit_codes.h"

namespace bench {

inline bool g_failed = false;

// A benchmark that cannot run: its row says why, and the executable exits 1.
inline void fail(benchmark::State& state, const std::exception& e) {
  g_failed = true;
  state.SkipWithError(e.what());
}

template <class Setup, class Teardown>
int run(int argc, char** argv, Setup setup, Teardown teardown) {
  if (!labkit::cuda_device_available()) {
    std::puts("bench: no usable CUDA device (no driver or no GPU): skipping");
    return labkit::exit_code::kNoDevice;
  }
  try {
    benchmark::AddCustomContext("gpu", labkit::device_info().summary());
    setup();
  } catch (const std::exception& e) {
    std::fprintf(stderr, "bench: %s\n", e.what());
    return labkit::exit_code::kKitError;
  }
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return labkit::exit_code::kUsage;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  teardown();
  return g_failed ? labkit::exit_code::kFail : labkit::exit_code::kPass;
}

}  // namespace bench
