// net.h — the network of reference/network.h in float for training: the parameters as one flat
// vector, and the forward and backward pass of ONE image.
//
// Contract
//   * Params is laid out as Model's members in order (conv1, conv2, fc1_w, fc1_b, fc2_w, fc2_b),
//     so a gradient is a vector of the same layout and the optimizer never sees the layers.
//   * forward_backward(image, label) adds nothing anywhere: it overwrites `grad` with this image's
//     gradient of the softmax cross-entropy loss. The result depends only on the image and the
//     parameters, never on the thread that runs it, so a batch's gradient summed in sample order
//     is the same bits for every thread count.
//   * The convs add their terms in the reference order (c, then p, then q) in float; the input is
//     the raw pixels 0..255, as the students' convs receive them.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "reference/network.h"

namespace labkit::train {

namespace net = labkit::reference::network;

// Offsets of each tensor in the flat parameter vector.
struct Layout {
  std::array<std::size_t, 7> offset{};  // offset[k] .. offset[k + 1] is tensor k of kModelFiles
  Layout();
  std::size_t size() const { return offset.back(); }
};
const Layout& layout();

std::vector<float> flatten(const net::Model& model);
net::Model unflatten(std::span<const float> params);

// He-normal initialization from `seed`; conv1's weights are further divided by 128 because its
// input is pixels 0..255, not unit-scale values.
std::vector<float> initial_params(std::uint64_t seed);

// Data-dependent rescaling of the initial weights (as in LSUV, Mishkin & Matas 2016): the convs
// have no bias and the input cannot be normalized, so He init alone leaves the pre-activations
// of each layer at an arbitrary scale set by the pixel values (dead ReLUs, saturated softmax).
// conv1's kernels are first made zero-mean (they then ignore the background level), then conv1,
// conv2 and FC1 are each scaled so their pre-activations over `images` have RMS 1.
void calibrate(std::vector<float>& params, const std::uint8_t* images, int count);

// Scratch buffers of one forward/backward pass (about 250 KB); one per concurrent image.
struct Workspace {
  std::vector<float> input, conv1, pool1, conv2, pool2, hidden, logits, d_pool1, d_hidden, d_features;
  std::vector<std::int32_t> arg1, arg2;  // where each pooled maximum came from; -1 if ReLU cut it
  Workspace();
};

struct Outcome {
  float loss;
  std::uint8_t predicted;
};

// Forward only: the class with the largest logit (lowest index among equals).
std::uint8_t predict(std::span<const float> params, const std::uint8_t* image, Workspace& ws);

// Forward and backward; grad (size layout().size()) is overwritten.
Outcome forward_backward(std::span<const float> params, const std::uint8_t* image, int label,
                         Workspace& ws, std::span<float> grad);

}  // namespace labkit::train
