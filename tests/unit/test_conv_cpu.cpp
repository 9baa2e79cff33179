// The CPU reference convolution: hand-computed cases with small integers (every value exact in
// double, so equality is exact), the layout of B, M and C, a direct seven-loop convolution on a
// random case, invalid arguments, and independence from the thread count.
#include <doctest/doctest.h>

#include <algorithm>
#include <cstring>
#include <stdexcept>
#include <string>
#include <vector>

#include "grader/core/random.h"
#include "reference/conv_reference.h"

namespace {

using labkit::ConvShape;
using labkit::reference::conv_forward_cpu;

std::vector<double> run(const ConvShape& s, const std::vector<float>& input,
                        const std::vector<float>& mask, unsigned threads = 0) {
  std::vector<double> output(s.output_size(), -12345.0);  // anything but the answer
  conv_forward_cpu(output, input, mask, s, threads);
  return output;
}

// The definition, written as plainly as possible: seven loops, additions in the order c, p, q.
std::vector<double> direct(const ConvShape& s, const std::vector<float>& in,
                           const std::vector<float>& mask) {
  std::vector<double> out(s.output_size());
  const int Ho = s.H_out(), Wo = s.W_out();
  for (int b = 0; b < s.B; ++b)
    for (int m = 0; m < s.M; ++m)
      for (int h = 0; h < Ho; ++h)
        for (int w = 0; w < Wo; ++w) {
          double acc = 0;
          for (int c = 0; c < s.C; ++c)
            for (int p = 0; p < s.K; ++p)
              for (int q = 0; q < s.K; ++q)
                acc += double(mask[((m * s.C + c) * s.K + p) * s.K + q]) *
                       double(in[((b * s.C + c) * s.H + h + p) * s.W + w + q]);
          out[((b * s.M + m) * Ho + h) * Wo + w] = acc;
        }
  return out;
}

struct RandomCase {
  std::vector<float> input, mask;
};

RandomCase random_case(const ConvShape& s, std::uint64_t seed) {
  RandomCase r{std::vector<float>(s.input_size()), std::vector<float>(s.mask_size())};
  labkit::fill_uniform(r.input, -1.f, 1.f, seed);
  labkit::fill_uniform(r.mask, -0.5f, 0.5f, seed + 1);
  return r;
}

// Runs f, which must throw std::invalid_argument whose message contains `needle`.
template <class F>
void check_invalid(F&& f, const std::string& needle) {
  try {
    f();
    FAIL("no exception; expected std::invalid_argument mentioning " << needle);
  } catch (const std::invalid_argument& e) {
    INFO("message: " << e.what());
    CHECK(std::string(e.what()).find(needle) != std::string::npos);
  }
}

}  // namespace

TEST_CASE("conv cpu: 1x1 image, K = 1 is a multiplication") {
  const ConvShape s{1, 1, 1, 1, 1, 1};
  CHECK(run(s, {3.f}, {-2.f}) == std::vector<double>{-6.0});
}

TEST_CASE("conv cpu: 4x4 input, 3x3 mask") {
  // input[h][w] = 4h + w; the mask picks (0,0) x1, (0,1) x2, (2,2) x3:
  // out[h][w] = (4h + w) + 2 (4h + w + 1) + 3 (4(h + 2) + w + 2) = 24h + 6w + 32.
  const ConvShape s{1, 1, 1, 4, 4, 3};
  std::vector<float> input(16);
  for (int i = 0; i < 16; ++i) input[i] = float(i);
  const std::vector<float> mask = {1, 2, 0,  //
                                   0, 0, 0,  //
                                   0, 0, 3};
  CHECK(run(s, input, mask) == std::vector<double>{32, 38, 56, 62});
}

TEST_CASE("conv cpu: channels are summed") {
  // c0 = [1 2; 3 4] with mask [1 1; 1 1] gives 10; c1 = [5 6; 7 8] with [1 -1; 0 2] gives 15.
  const ConvShape s{1, 1, 2, 2, 2, 2};
  CHECK(run(s, {1, 2, 3, 4, 5, 6, 7, 8}, {1, 1, 1, 1, 1, -1, 0, 2}) == std::vector<double>{25});
}

TEST_CASE("conv cpu: layout of B, M, C (B = 2, M = 2, C = 2, 3x3 input, K = 2)") {
  const ConvShape s{2, 2, 2, 3, 3, 2};
  const std::vector<float> input = {
      1, 2, 0, 0, 1, 3, 2, 0, 1,  // b0 c0
      0, 1, 1, 2, 0, 0, 1, 1, 2,  // b0 c1
      3, 0, 1, 1, 1, 0, 0, 2, 2,  // b1 c0
      1, 1, 0, 0, 3, 1, 2, 0, 1,  // b1 c1
  };
  const std::vector<float> mask = {
      1, 0, 0, 1,   // m0 c0: out = in[h][w] + in[h+1][w+1]
      0, 2, 1, 0,   // m0 c1: out = 2 in[h][w+1] + in[h+1][w]
      0, -1, 1, 0,  // m1 c0: out = -in[h][w+1] + in[h+1][w]
      1, 1, 1, -1,  // m1 c1: out = in[h][w] + in[h][w+1] + in[h+1][w] - in[h+1][w+1]
  };
  // e.g. b0 m0 (0,0): c0 1 + 1, c1 2*1 + 2 -> 6;  b1 m1 (1,0): c0 -1 + 0, c1 0 + 3 + 2 - 0 -> 4.
  const std::vector<double> expected = {
      6, 7, 1, 3,    // b0 m0
      1, 3, 3, -4,   // b0 m1
      6, 3, 11, 5,   // b1 m0
      0, 3, 4, 5,    // b1 m1
  };
  CHECK(run(s, input, mask) == expected);
}

TEST_CASE("conv cpu: K = 1 scales every plane (B = 2, M = 3, H != W)") {
  const ConvShape s{2, 3, 1, 2, 3, 1};
  const std::vector<float> input = {1, 2, 3, 4, 5, 6, 10, 20, 30, 40, 50, 60};
  const std::vector<float> mask = {1, -1, 2};
  const std::vector<double> expected = {
      1, 2, 3, 4, 5, 6,         -1, -2, -3, -4, -5, -6,         2, 4, 6, 8, 10, 12,        // b0
      10, 20, 30, 40, 50, 60,   -10, -20, -30, -40, -50, -60,   20, 40, 60, 80, 100, 120,  // b1
  };
  CHECK(run(s, input, mask) == expected);
}

TEST_CASE("conv cpu: K = H = W gives one output per plane") {
  // 3x3 all-ones mask over 1..9 sums to 45; the second map's mask (all 2) doubles it.
  const ConvShape s{1, 2, 1, 3, 3, 3};
  std::vector<float> input = {1, 2, 3, 4, 5, 6, 7, 8, 9};
  std::vector<float> mask(18, 1.f);
  std::fill(mask.begin() + 9, mask.end(), 2.f);
  CHECK(run(s, input, mask) == std::vector<double>{45, 90});
}

TEST_CASE("conv cpu: equals the direct seven-loop definition bit for bit") {
  for (const ConvShape& s : {ConvShape{3, 5, 3, 19, 23, 5}, ConvShape{2, 4, 1, 86, 86, 7},
                             ConvShape{1, 16, 4, 40, 40, 7}, ConvShape{2, 7, 2, 9, 8, 1}}) {
    CAPTURE(s.B); CAPTURE(s.M); CAPTURE(s.C); CAPTURE(s.H); CAPTURE(s.W); CAPTURE(s.K);
    const RandomCase r = random_case(s, 7 + s.M);
    CHECK(run(s, r.input, r.mask) == direct(s, r.input, r.mask));
  }
}

TEST_CASE("conv cpu: invalid shapes and sizes throw, naming the shape") {
  const ConvShape good{1, 2, 3, 5, 6, 3};
  std::vector<double> out(good.output_size());
  std::vector<float> in(good.input_size()), mask(good.mask_size());
  auto call = [&](const ConvShape& s, std::size_t dout, std::size_t din, std::size_t dmask) {
    return [s, dout, din, dmask] {
      std::vector<double> o(s.valid() ? s.output_size() + dout : dout);
      std::vector<float> i(s.valid() ? s.input_size() + din : din);
      std::vector<float> k(s.valid() ? s.mask_size() + dmask : dmask);
      conv_forward_cpu(o, i, k, s);
    };
  };
  CHECK_NOTHROW(conv_forward_cpu(out, in, mask, good));
  check_invalid(call({1, 2, 3, 5, 6, 6}, 0, 0, 0), "K=6");     // K > H
  check_invalid(call({1, 2, 3, 7, 4, 5}, 0, 0, 0), "W=4");     // K > W
  check_invalid(call({0, 2, 3, 5, 6, 3}, 0, 0, 0), "B=0");
  check_invalid(call({1, -1, 3, 5, 6, 3}, 0, 0, 0), "M=-1");
  check_invalid(call({1, 2, 0, 5, 6, 3}, 0, 0, 0), "C=0");
  check_invalid(call({1, 2, 3, 5, 6, 0}, 0, 0, 0), "K=0");
  check_invalid(call(good, 1, 0, 0), "output");
  check_invalid(call(good, 0, 1, 0), "input");
  check_invalid(call(good, 0, 0, 1), "mask");
  // A missing element names the shape too.
  check_invalid([&] { conv_forward_cpu(std::span(out).first(out.size() - 1), in, mask, good); },
                "B=1 M=2 C=3 H=5 W=6 K=3");
}

TEST_CASE("conv cpu: the result does not depend on the thread count") {
  const ConvShape s{5, 7, 3, 17, 21, 5};  // 35 planes: uneven over 2 and 7 threads
  const RandomCase r = random_case(s, 2024);
  const std::vector<double> one = run(s, r.input, r.mask, 1);
  for (unsigned threads : {2u, 7u, 0u}) {
    CAPTURE(threads);
    const std::vector<double> many = run(s, r.input, r.mask, threads);
    REQUIRE(many.size() == one.size());
    CHECK(std::memcmp(many.data(), one.data(), one.size() * sizeof(double)) == 0);
  }
}
