// The network's CPU layers (reference/network.h): pooling windows (the clipped last window of
// maxpool 4 on 34 rows), ReLU, FC against hand sums, argmax ties, and the model files: round trip,
// and a wrong shape, dtype or missing file each named in the error. The layers' loops are arranged
// for speed; the plain loops below (network.h's formulas, one output at a time) must give the same
// bits on the network's shapes and awkward ones, NaN, infinities and signed zeros included.
#include <doctest/doctest.h>

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
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

// network.h's relu_maxpool, one window at a time: max(0, the window's values), NaNs skipped.
std::vector<float> plain_relu_maxpool(const std::vector<float>& in, int B, int C, int H, int W, int pool) {
  const int Ho = (H + pool - 1) / pool, Wo = (W + pool - 1) / pool;
  std::vector<float> out(std::size_t(B) * C * Ho * Wo);
  for (int plane = 0; plane < B * C; ++plane)
    for (int i = 0; i < Ho; ++i)
      for (int j = 0; j < Wo; ++j) {
        float m = 0.0f;
        for (int r = i * pool; r < std::min(H, (i + 1) * pool); ++r)
          for (int c = j * pool; c < std::min(W, (j + 1) * pool); ++c)
            m = std::max(m, in[(std::size_t(plane) * H + r) * W + c]);
        out[(std::size_t(plane) * Ho + i) * Wo + j] = m;
      }
  return out;
}

// network.h's fully_connected, one output at a time: n ascending, in float, then the bias.
std::vector<float> plain_fully_connected(const std::vector<float>& x, int B, int N, const std::vector<float>& w,
                                         const std::vector<float>& bias, int O, bool relu) {
  std::vector<float> out(std::size_t(B) * O);
  for (int b = 0; b < B; ++b)
    for (int o = 0; o < O; ++o) {
      float sum = 0.0f;
      for (int n = 0; n < N; ++n) sum += x[std::size_t(b) * N + n] * w[std::size_t(o) * N + n];
      sum += bias[o];
      out[std::size_t(b) * O + o] = relu ? std::max(sum, 0.0f) : sum;
    }
  return out;
}

bool same_bits(const std::vector<float>& a, const std::vector<float>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0;
}

// Values around zero with a few NaNs, infinities and signed zeros sprinkled in.
std::vector<float> awkward_values(std::size_t n, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  std::vector<float> v(n);
  for (auto& x : v) x = u(rng);
  const float specials[] = {std::numeric_limits<float>::quiet_NaN(), std::numeric_limits<float>::infinity(),
                            -std::numeric_limits<float>::infinity(), -0.0f, 0.0f};
  for (std::size_t i = 0; i < n / 50 + 1; ++i) v[rng() % n] = specials[rng() % std::size(specials)];
  return v;
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

TEST_CASE("relu_maxpool and fully_connected: the same bits as the plain loops") {
  struct Pool {
    int B, C, H, W, pool;
  };
  for (const Pool& p : {Pool{3, 4, 80, 80, 2}, Pool{2, 16, 34, 34, 4}, Pool{2, 3, 7, 5, 3}, Pool{1, 1, 1, 9, 4},
                        Pool{2, 2, 6, 6, 1}}) {
    CAPTURE(p.H);
    CAPTURE(p.W);
    CAPTURE(p.pool);
    const std::vector<float> in = awkward_values(std::size_t(p.B) * p.C * p.H * p.W, unsigned(p.H * 100 + p.pool));
    const int Ho = (p.H + p.pool - 1) / p.pool, Wo = (p.W + p.pool - 1) / p.pool;
    std::vector<float> out(std::size_t(p.B) * p.C * Ho * Wo, -1.0f);
    net::relu_maxpool(in, p.B, p.C, p.H, p.W, p.pool, out);
    CHECK(same_bits(out, plain_relu_maxpool(in, p.B, p.C, p.H, p.W, p.pool)));
  }
  struct Fc {
    int B, N, O;
  };
  for (const Fc& f : {Fc{5, 1296, 32}, Fc{7, 32, 10}, Fc{3, 9, 5}}) {
    CAPTURE(f.N);
    CAPTURE(f.O);
    // Finite values (signed zeros kept): the sums' rounding is what is compared; a NaN's payload
    // could differ with the order of an add's operands without any value being different.
    const auto finite = [](std::vector<float> v) {
      for (auto& e : v) e = std::isfinite(e) ? e : 0.25f;
      return v;
    };
    const std::vector<float> x = finite(awkward_values(std::size_t(f.B) * f.N, unsigned(f.N)));
    const std::vector<float> w = finite(awkward_values(std::size_t(f.O) * f.N, unsigned(f.N + 1)));
    const std::vector<float> b = finite(awkward_values(std::size_t(f.O), unsigned(f.N + 2)));
    for (bool relu : {false, true}) {
      std::vector<float> out(std::size_t(f.B) * f.O, -1.0f);
      net::fully_connected(x, f.B, f.N, w, b, f.O, relu, out);
      CHECK(same_bits(out, plain_fully_connected(x, f.B, f.N, w, b, f.O, relu)));
    }
  }
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
