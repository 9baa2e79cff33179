// bench_network_cpu.cpp — the milestone network's CPU layers (reference/network.h) at the report's
// batches: ReLU + maxpool 2 on conv1's output, ReLU + maxpool 4 on conv2's, FC1 + ReLU, FC2. They
// run in every row of `labkit report` (the baseline's, each lab's, cuDNN's), inside Total Execution
// Time. No GPU needed:
//   build/bench/bench-network-cpu [--benchmark_filter=pool1]
#include <benchmark/benchmark.h>

#include <string>
#include <thread>
#include <vector>

#include "grader/core/random.h"
#include "reference/network.h"

namespace net = labkit::reference::network;

namespace {

std::vector<float> random_values(std::size_t n, const char* name) {
  std::vector<float> v(n);
  labkit::fill_uniform(v, -1.0f, 1.0f, labkit::seed_for(408, name));
  return v;
}

// ReLU + maxpool over [B][C][H][W]: conv1's output (4 x 80 x 80, pool 2) or conv2's (16 x 34 x 34, pool 4).
void pool(benchmark::State& state, int C, int H, int W, int window) {
  const int B = static_cast<int>(state.range(0));
  const std::vector<float> in = random_values(std::size_t(B) * C * H * W, "bench/pool-input");
  std::vector<float> out(std::size_t(B) * C * ((H + window - 1) / window) * ((W + window - 1) / window));
  for (auto _ : state) {
    net::relu_maxpool(in, B, C, H, W, window, out);
    benchmark::DoNotOptimize(out.data());
  }
  state.SetBytesProcessed(state.iterations() * std::int64_t(in.size() * sizeof(float)));
  state.counters["ns_per_input"] = benchmark::Counter(double(in.size()) * double(state.iterations()),
                                                      benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
}

// FC + optional ReLU, [B][N] x [O][N]^T.
void fc(benchmark::State& state, int N, int O, bool relu) {
  const int B = static_cast<int>(state.range(0));
  const std::vector<float> x = random_values(std::size_t(B) * N, "bench/fc-input"),
                           w = random_values(std::size_t(O) * N, "bench/fc-weight"),
                           b = random_values(std::size_t(O), "bench/fc-bias");
  std::vector<float> out(std::size_t(B) * O);
  for (auto _ : state) {
    net::fully_connected(x, B, N, w, b, O, relu, out);
    benchmark::DoNotOptimize(out.data());
  }
  state.counters["multiply_adds"] = benchmark::Counter(double(B) * N * O * double(state.iterations()),
                                                       benchmark::Counter::kIsRate);
}

void pool1(benchmark::State& s) { pool(s, 4, 80, 80, 2); }
void pool2(benchmark::State& s) { pool(s, 16, 34, 34, 4); }
void fc1(benchmark::State& s) { fc(s, net::kFeatures, 32, true); }
void fc2(benchmark::State& s) { fc(s, 32, net::kClasses, false); }

}  // namespace

BENCHMARK(pool1)->Arg(1000)->Arg(10000)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(pool2)->Arg(1000)->Arg(10000)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(fc1)->Arg(1000)->Arg(10000)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(fc2)->Arg(1000)->Arg(10000)->Unit(benchmark::kMillisecond)->UseRealTime();

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::AddCustomContext("threads", std::to_string(std::thread::hardware_concurrency()));
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
