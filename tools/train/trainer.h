// trainer.h — minibatch training of the network on an ImageSet, data-parallel over threads.
//
// Contract
//   * Each epoch visits the training images in a permutation drawn from (seed, epoch); a batch's
//     images are processed in parallel, each into its own gradient buffer, and the buffers are
//     summed in sample order. The result is therefore the same bits for the same seed whatever
//     the thread count (and on one machine and compiler; across CPUs the float rounding of a
//     vectorized loop may differ).
//   * The last batch of an epoch may be smaller; its gradient is the mean over its images.
#pragma once

#include <cstdint>
#include <functional>
#include <span>
#include <vector>

#include "grader/network/dataset.h"
#include "tools/train/adam.h"

namespace labkit::train {

struct TrainOptions {
  std::uint64_t seed = 1;
  int epochs = 12;
  int batch = 64;
  unsigned threads = 0;  // 0: every core
  AdamOptions adam;
  // conv1's learning rate relative to the other layers' (its weights multiply raw pixels, so
  // they are much smaller: see adam.h).
  float conv1_step_scale = 0.25f;
};

struct EpochStats {
  int epoch;            // 1-based
  double loss;          // mean training loss over the epoch (while the weights moved)
  double train_accuracy;
  double test_accuracy;
  double learning_rate;  // at the end of the epoch
  double seconds;        // training and testing this epoch
};

// Predicted class of every image of `set` with the trainer's float forward.
std::vector<std::uint8_t> predict_all(std::span<const float> params, const ImageSet& set, unsigned threads);

double accuracy(std::span<const std::uint8_t> predicted, std::span<const std::uint8_t> labels);

// Trains from initial_params(options.seed), calibrated on the first training images; calls on_epoch after every epoch; returns the params.
std::vector<float> train(const ImageSet& train_set, const ImageSet& test_set, const TrainOptions& options,
                         const std::function<void(const EpochStats&)>& on_epoch);

}  // namespace labkit::train
