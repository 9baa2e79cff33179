// network_cpu.cpp — the network's layers after each conv, on the CPU (see network.h).
//
// They are a small part of the network's work (FC1 is 41 k multiply-adds an image against conv2's
// 3.6 M), but a report at batch 10000 runs them on 10000 images, so every layer is threaded over
// images and its inner loop runs along contiguous memory.
#include "reference/network.h"

#include <algorithm>
#include <limits>
#include <stdexcept>
#include <string>
#include <vector>

#include "grader/io/npy.h"
#include "reference/parallel.h"

namespace labkit::reference::network {
namespace {

void require_size(const char* layer, const char* what, std::size_t got, std::size_t want) {
  if (got != want) {
    throw std::invalid_argument(std::string(layer) + ": " + what + " has " + std::to_string(got) +
                                " elements, expected " + std::to_string(want));
  }
}

// Model's tensors in the order of kModelFiles (const or not, as the model).
template <class M>
auto members(M& m) {
  return std::array{&m.conv1, &m.conv2, &m.fc1_w, &m.fc1_b, &m.fc2_w, &m.fc2_b};
}

std::size_t element_count(const ModelFile& f) {
  std::size_t n = 1;
  for (int d = 0; d < f.ndim; ++d) n *= static_cast<std::size_t>(f.shape[d]);
  return n;
}

}  // namespace

Model load_model(const std::filesystem::path& dir) {
  if (!std::filesystem::is_directory(dir)) {
    throw std::runtime_error(dir.string() + ": model folder not found (it holds " +
                             std::string(kModelFiles[0].name) + " ... " +
                             std::string(kModelFiles[5].name) + ")");
  }
  Model model;
  for (std::size_t i = 0; i < kModelFiles.size(); ++i) {
    const ModelFile& f = kModelFiles[i];
    const auto path = dir / f.name;
    try {
      npy::Array a = npy::read(path);
      a.require_dtype(npy::DType::f4, f.name);
      a.require_shape(std::span(f.shape.data(), static_cast<std::size_t>(f.ndim)), f.name);
      const auto values = a.as<float>();
      members(model)[i]->assign(values.begin(), values.end());
    } catch (const npy::Error& e) {
      throw std::runtime_error(std::string("model weights: ") + e.what());
    }
  }
  return model;
}

void save_model(const Model& model, const std::filesystem::path& dir) {
  std::filesystem::create_directories(dir);
  for (std::size_t i = 0; i < kModelFiles.size(); ++i) {
    const ModelFile& f = kModelFiles[i];
    const std::vector<float>& values = *members(model)[i];
    require_size("save_model", std::string(f.name).c_str(), values.size(), element_count(f));
    npy::write<float>(dir / f.name, {f.shape.begin(), f.shape.begin() + f.ndim}, values);
  }
}

void relu_maxpool(std::span<const float> in, int B, int C, int H, int W, int pool, std::span<float> out) {
  if (B < 1 || C < 1 || H < 1 || W < 1 || pool < 1) {
    throw std::invalid_argument("relu_maxpool: sizes must be positive");
  }
  const int Ho = (H + pool - 1) / pool, Wo = (W + pool - 1) / pool;
  require_size("relu_maxpool", "input", in.size(), std::size_t(B) * C * H * W);
  require_size("relu_maxpool", "output", out.size(), std::size_t(B) * C * Ho * Wo);
  // Per output row: the max of each input column down the window's rows first (contiguous, so it
  // runs in SIMD registers), then across each window's columns. The earlier loop divided every
  // input column by `pool` to find its window, which cost more than the max itself (bench/
  // bench_network_cpu.cpp; docs/instructor-guide.md has the numbers). The order of the
  // max operations changed, not the result: every window's max starts from +0 and skips NaNs
  // (std::max keeps its first argument when the second is NaN), so it is the max of the same set of
  // values whatever the order, bit for bit (test_network_cpu checks it against the plain loop).
  parallel_for(std::size_t(B) * C, [&](std::size_t plane) {
    thread_local std::vector<float> column_max;
    column_max.resize(static_cast<std::size_t>(W));
    const float* src = in.data() + plane * H * W;
    float* dst = out.data() + plane * Ho * Wo;
    for (int i = 0; i < Ho; ++i) {
      // Starting from 0 is the ReLU: a window of negatives pools to 0.
      std::fill(column_max.begin(), column_max.end(), 0.0f);
      for (int r = i * pool; r < std::min(H, (i + 1) * pool); ++r) {
        const float* row = src + r * W;
        for (int c = 0; c < W; ++c) column_max[c] = std::max(column_max[c], row[c]);
      }
      for (int j = 0; j < Wo; ++j) {
        float m = 0.0f;
        for (int c = j * pool; c < std::min(W, (j + 1) * pool); ++c) m = std::max(m, column_max[c]);
        dst[i * Wo + j] = m;
      }
    }
  });
}

void fully_connected(std::span<const float> in, int B, int N, std::span<const float> weight,
                     std::span<const float> bias, int O, bool relu, std::span<float> out) {
  require_size("fully_connected", "input", in.size(), std::size_t(B) * N);
  require_size("fully_connected", "weight", weight.size(), std::size_t(O) * N);
  require_size("fully_connected", "bias", bias.size(), std::size_t(O));
  require_size("fully_connected", "output", out.size(), std::size_t(B) * O);
  // The weights transposed once ([n][o]), so that the inner loop runs over the O outputs: O
  // independent sums in SIMD registers instead of one sum whose every add waits for the previous
  // one. Each sum still adds in[b][n] * weight[o][n] for n ascending, in float, from 0, then the
  // bias: the same operations in the same order as one output at a time, so the same bits.
  std::vector<float> weight_t(std::size_t(N) * O);
  for (int o = 0; o < O; ++o)
    for (int n = 0; n < N; ++n) weight_t[std::size_t(n) * O + o] = weight[std::size_t(o) * N + n];
  parallel_for(std::size_t(B), [&](std::size_t b) {
    const float* x = in.data() + b * N;
    float* y = out.data() + b * O;
    std::fill(y, y + O, 0.0f);
    for (int n = 0; n < N; ++n) {
      const float xn = x[n];
      const float* w = weight_t.data() + std::size_t(n) * O;
      for (int o = 0; o < O; ++o) y[o] += xn * w[o];
    }
    for (int o = 0; o < O; ++o) {
      const float sum = y[o] + bias[o];
      y[o] = relu ? std::max(sum, 0.0f) : sum;
    }
  });
}

std::vector<std::uint8_t> argmax(std::span<const float> logits, int B, int classes) {
  require_size("argmax", "logits", logits.size(), std::size_t(B) * classes);
  std::vector<std::uint8_t> labels(B);
  for (int b = 0; b < B; ++b) {
    const float* row = logits.data() + std::size_t(b) * classes;
    labels[b] = static_cast<std::uint8_t>(std::max_element(row, row + classes) - row);
  }
  return labels;
}

std::vector<std::uint8_t> classify(std::span<const float> conv2_out, int B, const Model& model) {
  const ConvShape s = conv2_shape(B);
  std::vector<float> pooled(std::size_t(B) * kFeatures);
  relu_maxpool(conv2_out, B, s.M, s.H_out(), s.W_out(), kPool2, pooled);
  std::vector<float> hidden(std::size_t(B) * kHidden);
  fully_connected(pooled, B, kFeatures, model.fc1_w, model.fc1_b, kHidden, true, hidden);
  std::vector<float> logits(std::size_t(B) * kClasses);
  fully_connected(hidden, B, kHidden, model.fc2_w, model.fc2_b, kClasses, false, logits);
  return argmax(logits, B);
}

}  // namespace labkit::reference::network
