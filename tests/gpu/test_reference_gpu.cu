// The GPU fp64 reference and the baselines against the CPU references, on fresh random inputs
// (mixed signs, never zero). Every output buffer is poisoned with NaN bytes before the call, so an
// element left unwritten fails; inputs are copied back and compared byte for byte afterwards.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <span>
#include <string>
#include <vector>

#include "labkit/cuda_check.h"
#include "grader/core/device_buffer.h"
#include "grader/core/random.h"
#include "reference/baseline.h"
#include "reference/conv_reference.h"
#include "reference/map_workload.h"

namespace {

using labkit::ConvShape;

// fp32 accumulation of up to C*K*K = 196 products of unit-size values: at most 7e-7 of the
// output's scale measured on an H200; 1e-5 leaves room and still fails any indexing error.
constexpr double kBaselineTolerance = 1e-5;
// Same additions in the same order in double: the two agree bit for bit (0 measured on an H200).
constexpr double kFp64Tolerance = 1e-12;
// Float map against the double reference, per element: 2.6e-6 after 1000 iterations with glibc's
// float functions (tests/unit/test_map_cpu.cpp). CUDA's sinf/cosf/tanf/logf are allowed a few
// ulp more; the workload has no fixed points to amplify that (reference/map_workload.h).
constexpr double kMapTolerance = 2e-5;

using labkit::DeviceBuffer;

template <class T>
std::vector<T> download(const T* device, std::size_t n) {
  std::vector<T> host(n);
  LABKIT_CUDA_CHECK(cudaMemcpy(host.data(), device, n * sizeof(T), cudaMemcpyDeviceToHost));
  return host;
}

template <class T>
bool same_bytes(const std::vector<T>& a, const std::vector<T>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(T)) == 0;
}

// Magnitudes in [0.25, 1) with random signs: no zeros, and cancellation in every sum.
std::vector<float> random_signed(std::size_t n, std::uint64_t seed) {
  labkit::SplitMix64 rng(seed);
  std::vector<float> v(n);
  for (float& x : v) {
    const std::uint64_t bits = rng.next();
    const float magnitude = 0.25f + 0.75f * float(bits >> 40) * 0x1.0p-24f;
    x = (bits & 1) ? -magnitude : magnitude;
  }
  return v;
}

struct ConvCase {
  std::vector<float> input, mask;
};

ConvCase random_case(const ConvShape& s, std::uint64_t seed) {
  return {random_signed(s.input_size(), seed), random_signed(s.mask_size(), seed ^ 0x5eed)};
}

std::string shape_text(const ConvShape& s) {
  return "B=" + std::to_string(s.B) + " M=" + std::to_string(s.M) + " C=" + std::to_string(s.C) +
         " H=" + std::to_string(s.H) + " W=" + std::to_string(s.W) + " K=" + std::to_string(s.K);
}

std::string where(const ConvShape& s, std::size_t i) {
  const std::size_t w = i % s.W_out(), h = i / s.W_out() % s.H_out();
  const std::size_t m = i / (std::size_t(s.W_out()) * s.H_out()) % s.M;
  const std::size_t b = i / (std::size_t(s.W_out()) * s.H_out() * s.M);
  return "(b, m, h, w) = (" + std::to_string(b) + ", " + std::to_string(m) + ", " +
         std::to_string(h) + ", " + std::to_string(w) + ")";
}

// max |got - want| / max |want| over the tensor; non-finite elements (unwritten: still NaN)
// are counted apart and always fail.
template <class T>
void check_close(const ConvShape& s, const std::vector<T>& got, std::span<const double> want,
                 double tolerance) {
  REQUIRE(got.size() == want.size());
  double scale = 0;
  for (double x : want) scale = std::max(scale, std::abs(x));
  REQUIRE(scale > 0);
  double worst = 0;
  std::size_t worst_at = 0, nonfinite = 0, first_nonfinite = 0;
  for (std::size_t i = 0; i < got.size(); ++i) {
    if (!std::isfinite(double(got[i]))) {
      if (nonfinite++ == 0) first_nonfinite = i;
      continue;
    }
    const double err = std::abs(double(got[i]) - want[i]) / scale;
    if (err > worst) worst = err, worst_at = i;
  }
  INFO("shape " << shape_text(s) << ", scale " << scale);
  INFO("first non-finite at " << where(s, first_nonfinite) << " of " << nonfinite);
  INFO("largest error " << worst << " at " << where(s, worst_at) << ": got " << got[worst_at]
                        << ", expected " << want[worst_at]);
  CHECK(nonfinite == 0);
  CHECK(worst < tolerance);
}

std::vector<double> cpu_reference(const ConvShape& s, const ConvCase& c) {
  std::vector<double> out(s.output_size());
  labkit::reference::conv_forward_cpu(out, c.input, c.mask, s);
  return out;
}

std::vector<double> run_gpu_fp64(const ConvShape& s, const ConvCase& c, cudaStream_t stream = nullptr) {
  DeviceBuffer<float> input(s.input_size()), mask(s.mask_size());
  DeviceBuffer<double> output(s.output_size());
  input.upload(c.input);
  mask.upload(c.mask);
  output.poison();
  // The copies and the memset go to the legacy default stream, which a non-blocking stream does
  // not wait for: finish them before the kernel.
  LABKIT_CUDA_CHECK(cudaDeviceSynchronize());
  labkit::reference::conv_forward_gpu_fp64(output.get(), input.get(), mask.get(), s, stream);
  CHECK(same_bytes(download(input.get(), s.input_size()), c.input));
  CHECK(same_bytes(download(mask.get(), s.mask_size()), c.mask));
  return download(output.get(), s.output_size());
}

// The baseline through its three phases, as a runner calls a lab.
std::vector<float> run_baseline(const ConvShape& s, const ConvCase& c) {
  const labkit::ConvOps& ops = labkit::baseline::conv_ops;
  std::vector<float> host_output(s.output_size());
  float *output = nullptr, *input = nullptr, *mask = nullptr;
  ops.prolog(host_output.data(), c.input.data(), c.mask.data(), &output, &input, &mask, s);
  LABKIT_CUDA_CHECK(cudaMemset(output, 0xFF, s.output_size() * sizeof(float)));
  ops.forward(output, input, mask, s);
  LABKIT_CUDA_CHECK(cudaDeviceSynchronize());
  CHECK(same_bytes(download(input, s.input_size()), c.input));
  CHECK(same_bytes(download(mask, s.mask_size()), c.mask));
  ops.epilog(host_output.data(), output, input, mask, s);
  return host_output;
}

// The ECE408 layers at batch 4 and the odd shapes of design.md section 5: K 1/3/5/7, C 1/3/4,
// M not a multiple of 16, H != W, B = 1, partial 16 x 16 tiles.
const ConvShape kShapes[] = {
    {4, 4, 1, 86, 86, 7},   // conv1
    {4, 16, 4, 40, 40, 7},  // conv2
    {2, 5, 3, 13, 29, 1},   // K = 1, H != W
    {3, 16, 1, 33, 16, 3},  // tall, W_out = 14
    {1, 7, 3, 24, 37, 5},   // B = 1
    {2, 20, 4, 18, 35, 7},  // M = 20, W_out = 29: partial tiles both ways
    {3, 3, 2, 7, 7, 7},     // K = H = W: one output per plane
    {1, 1, 4, 5, 70, 3},    // one map, a wide strip
};

}  // namespace

TEST_CASE("gpu fp64 reference equals the CPU reference") {
  cudaStream_t stream = nullptr;
  LABKIT_CUDA_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  std::uint64_t seed = 1;
  for (const ConvShape& s : kShapes) {
    CAPTURE(shape_text(s));
    const ConvCase c = random_case(s, seed++);
    const std::vector<double> want = cpu_reference(s, c);
    check_close(s, run_gpu_fp64(s, c), want, kFp64Tolerance);
    check_close(s, run_gpu_fp64(s, c, stream), want, kFp64Tolerance);  // synchronous on any stream
  }
  LABKIT_CUDA_CHECK(cudaStreamDestroy(stream));
}

TEST_CASE("baseline conv matches the CPU reference") {
  std::uint64_t seed = 100;
  for (const ConvShape& s : kShapes) {
    CAPTURE(shape_text(s));
    const ConvCase c = random_case(s, seed++);
    check_close(s, run_baseline(s, c), cpu_reference(s, c), kBaselineTolerance);
  }
}

TEST_CASE("batch 1000 conv2: baseline and gpu fp64 against the CPU reference") {
  const ConvShape s{1000, 16, 4, 40, 40, 7};
  const ConvCase c = random_case(s, 1000);
  const std::vector<double> want = cpu_reference(s, c);  // 3.6 G MACs: about a second
  check_close(s, run_gpu_fp64(s, c), want, kFp64Tolerance);
  check_close(s, run_baseline(s, c), want, kBaselineTolerance);
}

TEST_CASE("batch 10000: large grids, every element checked") {
  // Too big for the CPU reference in a test: the baseline is checked against the GPU fp64
  // reference everywhere, and the fp64 reference against the CPU one on the last images, where
  // 32-bit index arithmetic would break first.
  for (const ConvShape& s : {ConvShape{10000, 4, 1, 86, 86, 7}, ConvShape{10000, 16, 4, 40, 40, 7}}) {
    CAPTURE(shape_text(s));
    const ConvCase c = random_case(s, 10000 + s.M);
    const std::vector<double> fp64 = run_gpu_fp64(s, c);
    check_close(s, run_baseline(s, c), fp64, kBaselineTolerance);

    const ConvShape tail{8, s.M, s.C, s.H, s.W, s.K};
    const std::size_t image = std::size_t(s.C) * s.H * s.W;
    ConvCase last{std::vector<float>(c.input.end() - tail.B * image, c.input.end()), c.mask};
    const std::size_t offset = fp64.size() - tail.output_size();
    check_close(tail, std::vector<double>(fp64.begin() + offset, fp64.end()),
                cpu_reference(tail, last), kFp64Tolerance);
  }
}

TEST_CASE("baseline conv rejects shapes its grid cannot hold") {
  CHECK_THROWS_AS(labkit::baseline::conv_forward_gpu(nullptr, nullptr, nullptr, {70000, 4, 1, 86, 86, 7}),
                  std::invalid_argument);
  CHECK_THROWS_AS(labkit::baseline::conv_forward_gpu(nullptr, nullptr, nullptr, {1, 4, 1, 6, 86, 7}),
                  std::invalid_argument);
}

namespace {

void check_map(int dimx, int dimy, int niterations, std::uint64_t seed) {
  CAPTURE(dimx);
  CAPTURE(dimy);
  CAPTURE(niterations);
  const std::size_t n = std::size_t(dimx) * dimy;
  std::vector<float> input(n);
  labkit::fill_uniform(input, labkit::kMapInputMin, labkit::kMapInputMax, seed);
  std::vector<double> want(n);
  labkit::reference::map_forward_cpu(want, input, dimx, dimy, niterations);

  DeviceBuffer<float> data(n);
  data.upload(input);
  labkit::baseline::map_ops.forward(data.get(), dimx, dimy, niterations);
  LABKIT_CUDA_CHECK(cudaDeviceSynchronize());
  const std::vector<float> got = download(data.get(), n);

  if (niterations == 0) {
    CHECK(same_bytes(got, input));
    return;
  }
  double worst = 0;
  std::size_t worst_at = 0, nonfinite = 0;
  for (std::size_t i = 0; i < n; ++i) {
    if (!std::isfinite(got[i])) {
      ++nonfinite;
      continue;
    }
    const double err = std::abs(double(got[i]) - want[i]) / std::abs(want[i]);  // want >= 1
    if (err > worst) worst = err, worst_at = i;
  }
  INFO("largest error " << worst << " at row " << worst_at / dimx << ", column " << worst_at % dimx
                        << ": got " << got[worst_at] << ", expected " << want[worst_at]
                        << ", start " << input[worst_at]);
  CHECK(nonfinite == 0);
  CHECK(worst < kMapTolerance);
}

}  // namespace

TEST_CASE("baseline map matches the CPU reference") {
  check_map(1030, 7, 50, 7);      // dimx a multiple of neither 4 nor 256
  check_map(256, 64, 200, 8);     // whole blocks, long run
  check_map(5, 70000, 3, 9);      // more rows than grid.y holds
  check_map(1030, 7, 0, 10);      // no iterations: untouched
}
