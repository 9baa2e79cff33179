// net.cpp — float forward and backward of the network for one image (net.h).
//
// Speed: the forward convs are ~5 M multiply-adds per image and dominate. Each output row is
// accumulated over (c, p, q) with a shifted input row, so the innermost loop runs along the
// row over contiguous floats and vectorizes without reassociating any sum. conv2's rows are 34
// wide; they are computed 36 wide (the two extra columns read into the next row or the padding
// at the end of pool1 and are discarded) so the loop has no scalar tail.
//
// The backward pass is cheap because of max pooling: only the positions that won a pooling
// window (and passed the ReLU) carry a gradient, 1296 of conv2's 18496 outputs and at most 6400
// of conv1's 25600, so the weight gradients and the gradient into pool1 are scattered from those
// positions directly, with no im2col and no transposed convolution.
#include "tools/train/net.h"

#include <algorithm>
#include <cmath>

#include "grader/core/random.h"

namespace labkit::train {
namespace {

constexpr int kSide = net::kImageSide;                    // 86
constexpr int kK = 7;
constexpr int kM1 = 4, kH1 = kSide - kK + 1;              // conv1: 4 x 80 x 80
constexpr int kP1 = kH1 / net::kPool1;                    // pool1: 4 x 40 x 40
constexpr int kM2 = 16, kH2 = kP1 - kK + 1;               // conv2: 16 x 34 x 34
constexpr int kRow2 = 36;                                 // conv2 row computed 36 wide
constexpr int kP2 = net::kPooled2Side;                    // pool2: 16 x 9 x 9
constexpr int kPad1 = 8;                                  // floats after pool1 for the wide rows

enum Tensor { kConv1, kConv2, kFc1W, kFc1B, kFc2W, kFc2B };

// Writes max(0, max of each pool x pool window) (windows clipped at the edge) and where it came
// from (index into the plane), or -1 when the ReLU zeroed it (no gradient flows).
void relu_maxpool(const float* in, int planes, int side, int pool, float* out, std::int32_t* arg) {
  const int out_side = (side + pool - 1) / pool;
  for (int c = 0; c < planes; ++c) {
    const float* plane = in + std::size_t(c) * side * side;
    for (int i = 0; i < out_side; ++i) {
      for (int j = 0; j < out_side; ++j) {
        float best = 0.f;
        std::int32_t where = -1;
        for (int y = i * pool; y < std::min(side, (i + 1) * pool); ++y) {
          for (int x = j * pool; x < std::min(side, (j + 1) * pool); ++x) {
            if (plane[y * side + x] > best) {
              best = plane[y * side + x];
              where = y * side + x;
            }
          }
        }
        const std::size_t o = (std::size_t(c) * out_side + i) * out_side + j;
        out[o] = best;
        arg[o] = where;
      }
    }
  }
}

// out[m][i][0..width) = sum over c, p, q of w[m][c][p][q] * in[c][i + p][q ...], in that order.
void conv_rows(const float* in, int C, int side, const float* w, int M, int out_side, int width,
               float* out) {
  alignas(64) float acc[96];
  for (int m = 0; m < M; ++m) {
    for (int i = 0; i < out_side; ++i) {
      std::fill(acc, acc + width, 0.f);
      for (int c = 0; c < C; ++c) {
        for (int p = 0; p < kK; ++p) {
          const float* row = in + (std::size_t(c) * side + i + p) * side;
          const float* wr = w + ((std::size_t(m) * C + c) * kK + p) * kK;
          for (int q = 0; q < kK; ++q) {
            const float wv = wr[q];
            const float* r = row + q;
            for (int j = 0; j < width; ++j) acc[j] += wv * r[j];
          }
        }
      }
      std::copy(acc, acc + out_side, out + (std::size_t(m) * out_side + i) * out_side);
    }
  }
}

void forward(std::span<const float> params, const std::uint8_t* image, Workspace& ws) {
  const Layout& L = layout();
  const float* P = params.data();
  for (int k = 0; k < kSide * kSide; ++k) ws.input[k] = float(image[k]);
  conv_rows(ws.input.data(), 1, kSide, P + L.offset[kConv1], kM1, kH1, kH1, ws.conv1.data());
  relu_maxpool(ws.conv1.data(), kM1, kH1, net::kPool1, ws.pool1.data(), ws.arg1.data());
  conv_rows(ws.pool1.data(), kM1, kP1, P + L.offset[kConv2], kM2, kH2, kRow2, ws.conv2.data());
  relu_maxpool(ws.conv2.data(), kM2, kH2, net::kPool2, ws.pool2.data(), ws.arg2.data());
  // FC layers: the sums run over n ascending, as reference::network::fully_connected does.
  const float* w1 = P + L.offset[kFc1W];
  const float* b1 = P + L.offset[kFc1B];
  for (int o = 0; o < net::kHidden; ++o) {
    float s = b1[o];
    for (int n = 0; n < net::kFeatures; ++n) s += ws.pool2[n] * w1[std::size_t(o) * net::kFeatures + n];
    ws.hidden[o] = std::max(s, 0.f);
  }
  const float* w2 = P + L.offset[kFc2W];
  const float* b2 = P + L.offset[kFc2B];
  for (int o = 0; o < net::kClasses; ++o) {
    float s = b2[o];
    for (int n = 0; n < net::kHidden; ++n) s += ws.hidden[n] * w2[o * net::kHidden + n];
    ws.logits[o] = s;
  }
}

std::uint8_t argmax(const std::vector<float>& logits) {
  return std::uint8_t(std::max_element(logits.begin(), logits.end()) - logits.begin());
}

}  // namespace

Layout::Layout() {
  for (std::size_t k = 0; k < net::kModelFiles.size(); ++k) {
    std::size_t n = 1;
    for (int d = 0; d < net::kModelFiles[k].ndim; ++d) n *= std::size_t(net::kModelFiles[k].shape[d]);
    offset[k + 1] = offset[k] + n;
  }
}

const Layout& layout() {
  static const Layout l;
  return l;
}

std::vector<float> flatten(const net::Model& m) {
  std::vector<float> p;
  p.reserve(layout().size());
  for (const auto* t : {&m.conv1, &m.conv2, &m.fc1_w, &m.fc1_b, &m.fc2_w, &m.fc2_b})
    p.insert(p.end(), t->begin(), t->end());
  return p;
}

net::Model unflatten(std::span<const float> p) {
  const Layout& L = layout();
  net::Model m;
  std::vector<float>* tensors[] = {&m.conv1, &m.conv2, &m.fc1_w, &m.fc1_b, &m.fc2_w, &m.fc2_b};
  for (int k = 0; k < 6; ++k) tensors[k]->assign(p.begin() + L.offset[k], p.begin() + L.offset[k + 1]);
  return m;
}

std::vector<float> initial_params(std::uint64_t seed) {
  const Layout& L = layout();
  std::vector<float> p(L.size(), 0.f);
  SplitMix64 rng(seed_for(seed, "init"));
  // fan_in of each weight tensor; biases (1, 3, 5) stay zero.
  const std::pair<int, double> weights[] = {{kConv1, 49.0 * 128.0 * 128.0},
                                            {kConv2, 196.0},
                                            {kFc1W, double(net::kFeatures)},
                                            {kFc2W, double(net::kHidden)}};
  for (auto [t, fan_in] : weights) {
    const double stddev = std::sqrt(2.0 / fan_in);
    for (std::size_t k = L.offset[t]; k < L.offset[t + 1]; ++k) {
      // Box-Muller (only the initial weights use libm; the data never does).
      const double u1 = 1.0 - rng.uniform(), u2 = rng.uniform();
      p[k] = float(stddev * std::sqrt(-2.0 * std::log(u1)) * std::cos(6.283185307179586 * u2));
    }
  }
  return p;
}

void calibrate(std::vector<float>& params, const std::uint8_t* images, int count) {
  const Layout& L = layout();
  float* w1 = params.data() + L.offset[kConv1];
  for (int m = 0; m < kM1; ++m) {
    float mean = 0.f;
    for (int k = 0; k < kK * kK; ++k) mean += w1[m * kK * kK + k];
    mean /= float(kK * kK);
    for (int k = 0; k < kK * kK; ++k) w1[m * kK * kK + k] -= mean;
  }
  Workspace ws;
  const std::size_t pixels = std::size_t(kSide) * kSide;
  // RMS of one layer's pre-activations over the images, with the weights as they are now.
  auto rms = [&](int tensor) {
    double sum = 0.0, n = 0.0;
    for (int i = 0; i < count; ++i) {
      forward(params, images + std::size_t(i) * pixels, ws);
      if (tensor == kConv1 || tensor == kConv2) {
        for (float v : tensor == kConv1 ? ws.conv1 : ws.conv2) sum += double(v) * v;
        n += double((tensor == kConv1 ? ws.conv1 : ws.conv2).size());
      } else {
        for (int o = 0; o < net::kHidden; ++o) {
          double s = params[L.offset[kFc1B] + o];
          for (int f = 0; f < net::kFeatures; ++f)
            s += double(ws.pool2[f]) * params[L.offset[kFc1W] + std::size_t(o) * net::kFeatures + f];
          sum += s * s;
        }
        n += net::kHidden;
      }
    }
    return std::sqrt(sum / std::max(n, 1.0));
  };
  for (int tensor : {kConv1, kConv2, kFc1W}) {
    const double r = rms(tensor);
    if (r <= 0.0) continue;
    for (std::size_t k = L.offset[tensor]; k < L.offset[tensor + 1]; ++k) params[k] = float(params[k] / r);
  }
}

Workspace::Workspace()
    : input(kSide * kSide),
      conv1(std::size_t(kM1) * kH1 * kH1),
      pool1(std::size_t(kM1) * kP1 * kP1 + kPad1, 0.f),
      conv2(std::size_t(kM2) * kH2 * kH2),
      pool2(net::kFeatures),
      hidden(net::kHidden),
      logits(net::kClasses),
      d_pool1(std::size_t(kM1) * kP1 * kP1),
      d_hidden(net::kHidden),
      d_features(net::kFeatures),
      arg1(std::size_t(kM1) * kP1 * kP1),
      arg2(net::kFeatures) {}

std::uint8_t predict(std::span<const float> params, const std::uint8_t* image, Workspace& ws) {
  forward(params, image, ws);
  return argmax(ws.logits);
}

Outcome forward_backward(std::span<const float> params, const std::uint8_t* image, int label,
                         Workspace& ws, std::span<float> grad) {
  forward(params, image, ws);
  const Layout& L = layout();
  const float* P = params.data();
  float* G = grad.data();
  std::fill(grad.begin(), grad.end(), 0.f);

  // Softmax cross-entropy: d loss / d logit = softmax - one-hot.
  const float top = *std::max_element(ws.logits.begin(), ws.logits.end());
  float prob[net::kClasses], total = 0.f;
  for (int o = 0; o < net::kClasses; ++o) total += prob[o] = std::exp(ws.logits[o] - top);
  for (int o = 0; o < net::kClasses; ++o) prob[o] /= total;
  const Outcome outcome{-std::log(std::max(prob[label], 1e-30f)), argmax(ws.logits)};
  prob[label] -= 1.f;

  // FC2 and FC1.
  std::fill(ws.d_hidden.begin(), ws.d_hidden.end(), 0.f);
  for (int o = 0; o < net::kClasses; ++o) {
    G[L.offset[kFc2B] + o] = prob[o];
    for (int n = 0; n < net::kHidden; ++n) {
      G[L.offset[kFc2W] + o * net::kHidden + n] = prob[o] * ws.hidden[n];
      ws.d_hidden[n] += prob[o] * P[L.offset[kFc2W] + o * net::kHidden + n];
    }
  }
  std::fill(ws.d_features.begin(), ws.d_features.end(), 0.f);
  for (int o = 0; o < net::kHidden; ++o) {
    if (ws.hidden[o] <= 0.f) continue;  // ReLU
    const float d = ws.d_hidden[o];
    G[L.offset[kFc1B] + o] = d;
    float* gw = G + L.offset[kFc1W] + std::size_t(o) * net::kFeatures;
    const float* w = P + L.offset[kFc1W] + std::size_t(o) * net::kFeatures;
    for (int n = 0; n < net::kFeatures; ++n) {
      gw[n] = d * ws.pool2[n];
      ws.d_features[n] += d * w[n];
    }
  }

  // conv2: scatter from each pool2 winner to the weights and to pool1.
  std::fill(ws.d_pool1.begin(), ws.d_pool1.end(), 0.f);
  const float* w2 = P + L.offset[kConv2];
  float* g2 = G + L.offset[kConv2];
  for (int f = 0; f < net::kFeatures; ++f) {
    const std::int32_t at = ws.arg2[f];
    const float d = ws.d_features[f];
    if (at < 0 || d == 0.f) continue;
    const int m = f / (kP2 * kP2), i = at / kH2, j = at % kH2;
    for (int c = 0; c < kM1; ++c) {
      for (int p = 0; p < kK; ++p) {
        const std::size_t in_row = (std::size_t(c) * kP1 + i + p) * kP1 + j;
        const std::size_t w_row = ((std::size_t(m) * kM1 + c) * kK + p) * kK;
        for (int q = 0; q < kK; ++q) {
          g2[w_row + q] += d * ws.pool1[in_row + q];
          ws.d_pool1[in_row + q] += d * w2[w_row + q];
        }
      }
    }
  }

  // conv1: scatter from each pool1 winner to the weights.
  float* g1 = G + L.offset[kConv1];
  for (std::size_t f = 0; f < ws.d_pool1.size(); ++f) {
    const std::int32_t at = ws.arg1[f];
    const float d = ws.d_pool1[f];
    if (at < 0 || d == 0.f) continue;
    const int m = int(f / (kP1 * kP1)), i = at / kH1, j = at % kH1;
    for (int p = 0; p < kK; ++p)
      for (int q = 0; q < kK; ++q) g1[(m * kK + p) * kK + q] += d * ws.input[(i + p) * kSide + j + q];
  }
  return outcome;
}

}  // namespace labkit::train
