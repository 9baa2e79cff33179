// trainer.cpp — the training loop (trainer.h).
#include "tools/train/trainer.h"

#include <algorithm>
#include <chrono>
#include <numeric>
#include <stdexcept>
#include <string>

#include "grader/core/random.h"
#include "reference/parallel.h"
#include "tools/train/net.h"

namespace labkit::train {
namespace {

constexpr int kCalibrationImages = 64;
constexpr std::size_t kPixels = std::size_t(kImageSetSide) * kImageSetSide;

std::vector<int> permutation(int n, std::uint64_t seed, int epoch) {
  std::vector<int> order(static_cast<std::size_t>(n));
  std::iota(order.begin(), order.end(), 0);
  SplitMix64 rng(seed_for(seed, "epoch " + std::to_string(epoch)));
  for (int k = n - 1; k > 0; --k) std::swap(order[k], order[rng.next() % std::uint64_t(k + 1)]);
  return order;
}

}  // namespace

std::vector<std::uint8_t> predict_all(std::span<const float> params, const ImageSet& set, unsigned threads) {
  std::vector<std::uint8_t> out(std::size_t(set.n));
  reference::parallel_for(
      std::size_t(set.n),
      [&](std::size_t i) {
        thread_local Workspace ws;
        out[i] = predict(params, set.images.data() + i * kPixels, ws);
      },
      threads);
  return out;
}

double accuracy(std::span<const std::uint8_t> predicted, std::span<const std::uint8_t> labels) {
  if (predicted.size() != labels.size() || labels.empty()) return 0.0;
  std::size_t right = 0;
  for (std::size_t i = 0; i < labels.size(); ++i) right += predicted[i] == labels[i];
  return double(right) / double(labels.size());
}

std::vector<float> train(const ImageSet& train_set, const ImageSet& test_set, const TrainOptions& o,
                         const std::function<void(const EpochStats&)>& on_epoch) {
  if (train_set.n <= 0) throw std::invalid_argument("train: the training set is empty (" + train_set.source + ")");
  if (o.batch <= 0 || o.epochs <= 0) {
    throw std::invalid_argument("train: --batch " + std::to_string(o.batch) + " and --epochs " +
                                std::to_string(o.epochs) + " must be positive");
  }
  const std::size_t P = layout().size();
  std::vector<float> params = initial_params(o.seed);
  calibrate(params, train_set.images.data(), std::min(train_set.n, kCalibrationImages));
  const long steps_per_epoch = (train_set.n + o.batch - 1) / o.batch;
  Adam adam(P, o.adam, steps_per_epoch * o.epochs);
  adam.scale_range(layout().offset[0], layout().offset[1], o.conv1_step_scale);
  std::vector<float> grads(std::size_t(o.batch) * P), mean(P);
  std::vector<float> losses(std::size_t(o.batch));
  std::vector<std::uint8_t> right(std::size_t(o.batch));
  constexpr std::size_t kSlice = 2048;  // parameters per reduction task

  for (int epoch = 1; epoch <= o.epochs; ++epoch) {
    const auto start = std::chrono::steady_clock::now();
    const std::vector<int> order = permutation(train_set.n, o.seed, epoch);
    double loss_sum = 0.0;
    std::size_t right_sum = 0;
    for (int first = 0; first < train_set.n; first += o.batch) {
      const int B = std::min(o.batch, train_set.n - first);
      reference::parallel_for(
          std::size_t(B),
          [&](std::size_t s) {
            thread_local Workspace ws;
            const int i = order[std::size_t(first) + s];
            const Outcome r = forward_backward(params, train_set.images.data() + std::size_t(i) * kPixels,
                                               train_set.labels[std::size_t(i)], ws,
                                               std::span<float>(grads).subspan(s * P, P));
            losses[s] = r.loss;
            right[s] = r.predicted == train_set.labels[std::size_t(i)];
          },
          o.threads);
      // Sum in sample order, each slice of parameters on one thread.
      const float scale = 1.f / float(B);
      reference::parallel_for(
          (P + kSlice - 1) / kSlice,
          [&](std::size_t slice) {
            const std::size_t lo = slice * kSlice, hi = std::min(P, lo + kSlice);
            for (std::size_t k = lo; k < hi; ++k) mean[k] = grads[k];
            for (int s = 1; s < B; ++s) {
              const float* g = grads.data() + std::size_t(s) * P;
              for (std::size_t k = lo; k < hi; ++k) mean[k] += g[k];
            }
            for (std::size_t k = lo; k < hi; ++k) mean[k] *= scale;
          },
          o.threads);
      adam.step(params, mean);
      for (int s = 0; s < B; ++s) {
        loss_sum += losses[s];
        right_sum += right[s];
      }
    }
    const std::vector<std::uint8_t> predicted = predict_all(params, test_set, o.threads);
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    on_epoch({epoch, loss_sum / train_set.n, double(right_sum) / train_set.n,
              accuracy(predicted, test_set.labels), adam.learning_rate(), seconds});
  }
  return params;
}

}  // namespace labkit::train
