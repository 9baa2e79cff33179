// bench_conv.cu — Google Benchmark of a conv at the milestone batches (100, 1000, 10000).
//
//   meson test -C build --benchmark --suite gpu        (or run build/bench/bench-<name>)
//
// Built twice over: bench-baseline times the baseline alone; bench-<lab> (one per solution in
// solutions/, compiled with that kernel.cu and LABKIT_BENCH_LAB set to the lab's id) times the
// baseline and the solution side by side, as "baseline/conv1/B:1000" and "<lab>/conv1/B:1000".
//
// Layer-timed labs (lab.json "timed": "layer", built with LABKIT_BENCH_LAYER) are timed like the
// grader times them instead: prolog + conv_forward_gpu + epilog, host clock to host clock, with
// pinned host arrays, for the baseline and the lab alike (bench_layer below).
//
// What is timed otherwise: conv_forward_gpu only (Op Time), between two CUDA events on the default stream,
// reported as manual time. Before every sample the L2 is flushed by overwriting a
// buffer twice its (queried) size, outside the timed region: a conv layer inside the network
// finds its inputs in device memory, not in L2. The flush also keeps the stream busy while the
// host enqueues the events and the kernel, so launch overhead does not leak into the samples.
// Counters: op_ms (mean Op Time), GFLOP/s (2 x MACs / time), GB/s (input + mask + output bytes
// / time: the least traffic any implementation must move).
//
// Without a usable CUDA device it prints a line and exits 77 (meson's SKIP).
#include <benchmark/benchmark.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <exception>
#include <memory>
#include <string>
#include <vector>

#include "grader/harness/conv_run.h"  // HostArray
#include "labkit/cuda_check.h"
#include "grader/judge/device.h"  // L2Flush
#include "grader/core/event_timer.h"
#include "grader/core/random.h"
#include "reference/baseline.h"
#include "bench_main.h"

namespace {

using labkit::ConvShape;
namespace baseline = labkit::baseline;

constexpr int kWarmupCalls = 3;

// One shape's device buffers, set up by the implementation's own prolog from random inputs. Google
// Benchmark calls a benchmark several times while it settles the iteration count, so the
// current problem is kept until a benchmark with another shape comes.
class Problem {
 public:
  Problem(const labkit::ConvOps& ops, const ConvShape& s)
      : ops(ops), shape(s), host_output_(s.output_size()) {
    std::vector<float> input(s.input_size()), mask(s.mask_size());
    labkit::fill_uniform(input, -1.f, 1.f, labkit::seed_for(408, "bench/input"));
    labkit::fill_uniform(mask, -0.5f, 0.5f, labkit::seed_for(408, "bench/mask"));
    ops.prolog(host_output_.data(), input.data(), mask.data(), &output_, &input_, &mask_, s);
  }
  ~Problem() {
    try {
      ops.epilog(host_output_.data(), output_, input_, mask_, shape);
    } catch (const std::exception& e) {
      std::fprintf(stderr, "bench: %s epilog failed: %s\n", ops.name, e.what());
    }
  }
  Problem(const Problem&) = delete;
  Problem& operator=(const Problem&) = delete;

  void forward() { ops.forward(output_, input_, mask_, shape); }
  bool holds(const labkit::ConvOps& o, const ConvShape& s) const {
    return o.forward == ops.forward && s.B == shape.B && s.M == shape.M && s.C == shape.C && s.H == shape.H &&
           s.W == shape.W && s.K == shape.K;
  }

  const labkit::ConvOps ops;
  const ConvShape shape;

 private:
  std::vector<float> host_output_;
  float* output_ = nullptr;
  float* input_ = nullptr;
  float* mask_ = nullptr;
};

std::unique_ptr<labkit::L2Flush> g_flush;
std::unique_ptr<Problem> g_problem;

Problem& problem_for(const labkit::ConvOps& ops, const ConvShape& s) {
  if (!g_problem || !g_problem->holds(ops, s)) {
    g_problem.reset();  // free the previous buffers first: batch 10000 is ~1.3 GB
    g_problem = std::make_unique<Problem>(ops, s);
  }
  return *g_problem;
}

void bench_conv(benchmark::State& state, labkit::ConvOps ops, ConvShape shape) {
  try {
    Problem& problem = problem_for(ops, shape);
    labkit::L2Flush& flush = *g_flush;
    labkit::EventPair events;
    for (int i = 0; i < kWarmupCalls; ++i) {
      flush();
      problem.forward();
    }
    LABKIT_CUDA_CHECK(cudaDeviceSynchronize());

    double total_s = 0;
    for (auto _ : state) {
      flush();  // enqueued before the start event: not timed
      LABKIT_CUDA_CHECK(cudaEventRecord(events.start));
      problem.forward();
      LABKIT_CUDA_CHECK(cudaEventRecord(events.stop));
      LABKIT_CUDA_CHECK(cudaEventSynchronize(events.stop));
      const float ms = events.elapsed_ms();
      state.SetIterationTime(ms * 1e-3);
      total_s += ms * 1e-3;
    }
    if (state.iterations() == 0 || total_s <= 0) return;
    const double mean_s = total_s / double(state.iterations());
    const double bytes = double(shape.input_size() + shape.mask_size() + shape.output_size()) * 4;
    state.counters["op_ms"] = mean_s * 1e3;
    state.counters["GFLOP/s"] = 2.0 * double(shape.macs()) / mean_s * 1e-9;
    state.counters["GB/s"] = bytes / mean_s * 1e-9;
  } catch (const std::exception& e) {
    bench::fail(state, e);
  }
}

// Layer Time: the three phases host to host, from pinned host arrays (what the grader gives a
// layer-timed lab). The inputs are filled once per benchmark; every sample allocates, copies,
// computes, copies back and frees, as a layer of the network would.
void bench_layer(benchmark::State& state, labkit::ConvOps ops, ConvShape shape) {
  try {
    g_problem.reset();  // op benchmarks' buffers would only take device memory here
    using labkit::HostArray, labkit::HostMemory;
    HostArray input(shape.input_size(), HostMemory::pinned), mask(shape.mask_size(), HostMemory::pinned),
        output(shape.output_size(), HostMemory::pinned);
    labkit::fill_uniform(input.span(), -1.f, 1.f, labkit::seed_for(408, "bench/input"));
    labkit::fill_uniform(mask.span(), -0.5f, 0.5f, labkit::seed_for(408, "bench/mask"));
    labkit::L2Flush& flush = *g_flush;
    auto layer = [&] {
      float *d_out = nullptr, *d_in = nullptr, *d_mask = nullptr;
      ops.prolog(output.data(), input.data(), mask.data(), &d_out, &d_in, &d_mask, shape);
      ops.forward(d_out, d_in, d_mask, shape);
      ops.epilog(output.data(), d_out, d_in, d_mask, shape);
      LABKIT_CUDA_CHECK(cudaDeviceSynchronize());
    };
    for (int i = 0; i < kWarmupCalls; ++i) layer();

    double total_s = 0;
    for (auto _ : state) {
      flush();
      LABKIT_CUDA_CHECK(cudaDeviceSynchronize());  // the flush is not part of the layer
      const auto t0 = std::chrono::steady_clock::now();
      layer();
      const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      state.SetIterationTime(s);
      total_s += s;
    }
    if (state.iterations() == 0 || total_s <= 0) return;
    const double mean_s = total_s / double(state.iterations());
    const double bytes = double(shape.input_size() + shape.mask_size() + shape.output_size()) * 4;
    state.counters["layer_ms"] = mean_s * 1e3;
    state.counters["GB/s"] = bytes / mean_s * 1e-9;  // host <-> device traffic of the layer
  } catch (const std::exception& e) {
    bench::fail(state, e);
  }
}

#ifdef LABKIT_BENCH_LAYER
constexpr bool kLayerTimed = true;
#else
constexpr bool kLayerTimed = false;
#endif

void register_benchmarks() {
  struct Layer {
    const char* name;
    ConvShape shape;  // at batch 1; B is set per benchmark
  };
  const Layer layers[] = {{"conv1", {1, 4, 1, 86, 86, 7}}, {"conv2", {1, 16, 4, 40, 40, 7}}};
  std::vector<labkit::ConvOps> implementations{baseline::conv_ops};
#ifdef LABKIT_BENCH_LAB
  implementations.push_back({LABKIT_BENCH_LAB, &labkit::conv_forward_gpu_prolog,
                             &labkit::conv_forward_gpu, &labkit::conv_forward_gpu_epilog});
#endif
  // Layer by layer and batch by batch, baseline then lab: each pair of rows compares directly.
  for (const Layer& layer : layers) {
    for (int batch : {100, 1000, 10000}) {
      for (const labkit::ConvOps& ops : implementations) {
        ConvShape s = layer.shape;
        s.B = batch;
        const std::string name =
            std::string(ops.name) + "/" + layer.name + "/B:" + std::to_string(batch);
        benchmark::RegisterBenchmark(name.c_str(), kLayerTimed ? bench_layer : bench_conv, ops, s)
            ->UseManualTime()
            ->Unit(benchmark::kMillisecond)
            ->MinTime(0.5);
      }
    }
  }
}

}  // namespace

int main(int argc, char** argv) {
  auto setup = [] {
    g_flush = std::make_unique<labkit::L2Flush>();
    benchmark::AddCustomContext("l2_flush_bytes", std::to_string(g_flush->bytes()));
    register_benchmarks();
  };
  auto teardown = [] {
    g_problem.reset();
    g_flush.reset();
  };
  return bench::run(argc, argv, setup, teardown);
}
