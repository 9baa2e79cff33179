// The 11-register-tiling solution's kernels on the shapes the grading cases rarely reach:
//   * conv1's family on the constant-weight kernel (solutions/11-register-tiling/constant_weights.cuh,
//     K 7, C 1, M <= 4) with odd widths, rows that are not a multiple of 4 pixels, blocks that are
//     not whole warps and a partial last strip (a thread computes 2 rows: one of them may be past
//     the last). The fixtures hold this family only at 86 x 86 and
//     7 x 7, where none of that happens. Also: forward() without the prolog's prepare() (the row
//     tile) gives the same result.
//   * conv2's family on the column tile (column_tiling.cuh, K 7, M > 4) with odd M and C, where the
//     weights of a block (2 maps a group) are not a whole number of float4s, and a partial last map
//     block. The grade's random cases draw such shapes only now and then.
#include <doctest/doctest.h>

#include <cmath>
#include <vector>

#include "labkit/cuda_check.h"
#include "grader/core/device_buffer.h"
#include "grader/core/random.h"
#include "reference/conv_reference.h"
#include "solutions/11-register-tiling/register_tiling.cuh"

namespace {

// The worst |lab - reference| / (sum |x * w| + tiny) over every output; NaN (unwritten) counts as 1.
double worst_error(const std::vector<float>& got, const std::vector<double>& want, const std::vector<double>& scale) {
  double worst = 0;
  for (std::size_t i = 0; i < got.size(); ++i) {
    const double e = std::isfinite(got[i]) ? std::fabs(got[i] - want[i]) / (scale[i] + 1e-30) : 1.0;
    worst = std::max(worst, e);
  }
  return worst;
}

// forward() on shape s, after prepare() or not, against the fp64 reference: x in [-1, 1], weights
// in [-0.5, 0.5], the output filled with NaN first so that an unwritten value shows.
void check_forward(const labkit::ConvShape& s) {
  CAPTURE(labkit::to_string(s));
  std::vector<float> x(s.input_size()), w(s.mask_size()), y(s.output_size());
  labkit::fill_uniform(x, -1.0f, 1.0f, labkit::seed_for(11, labkit::to_string(s) + "/input"));
  labkit::fill_uniform(w, -0.5f, 0.5f, labkit::seed_for(11, labkit::to_string(s) + "/mask"));
  std::vector<double> want(s.output_size()), scale(s.output_size());
  std::vector<float> ax(x.size()), aw(w.size());
  for (std::size_t i = 0; i < x.size(); ++i) ax[i] = std::fabs(x[i]);
  for (std::size_t i = 0; i < w.size(); ++i) aw[i] = std::fabs(w[i]);
  labkit::reference::conv_forward_cpu(want, x, w, s);
  labkit::reference::conv_forward_cpu(scale, ax, aw, s);

  labkit::DeviceBuffer<float> dx(x.size()), dw(w.size()), dy(y.size());
  LABKIT_CUDA_CHECK(cudaMemcpy(dx.get(), x.data(), x.size() * sizeof(float), cudaMemcpyHostToDevice));
  LABKIT_CUDA_CHECK(cudaMemcpy(dw.get(), w.data(), w.size() * sizeof(float), cudaMemcpyHostToDevice));
  for (const bool prepared : {false, true}) {
    CAPTURE(prepared);
    if (prepared) register_tiling::prepare(w.data(), dw.get(), s);
    CHECK(constant_weights::ready(dw.get(), s) == (prepared && constant_weights::takes(s)));
    LABKIT_CUDA_CHECK(cudaMemset(dy.get(), 0xFF, y.size() * sizeof(float)));
    register_tiling::forward(dy.get(), dx.get(), dw.get(), s);
    LABKIT_CUDA_CHECK(cudaDeviceSynchronize());
    LABKIT_CUDA_CHECK(cudaMemcpy(y.data(), dy.get(), y.size() * sizeof(float), cudaMemcpyDeviceToHost));
    CHECK(worst_error(y, want, scale) < 1e-5);  // fp32 sums of up to C * 49 terms: about 1e-7
  }
}

}  // namespace

TEST_CASE("register_tiling: conv1's family on the constant-weight kernel matches the reference") {
  const labkit::ConvShape shapes[] = {
      {2, 4, 1, 86, 86, 7},   // conv1 itself
      {2, 4, 1, 87, 87, 7},   // W_out 81: a partial float4 row, 168 threads (5 warps and 8 threads)
      {3, 3, 1, 29, 37, 7},   // M 3, W_out 31, 23 rows: the last strip's last row pair has 1 row
      {1, 1, 1, 7, 7, 7},     // one output: a block of 8 threads
      {2, 2, 1, 40, 14, 7},   // W even, W_out 8: 8-byte staging copies
      {1, 4, 1, 12, 530, 7},  // 131 segments, more than a block takes (80): the row tile
  };
  for (const auto& s : shapes) check_forward(s);
}

TEST_CASE("register_tiling: conv2's family on the column tile matches the reference") {
  const labkit::ConvShape shapes[] = {
      {2, 16, 4, 40, 40, 7},  // conv2 itself
      {1, 9, 3, 68, 52, 7},   // 5 groups of 2 maps, C 3: 1470 weight floats (a grade's random case)
      {2, 5, 1, 13, 9, 7},    // 3 groups (the last half empty), 245 weight floats, 3 x 7 outputs
      {3, 33, 5, 20, 27, 7},  // 3 map blocks (16, 16, 1 maps), C 5, a partial last strip
      {1, 6, 2, 7, 7, 7},     // one output pixel a map
  };
  for (const auto& s : shapes) check_forward(s);
}
