// The committed model (datasets/model/) against the test split generated at build time: the
// split loads, its checksum is the one model.json was measured on (so committed weights and the
// generator never silently diverge), the weights load, and the reference path reproduces the
// recorded accuracy exactly.
//
// Environment (set by tests/dataset/meson.build): LABKIT_SYNTH_TEST_DIR (the t10k-* pair),
// LABKIT_MODEL_DIR (datasets/model).
#include <doctest/doctest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "datasets/synth.h"
#include "grader/network/dataset.h"
#include "reference/conv_reference.h"
#include "reference/network.h"

namespace fs = std::filesystem;
namespace net = labkit::reference::network;

namespace {

fs::path env_path(const char* name) {
  const char* v = std::getenv(name);
  REQUIRE_MESSAGE(v != nullptr, name << " is not set (run through meson test)");
  return v;
}

nlohmann::json model_json(const fs::path& dir) {
  std::ifstream in(dir / "model.json");
  REQUIRE_MESSAGE(in.good(), (dir / "model.json").string() << " cannot be read");
  return nlohmann::json::parse(in);
}

}  // namespace

TEST_CASE("the build-time test split is the one the committed model was measured on") {
  const fs::path data = env_path("LABKIT_SYNTH_TEST_DIR"), model_dir = env_path("LABKIT_MODEL_DIR");
  const labkit::ImageSet set = labkit::load_image_set(data, labkit::Split::test);
  const nlohmann::json j = model_json(model_dir);
  CHECK(set.n == j.at("test_images").get<int>());
  CHECK(j.at("generator").get<std::string>() == labkit::datasets::kGeneratorVersion);
  CHECK_MESSAGE(labkit::checksum_hex(set) == j.at("test_checksum").get<std::string>(),
                "the generator changed since datasets/model was trained: bump kGeneratorVersion and retrain");
}

TEST_CASE("the committed weights give the recorded reference-path accuracy") {
  const fs::path data = env_path("LABKIT_SYNTH_TEST_DIR"), model_dir = env_path("LABKIT_MODEL_DIR");
  const labkit::ImageSet set = labkit::load_image_set(data, labkit::Split::test);
  const net::Model model = net::load_model(model_dir);
  const nlohmann::json j = model_json(model_dir);
  // The reference path: conv_forward_cpu (double) -> float -> the network's CPU layers.
  constexpr int kChunk = 500;
  const std::size_t pixels = std::size_t(net::kImageSide) * net::kImageSide;
  int right = 0;
  for (int first = 0; first < set.n; first += kChunk) {
    const int B = std::min(kChunk, set.n - first);
    const auto s1 = net::conv1_shape(B), s2 = net::conv2_shape(B);
    const std::vector<float> input(set.images.begin() + std::ptrdiff_t(first * pixels),
                                   set.images.begin() + std::ptrdiff_t((first + B) * pixels));
    std::vector<double> y1(s1.output_size()), y2(s2.output_size());
    labkit::reference::conv_forward_cpu(y1, input, model.conv1, s1);
    std::vector<float> pooled(s2.input_size());
    net::relu_maxpool(std::vector<float>(y1.begin(), y1.end()), B, s1.M, s1.H_out(), s1.W_out(), net::kPool1,
                      pooled);
    labkit::reference::conv_forward_cpu(y2, pooled, model.conv2, s2);
    const auto predicted = net::classify(std::vector<float>(y2.begin(), y2.end()), B, model);
    for (int b = 0; b < B; ++b) right += predicted[std::size_t(b)] == set.labels[std::size_t(first + b)];
  }
  const double accuracy = double(right) / double(set.n);
  CHECK(accuracy == doctest::Approx(j.at("test_accuracy_reference").get<double>()).epsilon(1e-9));
  // The kit's target band (datasets/model/README.md): a real classifier that still shows small
  // conv errors.
  CHECK(accuracy >= 0.85);
  CHECK(accuracy <= 0.95);
}
