// The grader's correctness rule (labkit/check.h): correct fp32 results in any summation order
// pass; zeros, poison, NaN, one wrong element and fp16-rounded inputs fail, each by name.
#include <doctest/doctest.h>

#include <cmath>
#include <cstring>
#include <vector>

#include "labkit/check.h"
#include "labkit/map.h"
#include "labkit/random.h"
#include "reference/conv_reference.h"
#include "reference/map_workload.h"

namespace {

using labkit::ConvShape;
namespace check = labkit::check;

struct Case {
  ConvShape s;
  std::vector<float> in, mask;
  std::vector<double> expected, bound;
};

Case make_case(ConvShape s, std::uint64_t seed) {
  Case c{s, std::vector<float>(s.input_size()), std::vector<float>(s.mask_size()), {}, {}};
  labkit::fill_uniform(c.in, -1.0f, 1.0f, seed);
  labkit::fill_uniform(c.mask, -0.5f, 0.5f, seed + 1);
  c.expected.resize(s.output_size());
  c.bound.resize(s.output_size());
  labkit::reference::conv_forward_cpu(c.expected, c.in, c.mask, s);
  std::vector<float> ai(c.in), am(c.mask);
  for (float& v : ai) v = std::fabs(v);
  for (float& v : am) v = std::fabs(v);
  labkit::reference::conv_forward_cpu(c.bound, ai, am, s);
  return c;
}

enum class Order { forward, backward, pairwise_by_channel };

// A float32 conv, as a kernel would compute it, in a chosen summation order; `round` is applied
// to every input and mask value first (identity, or a round trip through fp16).
template <class Round>
std::vector<float> float_conv(const Case& c, Order order, Round round) {
  const ConvShape& s = c.s;
  std::vector<float> out(s.output_size());
  std::size_t i = 0;
  for (int b = 0; b < s.B; ++b)
    for (int m = 0; m < s.M; ++m)
      for (int h = 0; h < s.H_out(); ++h)
        for (int w = 0; w < s.W_out(); ++w, ++i) {
          std::vector<float> terms;
          for (int ch = 0; ch < s.C; ++ch)
            for (int p = 0; p < s.K; ++p)
              for (int q = 0; q < s.K; ++q)
                terms.push_back(round(c.in[((std::size_t(b) * s.C + ch) * s.H + h + p) * s.W + w + q]) *
                                round(c.mask[((std::size_t(m) * s.C + ch) * s.K + p) * s.K + q]));
          float acc = 0;
          if (order == Order::forward) {
            for (float t : terms) acc += t;
          } else if (order == Order::backward) {
            for (auto t = terms.rbegin(); t != terms.rend(); ++t) acc += *t;
          } else {  // per-channel partial sums, then added: what an atomics or tree lab does
            const std::size_t per = terms.size() / s.C;
            for (int ch = 0; ch < s.C; ++ch) {
              float part = 0;
              for (std::size_t k = 0; k < per; ++k) part += terms[ch * per + k];
              acc += part;
            }
          }
          out[i] = acc;
        }
  return out;
}

float identity(float x) { return x; }

// Round to the nearest half-precision value (11 significant bits), as __float2half does for
// values in the normal range.
float to_half(float x) {
  int e;
  const float m = std::frexp(x, &e);
  return std::ldexp(std::nearbyint(std::ldexp(m, 11)), e - 11);
}

}  // namespace

TEST_CASE("fp32 results in any summation order pass the fp32 tolerance") {
  for (const ConvShape s : {ConvShape{2, 4, 1, 20, 18, 7}, ConvShape{1, 5, 4, 16, 16, 7}, ConvShape{2, 3, 3, 9, 12, 3}}) {
    const Case c = make_case(s, 11);
    const auto tol = check::conv_tolerance(s, labkit::Precision::fp32);
    for (Order o : {Order::forward, Order::backward, Order::pairwise_by_channel}) {
      const auto r = check::compare(float_conv(c, o, identity), c.expected, c.bound, tol);
      CHECK(r.passed());
      CHECK(r.worst < 0.5);  // a comfortable margin: the bound is a worst case
    }
  }
}

TEST_CASE("fp16-rounded inputs fail the fp32 tolerance and pass the fp16 one") {
  for (const ConvShape s : {ConvShape{2, 4, 1, 30, 30, 7}, ConvShape{1, 16, 4, 20, 20, 7}}) {
    const Case c = make_case(s, 12);
    const auto got = float_conv(c, Order::forward, to_half);
    const auto r32 = check::compare(got, c.expected, c.bound, check::conv_tolerance(s, labkit::Precision::fp32));
    CHECK(r32.outcome == check::Outcome::wrong_values);
    CHECK(r32.bad > r32.elements / 2);  // not a borderline call: most elements are out
    CHECK(check::compare(got, c.expected, c.bound, check::conv_tolerance(s, labkit::Precision::fp16)).passed());
  }
}

TEST_CASE("zeros, poison, NaN and one wrong element each fail by name, with coordinates") {
  const ConvShape s{2, 3, 2, 10, 9, 3};
  const Case c = make_case(s, 13);
  const auto tol = check::conv_tolerance(s, labkit::Precision::fp32);
  const auto layout = check::conv_layout(s);
  auto good = float_conv(c, Order::forward, identity);

  const auto zeros = check::compare(std::vector<float>(s.output_size(), 0.0f), c.expected, c.bound, tol);
  CHECK(zeros.outcome == check::Outcome::all_zero);

  auto partial = good;
  std::memset(partial.data() + partial.size() / 2, 0xFF, (partial.size() - partial.size() / 2) * sizeof(float));
  const auto unwritten = check::compare(partial, c.expected, c.bound, tol);
  CHECK(unwritten.outcome == check::Outcome::unwritten);
  CHECK(unwritten.unwritten == partial.size() - partial.size() / 2);
  CHECK(unwritten.describe(layout).find("never written") != std::string::npos);

  auto with_nan = good;
  with_nan[7] = std::nanf("");
  const auto nan = check::compare(with_nan, c.expected, c.bound, tol);
  CHECK(nan.outcome == check::Outcome::nonfinite);
  CHECK(nan.nonfinite == 1);

  auto one_off = good;
  const std::size_t idx = ((1 * s.M + 2) * s.H_out() + 3) * s.W_out() + 4;  // (b=1, m=2, h=3, w=4)
  one_off[idx] += 1e-3f * float(std::fabs(c.bound[idx]));
  const auto wrong = check::compare(one_off, c.expected, c.bound, tol);
  CHECK(wrong.outcome == check::Outcome::wrong_values);
  CHECK(wrong.bad == 1);
  REQUIRE(wrong.first.size() == 1);
  CHECK(wrong.describe(layout).find("(b=1, m=2, h=3, w=4)") != std::string::npos);

  CHECK(check::compare(good, c.expected, c.bound, tol).passed());
  CHECK(check::compare(std::vector<float>(3), c.expected, c.bound, tol).outcome == check::Outcome::size_mismatch);
}

TEST_CASE("map: the float workload passes, one iteration short fails") {
  const int dimx = 7, dimy = 3, iters = 200;
  std::vector<float> in(dimx * dimy);
  labkit::fill_uniform(in, labkit::kMapInputMin, labkit::kMapInputMax, 5);
  std::vector<double> expected(in.size());
  labkit::reference::map_forward_cpu(expected, in, dimx, dimy, iters);
  auto run = [&](int n) {
    std::vector<float> out(in);
    for (std::size_t i = 0; i < out.size(); ++i)
      for (int k = 0; k < n; ++k) out[i] = labkit::map_step(out[i], int(i % dimx) % 4);
    return out;
  };
  const auto tol = check::map_tolerance();
  CHECK(check::compare(run(iters), expected, expected, tol).passed());
  const auto short_one = check::compare(run(iters - 1), expected, expected, tol);
  CHECK(short_one.bad == in.size());
  CHECK(check::map_layout(dimx, dimy).coordinates(9) == "(row=1, col=2)");
  CHECK(check::map_layout(dimx, std::vector<std::size_t>{0, 128, 4095}).coordinates(9) == "(row=128, col=2)");
}
