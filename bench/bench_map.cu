// bench_map.cu — Google Benchmark of the elementwise (map) workload: the baseline, and with
// LABKIT_BENCH_LAB set (bench-<lab>, compiled with a map solution's kernel.cu) the solution too.
//
//   meson test -C build --benchmark --suite gpu        (or run build/bench/bench-<lab>)
//
// What is timed: map_forward_gpu only (Op Time) on dimx x dimy floats, 16 iterations (the
// grading workload is 8192 x 8192), between two CUDA events on the default stream. The update is
// in place, so before every sample the data is restored from a pristine device copy, outside the
// timed region, like the grader does: repeated updates would otherwise grow the values without
// bound. Counters: op_ms, Gupd/s (element updates per second, elements x iterations / time).
//
// Without a usable CUDA device it prints a line and exits 77 (meson's SKIP).
#include <benchmark/benchmark.h>

#include <exception>
#include <memory>
#include <string>
#include <vector>

#include "labkit/cuda_check.h"
#include "grader/core/device_buffer.h"
#include "grader/core/event_timer.h"
#include "labkit/map.h"
#include "grader/core/random.h"
#include "reference/baseline.h"
#include "bench_main.h"

namespace {

constexpr int kIterations = 16;
constexpr int kWarmupCalls = 2;

// One size's input, kept on the device as a pristine copy and a working copy. Google Benchmark
// calls a benchmark several times while it settles the iteration count, so the current size is
// kept until a benchmark of another size comes (filling 64 M floats on the host takes a while).
struct Problem {
  Problem(int dimx, int dimy) : dimx(dimx), dimy(dimy), pristine(n()), data(n()) {
    std::vector<float> host(n());
    labkit::fill_uniform(host, labkit::kMapInputMin, labkit::kMapInputMax,
                         labkit::seed_for(408, "bench/map"));
    LABKIT_CUDA_CHECK(cudaMemcpy(pristine.get(), host.data(), n() * sizeof(float), cudaMemcpyHostToDevice));
  }
  std::size_t n() const { return std::size_t(dimx) * dimy; }
  // Enqueued before a sample's start event: not timed.
  void restore() {
    LABKIT_CUDA_CHECK(cudaMemcpyAsync(data.get(), pristine.get(), n() * sizeof(float),
                                      cudaMemcpyDeviceToDevice));
  }
  const int dimx, dimy;
  labkit::DeviceBuffer<float> pristine, data;
};

std::unique_ptr<Problem> g_problem;

Problem& problem_for(int dimx, int dimy) {
  if (!g_problem || g_problem->dimx != dimx || g_problem->dimy != dimy) {
    g_problem.reset();  // free the previous size first
    g_problem = std::make_unique<Problem>(dimx, dimy);
  }
  return *g_problem;
}

void bench_map(benchmark::State& state, labkit::MapOps ops, int dimx, int dimy) {
  try {
    Problem& problem = problem_for(dimx, dimy);
    labkit::EventPair events;
    for (int i = 0; i < kWarmupCalls; ++i) {
      problem.restore();
      ops.forward(problem.data.get(), dimx, dimy, kIterations);
    }
    LABKIT_CUDA_CHECK(cudaDeviceSynchronize());

    double total_s = 0;
    for (auto _ : state) {
      problem.restore();
      LABKIT_CUDA_CHECK(cudaEventRecord(events.start));
      ops.forward(problem.data.get(), dimx, dimy, kIterations);
      LABKIT_CUDA_CHECK(cudaEventRecord(events.stop));
      LABKIT_CUDA_CHECK(cudaEventSynchronize(events.stop));
      const float ms = events.elapsed_ms();
      state.SetIterationTime(ms * 1e-3);
      total_s += ms * 1e-3;
    }
    if (state.iterations() == 0 || total_s <= 0) return;
    const double mean_s = total_s / double(state.iterations());
    state.counters["op_ms"] = mean_s * 1e3;
    state.counters["Gupd/s"] = double(problem.n()) * kIterations / mean_s * 1e-9;
  } catch (const std::exception& e) {
    bench::fail(state, e);
  }
}

void register_benchmarks() {
  std::vector<labkit::MapOps> implementations{labkit::baseline::map_ops};
#ifdef LABKIT_BENCH_LAB
  implementations.push_back({LABKIT_BENCH_LAB, &labkit::map_forward_gpu});
#endif
  for (int side : {2048, 4096, 8192}) {
    for (const labkit::MapOps& ops : implementations) {
      const std::string name = std::string(ops.name) + "/map/" + std::to_string(side) + "x" +
                               std::to_string(side);
      benchmark::RegisterBenchmark(name.c_str(), bench_map, ops, side, side)
          ->UseManualTime()
          ->Unit(benchmark::kMillisecond)
          ->MinTime(0.5);
    }
  }
}

}  // namespace

int main(int argc, char** argv) {
  return bench::run(argc, argv, register_benchmarks, [] { g_problem.reset(); });
}
