// The network's CPU layers (reference/network.h): pooling windows (the clipped last window of
// maxpool 4 on 34 rows), ReLU, FC against hand sums, argmax ties, and the model files: round trip,
// and a wrong shape, dtype or missing file each named in the error.
#include <doctest/doctest.h>

#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <numeric>
#include <random>
#include <string>
#include <vector>

#include "grader/io/npy.h"
#include "reference/network.h"

namespace net = labkit::reference::network;
namespace fs = std::filesystem;

namespace {

fs::path temp_dir(const std::string& name) {
  auto dir = fs::temp_directory_path() / ("labkit-test-network-" + name + "-" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir;
}

net::Model random_model(unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> u(-0.5f, 0.5f);
  net::Model m;
  auto fill = [&](std::vector<float>& v, std::size_t n) {
    v.resize(n);
    for (auto& x : v) x = u(rng);
  };
  fill(m.conv1, 4 * 49);
  fill(m.conv2, 16 * 4 * 49);
  fill(m.fc1_w, 32 * 1296);
  fill(m.fc1_b, 32);
  fill(m.fc2_w, 10 * 32);
  fill(m.fc2_b, 10);
  return m;
}

std::string error_of(const fs::path& dir) {
  try {
    net::load_model(dir);
  } catch (const std::exception& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST_CASE("relu_maxpool: windows of 2, negatives pool to zero") {
  // One 4x4 plane: values chosen so each 2x2 window has a distinct maximum, one all negative.
  std::vector<float> in = {1, 2, -1, -2,
                           3, 4, -3, -4,
                           5, -6, 7, 8,
                           -9, 0, 9, 10};
  std::vector<float> out(4);
  net::relu_maxpool(in, 1, 1, 4, 4, 2, out);
  CHECK(out == std::vector<float>{4, 0, 5, 10});
}

TEST_CASE("relu_maxpool: ceil pooling clips the last window (34 -> 9 with pool 4)") {
  const int H = 34, W = 34;
  std::vector<float> in(H * W, -1.0f);
  in[33 * W + 33] = 7.0f;  // only in the clipped last window (rows 32..33, cols 32..33)
  in[31 * W + 31] = 5.0f;  // last full window (rows 28..31)
  in[0] = 3.0f;
  std::vector<float> out(9 * 9);
  net::relu_maxpool(in, 1, 1, H, W, 4, out);
  CHECK(out[8 * 9 + 8] == 7.0f);
  CHECK(out[7 * 9 + 7] == 5.0f);
  CHECK(out[0] == 3.0f);
  CHECK(std::accumulate(out.begin(), out.end(), 0.0f) == 15.0f);
}

TEST_CASE("relu_maxpool: batch and channels are independent planes") {
  const int B = 3, C = 2, H = 5, W = 3;
  std::vector<float> in(B * C * H * W);
  for (std::size_t i = 0; i < in.size(); ++i) in[i] = static_cast<float>(i);
  std::vector<float> out(B * C * 3 * 2);
  net::relu_maxpool(in, B, C, H, W, 2, out);
  for (int plane = 0; plane < B * C; ++plane) {
    const float base = static_cast<float>(plane * H * W);
    // Row windows {0,1},{2,3},{4}; column windows {0,1},{2}: the max is the bottom-right element.
    CHECK(out[plane * 6 + 0] == base + 1 * W + 1);
    CHECK(out[plane * 6 + 1] == base + 1 * W + 2);
    CHECK(out[plane * 6 + 4] == base + 4 * W + 1);
    CHECK(out[plane * 6 + 5] == base + 4 * W + 2);
  }
  std::vector<float> wrong(5);
  CHECK_THROWS_AS(net::relu_maxpool(in, B, C, H, W, 2, wrong), std::invalid_argument);
}

TEST_CASE("fully_connected: bias, ReLU and hand sums") {
  std::vector<float> x = {1, 2, 3, -1, 0, 1};                      // B = 2, N = 3
  std::vector<float> w = {1, 0, 0, 0, 1, 0, 1, 1, 1, -1, -1, -1};  // O = 4
  std::vector<float> b = {0.5f, 0, -10, 0};
  std::vector<float> out(8);
  net::fully_connected(x, 2, 3, w, b, 4, false, out);
  CHECK(out == std::vector<float>{1.5f, 2, -4, -6, -0.5f, 0, -10, 0});
  net::fully_connected(x, 2, 3, w, b, 4, true, out);
  CHECK(out == std::vector<float>{1.5f, 2, 0, 0, 0, 0, 0, 0});
}

TEST_CASE("argmax: the lowest index wins a tie") {
  std::vector<float> logits = {0, 3, 3, 1, 2, 2, 2, 2, -1, -5};
  CHECK(net::argmax(logits, 2, 5) == std::vector<std::uint8_t>{1, 0});
}

TEST_CASE("classify: one image through pool, FC1, FC2 matches a hand computation") {
  net::Model m = random_model(7);
  std::mt19937 rng(11);
  std::uniform_real_distribution<float> u(-3.0f, 3.0f);
  const int B = 2;
  std::vector<float> conv2(B * 16 * 34 * 34);
  for (auto& v : conv2) v = u(rng);
  const auto labels = net::classify(conv2, B, m);
  REQUIRE(labels.size() == 2);
  for (int b = 0; b < B; ++b) {
    std::vector<float> pooled(net::kFeatures, 0.0f);
    for (int c = 0; c < 16; ++c)
      for (int r = 0; r < 34; ++r)
        for (int q = 0; q < 34; ++q) {
          float& o = pooled[(c * 9 + r / 4) * 9 + q / 4];
          o = std::max(o, conv2[((b * 16 + c) * 34 + r) * 34 + q]);
        }
    std::vector<float> hidden(32);
    for (int o = 0; o < 32; ++o) {
      float s = 0;
      for (int n = 0; n < net::kFeatures; ++n) s += pooled[n] * m.fc1_w[o * net::kFeatures + n];
      hidden[o] = std::max(0.0f, s + m.fc1_b[o]);
    }
    int best = 0;
    float best_logit = -1e30f;
    for (int o = 0; o < 10; ++o) {
      float s = 0;
      for (int n = 0; n < 32; ++n) s += hidden[n] * m.fc2_w[o * 32 + n];
      s += m.fc2_b[o];
      if (s > best_logit) best_logit = s, best = o;
    }
    CHECK(labels[b] == best);
  }
}

TEST_CASE("model files: round trip, and every problem names the file") {
  const auto dir = temp_dir("model");
  const net::Model m = random_model(3);
  net::save_model(m, dir);
  const net::Model back = net::load_model(dir);
  CHECK(back.conv1 == m.conv1);
  CHECK(back.conv2 == m.conv2);
  CHECK(back.fc1_w == m.fc1_w);
  CHECK(back.fc2_b == m.fc2_b);

  SUBCASE("wrong shape") {
    labkit::npy::write<float>(dir / "fc1_weight.npy", {32, 1000}, std::vector<float>(32000, 0.0f));
    const std::string e = error_of(dir);
    CHECK(e.find("fc1_weight.npy") != std::string::npos);
    CHECK(e.find("(32, 1000)") != std::string::npos);
    CHECK(e.find("(32, 1296)") != std::string::npos);
  }
  SUBCASE("wrong dtype") {
    labkit::npy::write<double>(dir / "conv1.npy", {4, 1, 7, 7}, std::vector<double>(196, 0.0));
    const std::string e = error_of(dir);
    CHECK(e.find("conv1.npy") != std::string::npos);
    CHECK(e.find("<f8") != std::string::npos);
  }
  SUBCASE("missing file") {
    fs::remove(dir / "fc2_bias.npy");
    CHECK(error_of(dir).find("fc2_bias.npy") != std::string::npos);
  }
  SUBCASE("missing folder") {
    CHECK(error_of(dir / "nope").find("model folder not found") != std::string::npos);
  }
  fs::remove_all(dir);
}
