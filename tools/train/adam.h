// adam.h — the Adam optimizer (Kingma & Ba 2015) with a cosine learning-rate schedule.
//
// Why Adam: the input is raw pixels 0..255 (the students' convs receive them unscaled), so
// conv1's gradients are ~100x larger than the other layers'; Adam's per-parameter step size
// absorbs that. Its steps are however the same size in weight space for every layer, and conv1's
// weights are ~128x smaller than a unit-input layer's (they multiply pixels up to 255): a
// per-range learning-rate scale (1/128 for conv1) makes Adam behave as if the input were scaled
// to ~0..2, which is what the network would see if we were allowed to normalize it.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <span>
#include <vector>

namespace labkit::train {

struct AdamOptions {
  double lr = 3e-3;        // peak learning rate
  double beta1 = 0.9, beta2 = 0.999, eps = 1e-8;
  double final_lr_fraction = 0.02;  // the cosine schedule ends at lr * this
};

class Adam {
 public:
  Adam(std::size_t size, AdamOptions options, long total_steps)
      : o_(options), total_(total_steps), m_(size, 0.f), v_(size, 0.f), scale_(size, 1.f) {}

  // Parameters [begin, end) take steps `scale` times the learning rate.
  void scale_range(std::size_t begin, std::size_t end, float scale) {
    std::fill(scale_.begin() + std::ptrdiff_t(begin), scale_.begin() + std::ptrdiff_t(end), scale);
  }

  // The learning rate of the next step: cosine from lr down to lr * final_lr_fraction.
  double learning_rate() const {
    const double t = total_ > 1 ? double(step_) / double(total_ - 1) : 1.0;
    const double lo = o_.lr * o_.final_lr_fraction;
    return lo + 0.5 * (o_.lr - lo) * (1.0 + std::cos(3.141592653589793 * std::min(t, 1.0)));
  }

  // params -= step(grad), grad being the batch's mean gradient.
  void step(std::span<float> params, std::span<const float> grad) {
    const double lr = learning_rate();
    ++step_;
    const double c1 = 1.0 - std::pow(o_.beta1, double(step_));
    const double c2 = 1.0 - std::pow(o_.beta2, double(step_));
    const float b1 = float(o_.beta1), b2 = float(o_.beta2);
    for (std::size_t k = 0; k < params.size(); ++k) {
      m_[k] = b1 * m_[k] + (1.f - b1) * grad[k];
      v_[k] = b2 * v_[k] + (1.f - b2) * grad[k] * grad[k];
      const double m_hat = m_[k] / c1, v_hat = v_[k] / c2;
      params[k] -= float(lr * scale_[k] * m_hat / (std::sqrt(v_hat) + o_.eps));
    }
  }

  const AdamOptions& options() const { return o_; }

 private:
  AdamOptions o_;
  long total_;
  long step_ = 0;
  std::vector<float> m_, v_, scale_;
};

}  // namespace labkit::train
