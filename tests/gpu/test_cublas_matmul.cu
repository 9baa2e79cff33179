// The cuBLAS comparison of 05-unroll-matmul (reference/cublas_matmul.h) against the CPU reference
// conv with the kit's fp32 tolerance (grader/judge/check.h): the unrolled matrix element by element, the
// single SGEMM's [M][B*H_out*W_out] product (read back in the conv's order), and the strided-
// batched GEMM's conv layout, on ECE408-like and odd shapes, over one segment and over several.
#include <doctest/doctest.h>

#include <cmath>
#include <vector>

#include "grader/judge/check.h"
#include "labkit/cuda_check.h"
#include "grader/core/device_buffer.h"
#include "grader/core/random.h"
#include "reference/conv_reference.h"
#include "reference/cublas_matmul.h"

namespace cm = labkit::cublas_matmul;
using labkit::ConvShape;

namespace {

struct Case {
  ConvShape shape;
  std::vector<float> input, mask;
  std::vector<double> expected, bound;  // the reference conv, and of |input| and |mask|
};

Case make_case(const ConvShape& s, const char* name) {
  Case c{s, std::vector<float>(s.input_size()), std::vector<float>(s.mask_size()), std::vector<double>(s.output_size()),
         std::vector<double>(s.output_size())};
  labkit::fill_uniform(c.input, -1.f, 1.f, labkit::seed_for(408, name));
  labkit::fill_uniform(c.mask, -0.5f, 0.5f, labkit::seed_for(409, name));
  labkit::reference::conv_forward_cpu(c.expected, c.input, c.mask, s);
  std::vector<float> abs_in(c.input.size()), abs_mask(c.mask.size());
  for (std::size_t i = 0; i < abs_in.size(); ++i) abs_in[i] = std::fabs(c.input[i]);
  for (std::size_t i = 0; i < abs_mask.size(); ++i) abs_mask[i] = std::fabs(c.mask[i]);
  labkit::reference::conv_forward_cpu(c.bound, abs_in, abs_mask, s);
  return c;
}

void check_output(const Case& c, const std::vector<float>& got) {
  const auto tol = labkit::check::conv_tolerance(c.shape, labkit::Precision::fp32, labkit::check::max_abs(c.input),
                                                 labkit::check::max_abs(c.mask));
  const auto cmp = labkit::check::compare(got, c.expected, c.bound, tol);
  CAPTURE(cmp.describe(labkit::check::conv_layout(c.shape)));
  CHECK(cmp.passed());
}

const ConvShape kShapes[] = {
    {3, 4, 1, 86, 86, 7},   // conv1 at batch 3
    {2, 16, 4, 40, 40, 7},  // conv2 at batch 2
    {3, 5, 3, 12, 10, 3},   // M not a multiple of 4, H != W
    {1, 7, 4, 9, 11, 1},    // K 1
};

}  // namespace

TEST_CASE("unroll writes the 05 solution's matrix: X[(c*K+p)*K+q][b*HW + h*W_out + w] = input[b][c][h+p][w+q]") {
  const ConvShape s{3, 2, 3, 8, 9, 3};
  const Case c = make_case(s, "cublas/unroll");
  const int HW = s.H_out() * s.W_out(), KK = s.C * s.K * s.K, N = s.B * HW;
  labkit::DeviceBuffer<float> input(c.input.size()), x(std::size_t(KK) * N);
  input.upload(c.input);
  x.poison();
  cm::unroll(x.get(), input.get(), s, 0, s.B);
  const std::vector<float> got = x.download();
  int wrong = 0;
  for (int b = 0; b < s.B; ++b)
    for (int ch = 0; ch < s.C; ++ch)
      for (int p = 0; p < s.K; ++p)
        for (int q = 0; q < s.K; ++q)
          for (int h = 0; h < s.H_out(); ++h)
            for (int w = 0; w < s.W_out(); ++w) {
              const float want = c.input[((std::size_t(b) * s.C + ch) * s.H + h + p) * s.W + w + q];
              const float have = got[std::size_t((ch * s.K + p) * s.K + q) * N + b * HW + h * s.W_out() + w];
              wrong += want != have;  // a copy: bit for bit (and never the NaN poison)
            }
  CHECK(wrong == 0);
}

TEST_CASE("cublasSgemm product: mask [M][CKK] x unrolled [CKK][B*HW] is the conv, in [M][B*HW] order") {
  cm::Gemm gemm;
  for (const ConvShape& s : kShapes) {
    CAPTURE(labkit::to_string(s));
    const Case c = make_case(s, "cublas/product");
    const int HW = s.H_out() * s.W_out(), KK = s.C * s.K * s.K, N = s.B * HW;
    labkit::DeviceBuffer<float> input(c.input.size()), mask(c.mask.size()), x(std::size_t(KK) * N), product(s.output_size());
    input.upload(c.input);
    mask.upload(c.mask);
    product.poison();
    cm::unroll(x.get(), input.get(), s, 0, s.B);
    gemm.product(product.get(), mask.get(), x.get(), s.M, KK, N);
    const std::vector<float> p = product.download();
    std::vector<float> conv_order(p.size());  // [m][b*HW + pix] -> [b][m][pix]
    for (int b = 0; b < s.B; ++b)
      for (int m = 0; m < s.M; ++m)
        for (int pix = 0; pix < HW; ++pix)
          conv_order[(std::size_t(b) * s.M + m) * HW + pix] = p[std::size_t(m) * N + std::size_t(b) * HW + pix];
    check_output(c, conv_order);
  }
}

TEST_CASE("cublasSgemmStridedBatched writes the conv's own layout, over one segment and over several") {
  cm::Gemm gemm;
  for (const ConvShape& s : kShapes) {
    const Case c = make_case(s, "cublas/conv-layout");
    const int HW = s.H_out() * s.W_out(), KK = s.C * s.K * s.K;
    // All images at once, and one image per segment (the segment loop of the bench and solution).
    for (const int images : {s.B, 1}) {
      CAPTURE(labkit::to_string(s));
      CAPTURE(images);
      labkit::DeviceBuffer<float> input(c.input.size()), mask(c.mask.size()), workspace(std::size_t(KK) * images * HW),
          output(s.output_size());
      input.upload(c.input);
      mask.upload(c.mask);
      output.poison();
      cm::conv_forward(gemm, output.get(), input.get(), mask.get(), s, workspace.get(), images);
      check_output(c, output.download());
    }
  }
}

TEST_CASE("segments: as many images as fit the segment's bytes, at least one, at most B") {
  const ConvShape conv2{10000, 16, 4, 40, 40, 7};
  CHECK(cm::segment_images(conv2) == 592);  // 512 MiB / (196 * 1156 * 4 B): the 05 handout's 592
  CHECK(cm::segment_images(conv2, 1) == 1);
  CHECK(cm::segment_images({3, 4, 1, 86, 86, 7}) == 3);
}
