// conv_cpu.cpp — the double-precision CPU reference convolution (see conv_reference.h).
//
// Arithmetic: every product mask * input is formed in double from two floats, which is exact
// (24 + 24 significand bits fit in double's 53), so the only roundings are the additions, and they
// happen in the fixed order c, p, q for every output element. The result therefore does not
// depend on the thread count, on vectorization, or on whether the compiler contracts a multiply
// and an add into an fma (rounding an exact product changes nothing); the GPU fp64 kernel, which
// adds in the same order, agrees bit for bit.
//
// Speed: one task per output plane (b, m). For each (c, p, q) the plane is updated with one
// mask value times a shifted window of input channel c; the innermost loop runs along w over
// contiguous memory and vectorizes, and the plane accumulator (34 x 34 doubles for conv2) stays
// in L1. Per output element the additions still happen in the order c, p, q.
#include <algorithm>
#include <stdexcept>
#include <string>
#include <vector>

#include "reference/conv_reference.h"
#include "reference/parallel.h"

namespace labkit::reference {
namespace {

void check_size(const char* what, std::size_t got, std::size_t want, const ConvShape& s) {
  if (got != want) {
    throw std::invalid_argument("conv_forward_cpu: " + std::string(what) + " has " +
                                std::to_string(got) + " elements, shape " + to_string(s) +
                                " needs " + std::to_string(want));
  }
}

}  // namespace

void conv_forward_cpu(std::span<double> output, std::span<const float> input,
                      std::span<const float> mask, const ConvShape& shape, unsigned threads) {
  if (!shape.valid()) {
    throw std::invalid_argument("conv_forward_cpu: invalid shape " + to_string(shape) +
                                " (need all sizes > 0 and K <= H, K <= W)");
  }
  check_size("output", output.size(), shape.output_size(), shape);
  check_size("input", input.size(), shape.input_size(), shape);
  check_size("mask", mask.size(), shape.mask_size(), shape);

  const std::size_t M = shape.M, C = shape.C, H = shape.H, W = shape.W, K = shape.K;
  const std::size_t H_out = shape.H_out(), W_out = shape.W_out();
  const std::size_t plane = H_out * W_out;

  parallel_for(
      std::size_t(shape.B) * M,
      [&](std::size_t bm) {
        const std::size_t b = bm / M, m = bm % M;
        // Accumulate straight into this plane of the output: planes do not overlap, so the
        // threads never share an element.
        double* out = output.data() + bm * plane;
        std::fill(out, out + plane, 0.0);
        for (std::size_t c = 0; c < C; ++c) {
          const float* in_c = input.data() + (b * C + c) * H * W;
          const float* mask_mc = mask.data() + (m * C + c) * K * K;
          for (std::size_t p = 0; p < K; ++p) {
            for (std::size_t q = 0; q < K; ++q) {
              const double weight = mask_mc[p * K + q];
              for (std::size_t h = 0; h < H_out; ++h) {
                const float* in_row = in_c + (h + p) * W + q;  // input[b][c][h + p][q ...]
                double* out_row = out + h * W_out;
                for (std::size_t w = 0; w < W_out; ++w) out_row[w] += weight * double(in_row[w]);
              }
            }
          }
        }
      },
      threads);
}

}  // namespace labkit::reference
