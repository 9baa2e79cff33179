// reference_eval.cpp — see reference_eval.h.
#include "tools/train/reference_eval.h"

#include <algorithm>

#include "reference/conv_reference.h"

namespace labkit::train {

namespace net = reference::network;

std::vector<std::uint8_t> classify_reference(const net::Model& model, const ImageSet& set, unsigned threads) {
  constexpr int kChunk = 250;  // conv1's double output is 51 MB at 250 images
  std::vector<std::uint8_t> out;
  out.reserve(std::size_t(set.n));
  const std::size_t pixels = std::size_t(kImageSetSide) * kImageSetSide;
  for (int first = 0; first < set.n; first += kChunk) {
    const int B = std::min(kChunk, set.n - first);
    const ConvShape s1 = net::conv1_shape(B), s2 = net::conv2_shape(B);
    std::vector<float> input(set.images.begin() + std::ptrdiff_t(first * pixels),
                             set.images.begin() + std::ptrdiff_t((first + B) * pixels));
    std::vector<double> y1(s1.output_size());
    reference::conv_forward_cpu(y1, input, model.conv1, s1, threads);
    std::vector<float> pooled(s2.input_size());
    net::relu_maxpool(std::vector<float>(y1.begin(), y1.end()), B, s1.M, s1.H_out(), s1.W_out(), net::kPool1,
                      pooled);
    std::vector<double> y2(s2.output_size());
    reference::conv_forward_cpu(y2, pooled, model.conv2, s2, threads);
    const std::vector<std::uint8_t> labels = net::classify(std::vector<float>(y2.begin(), y2.end()), B, model);
    out.insert(out.end(), labels.begin(), labels.end());
  }
  return out;
}

Confusion confusion(const std::vector<std::uint8_t>& predicted, const std::vector<std::uint8_t>& labels) {
  Confusion c{};
  for (std::size_t i = 0; i < std::min(predicted.size(), labels.size()); ++i) ++c[labels[i]][predicted[i]];
  return c;
}

}  // namespace labkit::train
