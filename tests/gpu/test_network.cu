// The milestone network on the GPU: with the baseline's conv it classifies every one of the 10000
// test images exactly as with the CPU reference conv (double accumulation), at the accuracy
// model.json records; its op times are real (positive, and the repeats agree with the first call
// within reason); and a conv that writes NaN is counted, not hidden.
#include <doctest/doctest.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "labkit/cuda_check.h"
#include "grader/network/network_run.h"
#include "reference/baseline.h"

namespace fs = std::filesystem;
namespace network = labkit::network;

namespace {

network::RunOptions options(int batch, int repeats) {
  const char* data = std::getenv("LABKIT_DATASET_DIR");
  const char* source = std::getenv("LABKIT_SOURCE_DIR");
  REQUIRE_MESSAGE(data != nullptr, "LABKIT_DATASET_DIR is not set (run through meson test)");
  REQUIRE_MESSAGE(source != nullptr, "LABKIT_SOURCE_DIR is not set (run through meson test)");
  network::RunOptions o;
  o.batch = batch;
  o.data_dir = data;
  o.model_dir = fs::path(source) / "datasets" / "model";
  o.op_repeats = repeats;
  return o;
}

// A conv whose forward pass writes NaN everywhere: the run must count it.
__global__ void fill_nan(float* out, std::size_t n) {
  const std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x;
  if (i < n) out[i] = NAN;
}
void nan_forward(float* out, const float*, const float*, const labkit::ConvShape& s) {
  fill_nan<<<static_cast<unsigned>((s.output_size() + 255) / 256), 256>>>(out, s.output_size());
  LABKIT_CUDA_CHECK_LAUNCH();
}
constexpr labkit::ConvOps kNanOps{"nan", &labkit::baseline::conv_forward_gpu_prolog, &nan_forward,
                                  &labkit::baseline::conv_forward_gpu_epilog};

}  // namespace

TEST_CASE("baseline and CPU reference networks agree on every test image") {
  const auto opt = options(10000, 0);
  const network::RunResult cpu = network::run_network({"cpu-reference", nullptr}, opt);
  const network::RunResult gpu = network::run_network({"baseline", &labkit::baseline::conv_ops}, opt);
  REQUIRE(cpu.predictions.size() == 10000);
  int differ = 0, first = -1;
  for (std::size_t i = 0; i < cpu.predictions.size(); ++i) {
    if (cpu.predictions[i] != gpu.predictions[i] && differ++ == 0) first = static_cast<int>(i);
  }
  INFO("first differing image: ", first);
  CHECK(differ == 0);
  CHECK(cpu.accuracy == gpu.accuracy);
  MESSAGE("accuracy ", gpu.accuracy, " on 10000 images; total ", gpu.total_s, " s (baseline), ", cpu.total_s, " s (CPU)");

  std::ifstream in(fs::path(opt.model_dir) / "model.json");
  REQUIRE(in);
  const auto model = nlohmann::json::parse(in);
  CHECK(gpu.data_checksum == model.at("test_checksum").get<std::string>());
  CHECK(gpu.accuracy == doctest::Approx(model.at("test_accuracy_reference").get<double>()).epsilon(1e-12));
}

TEST_CASE("op times: the repeats are real and near the first call") {
  const network::RunResult r = network::run_network({"baseline", &labkit::baseline::conv_ops}, options(1000, 5));
  for (const auto& layer : r.conv) {
    REQUIRE(layer.samples_ms.size() == 5);
    CHECK(layer.op_ms > 0);
    CHECK(layer.layer_ms > layer.first_ms);
    // The same kernel on the same data, L2 flushed: the median and the first call within 2x.
    CHECK(layer.first_ms < 2 * layer.op_ms);
    CHECK(layer.op_ms < 2 * layer.first_ms);
    CHECK(layer.nonfinite == 0);
  }
  CHECK(r.total_s > r.load_s);
}

TEST_CASE("a conv that writes NaN is counted and costs the accuracy") {
  const network::RunResult r = network::run_network({"nan", &kNanOps}, options(100, 0));
  CHECK(r.conv[0].nonfinite == 100u * 4 * 80 * 80);
  CHECK(r.conv[1].nonfinite == 100u * 16 * 34 * 34);
  CHECK(r.accuracy < 0.5);
}
