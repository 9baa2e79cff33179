// reference_eval.h — the kit's reference path for a trained model: conv_forward_cpu (double)
// for both convs, converted to float, and reference::network's layers after each conv. This is
// the path `labkit report` compares a student's conv against, so the accuracy recorded in
// model.json is the one a correct conv must reproduce.
#pragma once

#include <array>
#include <cstdint>
#include <vector>

#include "grader/network/dataset.h"
#include "reference/network.h"

namespace labkit::train {

std::vector<std::uint8_t> classify_reference(const reference::network::Model& model, const ImageSet& set,
                                             unsigned threads);

// confusion[true][predicted] counts.
using Confusion = std::array<std::array<int, kImageSetClasses>, kImageSetClasses>;
Confusion confusion(const std::vector<std::uint8_t>& predicted, const std::vector<std::uint8_t>& labels);

}  // namespace labkit::train
