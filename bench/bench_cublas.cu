// bench_cublas.cu — cuBLAS SGEMM beside 05-unroll-matmul (bench-cublas-matmul): how far the lab's
// own matmul is from the vendor library's on the same unrolled matrix.
//
//   build/bench/bench-cublas-matmul --benchmark_counters_tabular=true --benchmark_filter='conv2/B:10000'
//
// Rows, for conv1 and conv2 at batch 1000 (the grading shapes) and 10000 (the course's), side by side:
//   05-unroll-matmul     the solution's conv_forward_gpu: im2col + its matmul, segment by segment
//                        (absent when the kit has no solutions/05-unroll-matmul, a student copy)
//   unroll               the kit's im2col alone (reference/cublas_matmul.h: the solution's layout
//                        and segments): 05-unroll-matmul minus this row is the solution's matmul
//   cublas-sgemm         cublasSgemm of mask [M][C*K*K] x unrolled [C*K*K][N] per segment: the
//                        product in [M][B*H_out*W_out] order (not yet the conv's output layout)
//   cublas-conv-layout   cublasSgemmStridedBatched, one GEMM per image of the segment: the same
//                        product written as [B][M][H_out][W_out], what a lab's matmul must write
// The cuBLAS rows time the GEMMs alone: every segment is unrolled once, into its own slot, before
// the benchmark, outside the timed region. Timing as bench_conv.cu: CUDA events on the default
// stream around all of a layer's segments, L2 flushed (2x its size, queried) before each sample,
// warm-up calls, manual time. Counters: op_ms, GFLOP/s (2 x MACs / time), and for unroll GB/s
// (X written + input read). conv2 at batch 10000 unrolls to 9 GB of device memory.
//
// Without a usable CUDA device it prints a line and exits 77 (meson's SKIP).
#include <benchmark/benchmark.h>

#include <algorithm>
#include <exception>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "labkit/cuda_check.h"
#include "grader/judge/device.h"  // L2Flush
#include "grader/core/device_buffer.h"
#include "grader/core/event_timer.h"
#include "grader/core/random.h"
#include "reference/cublas_matmul.h"
#include "bench_main.h"

namespace {

using labkit::ConvShape;
namespace cm = labkit::cublas_matmul;

constexpr int kWarmupCalls = 3;

bool same(const ConvShape& a, const ConvShape& b) {
  return a.B == b.B && a.M == b.M && a.C == b.C && a.H == b.H && a.W == b.W && a.K == b.K;
}

std::vector<float> random_values(std::size_t n, float lo, float hi, const char* what) {
  std::vector<float> v(n);
  labkit::fill_uniform(v, lo, hi, labkit::seed_for(408, what));
  return v;
}

// One shape on the device: input, mask, every segment unrolled into its own slot of X (segment s
// at s * KK * segment_images * HW), and an output buffer for either GEMM.
struct Unrolled {
  explicit Unrolled(const ConvShape& s)
      : shape(s), images(cm::segment_images(s)), input(s.input_size()), mask(s.mask_size()),
        x(std::size_t(s.C) * s.K * s.K * s.B * s.H_out() * s.W_out()), output(s.output_size()) {
    input.upload(random_values(s.input_size(), -1.f, 1.f, "bench/input"));
    mask.upload(random_values(s.mask_size(), -0.5f, 0.5f, "bench/mask"));
    for_each_segment([&](int b0, int n, float* slot) { cm::unroll(slot, input.get(), shape, b0, n); });
    LABKIT_CUDA_CHECK(cudaDeviceSynchronize());
  }
  // f(first image, images, the segment's slot of X)
  template <class F>
  void for_each_segment(F&& f) {
    const std::size_t slot = std::size_t(shape.C) * shape.K * shape.K * images * shape.H_out() * shape.W_out();
    for (int b0 = 0, s = 0; b0 < shape.B; b0 += images, ++s) f(b0, std::min(images, shape.B - b0), x.get() + s * slot);
  }
  const ConvShape shape;
  const int images;
  labkit::DeviceBuffer<float> input, mask, x, output;
};

#ifdef LABKIT_BENCH_SOLUTION
// The solution through the lab API, as bench_conv.cu runs it (built with its kernel.cu).
struct Solution {
  explicit Solution(const ConvShape& s) : shape(s), host_output(s.output_size()) {
    const auto in = random_values(s.input_size(), -1.f, 1.f, "bench/input");
    const auto m = random_values(s.mask_size(), -0.5f, 0.5f, "bench/mask");
    labkit::conv_forward_gpu_prolog(host_output.data(), in.data(), m.data(), &output, &input, &mask, s);
  }
  ~Solution() {
    try {
      labkit::conv_forward_gpu_epilog(host_output.data(), output, input, mask, shape);
    } catch (const std::exception& e) {
      std::fprintf(stderr, "bench: 05-unroll-matmul epilog failed: %s\n", e.what());
    }
  }
  const ConvShape shape;
  std::vector<float> host_output;
  float *output = nullptr, *input = nullptr, *mask = nullptr;
  void forward() { labkit::conv_forward_gpu(output, input, mask, shape); }
};
#else
struct Solution {  // no solution in this kit (a student copy): its row is not registered
  explicit Solution(const ConvShape& s) : shape(s) {}
  const ConvShape shape;
  void forward() {}
};
#endif

std::unique_ptr<labkit::L2Flush> g_flush;
std::unique_ptr<cm::Gemm> g_gemm;
std::unique_ptr<Unrolled> g_unrolled;
std::unique_ptr<Solution> g_solution;

// Keeps one shape's buffers at a time (batch 10000 needs up to 10 GB): frees the others first.
Unrolled& unrolled_for(const ConvShape& s) {
  g_solution.reset();
  if (!g_unrolled || !same(g_unrolled->shape, s)) {
    g_unrolled.reset();
    g_unrolled = std::make_unique<Unrolled>(s);
  }
  return *g_unrolled;
}

// Flush, events around `body`, manual time; op_ms and GFLOP/s of the shape's MACs.
void time_region(benchmark::State& state, const ConvShape& shape, const std::function<void()>& body, double bytes) {
  labkit::L2Flush& flush = *g_flush;
  labkit::EventPair events;
  for (int i = 0; i < kWarmupCalls; ++i) {
    flush();
    body();
  }
  LABKIT_CUDA_CHECK(cudaDeviceSynchronize());
  double total_s = 0;
  for (auto _ : state) {
    flush();  // enqueued before the start event: not timed
    LABKIT_CUDA_CHECK(cudaEventRecord(events.start));
    body();
    LABKIT_CUDA_CHECK(cudaEventRecord(events.stop));
    LABKIT_CUDA_CHECK(cudaEventSynchronize(events.stop));
    const double s = events.elapsed_ms() * 1e-3;
    state.SetIterationTime(s);
    total_s += s;
  }
  if (state.iterations() == 0 || total_s <= 0) return;
  const double mean_s = total_s / double(state.iterations());
  state.counters["op_ms"] = mean_s * 1e3;
  state.counters["GFLOP/s"] = 2.0 * double(shape.macs()) / mean_s * 1e-9;
  if (bytes > 0) state.counters["GB/s"] = bytes / mean_s * 1e-9;
}

enum class Row { solution, unroll, sgemm, conv_layout };

void bench_row(benchmark::State& state, Row row, ConvShape s) {
  try {
    const int KK = s.C * s.K * s.K, HW = s.H_out() * s.W_out();
    if (row == Row::solution) {
      g_unrolled.reset();
      if (!g_solution || !same(g_solution->shape, s)) {
        g_solution.reset();
        g_solution = std::make_unique<Solution>(s);
      }
      Solution& p = *g_solution;
      time_region(state, s, [&] { p.forward(); }, 0);
      return;
    }
    Unrolled& u = unrolled_for(s);
    const cm::Gemm& gemm = *g_gemm;
    if (row == Row::unroll) {
      const double bytes = double(u.x.bytes()) + double(u.input.bytes());
      time_region(state, s, [&] { u.for_each_segment([&](int b0, int n, float* slot) { cm::unroll(slot, u.input.get(), s, b0, n); }); }, bytes);
    } else if (row == Row::sgemm) {
      time_region(state, s, [&] {
        u.for_each_segment([&](int b0, int n, float* slot) {
          gemm.product(u.output.get() + std::size_t(b0) * s.M * HW, u.mask.get(), slot, s.M, KK, n * HW);
        });
      }, 0);
    } else {
      time_region(state, s, [&] {
        u.for_each_segment([&](int b0, int n, float* slot) {
          gemm.conv_layout(u.output.get() + std::size_t(b0) * s.M * HW, u.mask.get(), slot, s.M, KK, HW, n);
        });
      }, 0);
    }
  } catch (const std::exception& e) {
    bench::fail(state, e);
  }
}

void register_benchmarks() {
  struct Layer {
    const char* name;
    ConvShape shape;  // at batch 1
  };
  const Layer layers[] = {{"conv1", {1, 4, 1, 86, 86, 7}}, {"conv2", {1, 16, 4, 40, 40, 7}}};
  std::vector<std::pair<const char*, Row>> rows;
#ifdef LABKIT_BENCH_SOLUTION
  rows.push_back({"05-unroll-matmul", Row::solution});
#endif
  rows.insert(rows.end(), {{"unroll", Row::unroll}, {"cublas-sgemm", Row::sgemm}, {"cublas-conv-layout", Row::conv_layout}});
  for (const Layer& layer : layers) {
    for (int batch : {1000, 10000}) {
      for (const auto& [name, row] : rows) {
        ConvShape s = layer.shape;
        s.B = batch;
        const std::string label = std::string(name) + "/" + layer.name + "/B:" + std::to_string(batch);
        benchmark::RegisterBenchmark(label.c_str(), bench_row, row, s)
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
    g_gemm = std::make_unique<cm::Gemm>();
    benchmark::AddCustomContext("l2_flush_bytes", std::to_string(g_flush->bytes()));
    benchmark::AddCustomContext("segment_bytes", std::to_string(cm::kSegmentBytes));
    register_benchmarks();
  };
  auto teardown = [] {
    g_solution.reset();
    g_unrolled.reset();
    g_gemm.reset();
    g_flush.reset();
  };
  return bench::run(argc, argv, setup, teardown);
}
