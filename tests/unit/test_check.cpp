// The grader's correctness rule (grader/judge/check.h): correct fp32 results in any summation order
// pass; zeros, poison, NaN, one wrong element and fp16-rounded inputs fail, each by name. Correct
// fp16 arithmetic (emulated on the CPU, subnormals included) passes the fp16 rule.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <stdexcept>
#include <string>
#include <vector>

#include "grader/judge/check.h"
#include "labkit/map.h"
#include "grader/core/random.h"
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

// Expected output and bound from the reference, as the grader computes them.
void finish(Case& c) {
  const ConvShape& s = c.s;
  c.expected.resize(s.output_size());
  c.bound.resize(s.output_size());
  labkit::reference::conv_forward_cpu(c.expected, c.in, c.mask, s);
  std::vector<float> ai(c.in), am(c.mask);
  for (float& v : ai) v = std::fabs(v);
  for (float& v : am) v = std::fabs(v);
  labkit::reference::conv_forward_cpu(c.bound, ai, am, s);
}

// sprinkle: every third value scaled by 1e-5, so tiny values (half subnormals) sit among normal ones.
struct Range {
  float lo, hi;
  bool sprinkle = false;
};

Case make_case(ConvShape s, std::uint64_t seed, Range in = {-1.0f, 1.0f}, Range mask = {-0.5f, 0.5f}) {
  Case c{s, std::vector<float>(s.input_size()), std::vector<float>(s.mask_size()), {}, {}};
  labkit::fill_uniform(c.in, in.lo, in.hi, seed);
  labkit::fill_uniform(c.mask, mask.lo, mask.hi, seed + 1);
  for (std::size_t i = 0; i < c.in.size(); i += 3) c.in[i] *= in.sprinkle ? 1e-5f : 1.0f;
  for (std::size_t i = 0; i < c.mask.size(); i += 3) c.mask[i] *= mask.sprinkle ? 1e-5f : 1.0f;
  finish(c);
  return c;
}

check::Tolerance tolerance(const Case& c, labkit::Precision p) {
  return check::conv_tolerance(c.s, p, check::max_abs(c.in), check::max_abs(c.mask));
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

// Round to the nearest half, ties to even, subnormals included: what __float2half_rn,
// __floats2half2_rn and the f16 FMA do. 11 significant bits down to 2^-14, below it a fixed spacing
// of 2^-24; from 65520 (the midpoint past 65504) on, inf. Exact: dividing by the spacing is a
// power-of-two scaling, and nearbyint rounds ties to even.
long double round_half(long double v) {
  if (v == 0 || !std::isfinite(v)) return v;
  const long double q = std::ldexp(1.0L, std::max(std::ilogb(v), -14) - 10);
  const long double r = std::nearbyint(v / q) * q;
  return std::fabs(r) > 65504 ? std::copysign(HUGE_VALL, v) : r;
}

float to_half(float x) { return float(round_half(x)); }

// a * b + c rounded once to half, one lane of __hfma2. a, b and c are halves, so a * b is exact in
// long double, and so is the sum while it lies below 2^15: its bits then span 2^-48 (the product
// of the two smallest subnormals) to 2^14, 63 bits, within long double's 64.
float hfma(float a, float b, float c) {
  const long double v = static_cast<long double>(a) * b + c;
  if (std::fabs(v) >= 0x1p15L) throw std::logic_error("hfma emulation: |a*b + c| >= 2^15 would not be exact");
  return float(round_half(v));
}

enum class Fp16Kernel {
  solution,   // solutions/09-fp16: half FMAs over one row p (K terms), each row added into a float
  whole_sum,  // the handout's pitfall, still correct: all C*K*K FMAs in one half accumulator
  hmul_hadd,  // products rounded to half (__hmul), then summed in half (__hadd)
};

// A correct fp16 conv, rounding exactly as the device does: input and mask converted to half once
// (the solution's conversion kernels), then the kernel's own half and float arithmetic.
std::vector<float> fp16_conv(const Case& c, Fp16Kernel kind) {
  const ConvShape& s = c.s;
  std::vector<float> in(c.in.size()), mask(c.mask.size()), out(s.output_size());
  std::transform(c.in.begin(), c.in.end(), in.begin(), to_half);
  std::transform(c.mask.begin(), c.mask.end(), mask.begin(), to_half);
  std::size_t i = 0;
  for (int b = 0; b < s.B; ++b)
    for (int m = 0; m < s.M; ++m)
      for (int h = 0; h < s.H_out(); ++h)
        for (int w = 0; w < s.W_out(); ++w, ++i) {
          float acc = 0, half_sum = 0;
          for (int ch = 0; ch < s.C; ++ch)
            for (int p = 0; p < s.K; ++p) {
              float row = 0;
              for (int q = 0; q < s.K; ++q) {
                const float x = in[((std::size_t(b) * s.C + ch) * s.H + h + p) * s.W + w + q];
                const float k = mask[((std::size_t(m) * s.C + ch) * s.K + p) * s.K + q];
                if (kind == Fp16Kernel::solution) row = hfma(x, k, row);
                else if (kind == Fp16Kernel::whole_sum) half_sum = hfma(x, k, half_sum);
                else half_sum = float(round_half(static_cast<long double>(to_half(x * k)) + half_sum));
              }
              acc += row;  // float addition, as the solution's float accumulators
            }
          out[i] = kind == Fp16Kernel::solution ? acc : half_sum;
        }
  return out;
}

}  // namespace

TEST_CASE("fp32 results in any summation order pass the fp32 tolerance") {
  for (const ConvShape s : {ConvShape{2, 4, 1, 20, 18, 7}, ConvShape{1, 5, 4, 16, 16, 7}, ConvShape{2, 3, 3, 9, 12, 3}}) {
    const Case c = make_case(s, 11);
    const auto tol = tolerance(c, labkit::Precision::fp32);
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
    const auto r32 = check::compare(got, c.expected, c.bound, tolerance(c, labkit::Precision::fp32));
    CHECK(r32.outcome == check::Outcome::wrong_values);
    CHECK(r32.bad > r32.elements / 2);  // not a borderline call: most elements are out
    CHECK(check::compare(got, c.expected, c.bound, tolerance(c, labkit::Precision::fp16)).passed());
  }
}

TEST_CASE("zeros, poison, NaN and one wrong element each fail by name, with coordinates") {
  const ConvShape s{2, 3, 2, 10, 9, 3};
  const Case c = make_case(s, 13);
  const auto tol = tolerance(c, labkit::Precision::fp32);
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

TEST_CASE("the fp32 rule is unchanged: gamma_{n+1}, no absolute term, whatever the maxima") {
  for (const ConvShape s : {ConvShape{1, 1, 1, 5, 5, 1}, ConvShape{2, 16, 4, 40, 40, 7}}) {
    const double k = double(s.C) * s.K * s.K + 1, u = 0x1.0p-24;
    for (const double big : {0.0, 1.0, 255.0}) {
      const auto tol = check::conv_tolerance(s, labkit::Precision::fp32, big, big / 2);
      CHECK(tol.rel == k * u / (1 - k * u));
      CHECK(tol.abs == 0);
      CHECK(tol.rule == "|err| <= gamma_" + std::to_string(int(k)) + " * sum|x*w|, gamma_k = k*u/(1-k*u), u = 2^-24");
    }
  }
  const ConvShape s{1, 1, 1, 5, 5, 1};
  CHECK_THROWS_AS(check::conv_tolerance(s, labkit::Precision::fp16, -1.0, 0.5), std::invalid_argument);
  CHECK_THROWS_AS(check::conv_tolerance(s, labkit::Precision::fp32, 1.0, std::nan("")), std::invalid_argument);
  CHECK_THROWS_AS(check::conv_tolerance({1, 1, 42, 7, 7, 7}, labkit::Precision::fp16, 1.0, 0.5), std::invalid_argument);
  CHECK(check::max_abs(std::vector<float>{0.5f, -3.0f, 2.0f}) == 3.0);
  CHECK(std::isnan(check::max_abs(std::vector<float>{0.5f, std::nanf("")})));
}

TEST_CASE("the half rounding emulation agrees with the compiler's _Float16, subnormals included") {
#ifdef __FLT16_MAX__
  std::vector<float> v(200000);
  labkit::fill_uniform(v, -1.0f, 1.0f, 21);
  for (std::size_t i = 0; i < v.size(); ++i) v[i] = std::ldexp(v[i], int(i % 48) - 30);  // 2^-30 .. 2^17
  v.insert(v.end(), {0x1p-25f, 0x1.8p-25f, 0x1p-26f, 0x1.8p-24f, 0x1.ffcp-15f, 0x1.ffep-15f, 65504.0f, 65519.0f, 65520.0f});
  int differ = 0;
  for (const float x : v) differ += to_half(x) != float(static_cast<_Float16>(x));
  CHECK(differ == 0);
#else
  MESSAGE("no _Float16 in this compiler: the emulation is checked against known values only");
#endif
  CHECK(to_half(0x1p-25f) == 0.0f);          // a tie between 0 and 2^-24: to even, 0
  CHECK(to_half(0x1.8p-24f) == 0x1p-23f);    // a tie between 1 and 2 units of 2^-24: to even, 2
  CHECK(to_half(3.5e-6f) == 59 * 0x1p-24f);  // a subnormal: 3.5e-6 / 2^-24 = 58.7
  CHECK(std::isinf(to_half(65520.0f)));
}

namespace {

// grader/runner/grade_conv.cpp's random_cases(): the shape draws and the data of case
// random-<index>, so a failing run's seed replays here, on the CPU.
Case grader_random_case(std::uint64_t seed, int index) {
  labkit::SplitMix64 rng(labkit::seed_for(seed, "random shapes"));
  auto pick = [&](int lo, int hi) { return lo + int(rng.next() % std::uint64_t(hi - lo + 1)); };
  constexpr int kKs[] = {1, 3, 5, 7};
  ConvShape s{};
  for (int i = 0; i < index; ++i) {
    const int K = kKs[rng.next() % 4];
    s = ConvShape{pick(1, 4), pick(1, 24), pick(1, 4), pick(K, 72), pick(K, 72), K};
  }
  const std::string name = "random-" + std::to_string(index);
  Case c{s, std::vector<float>(s.input_size()), std::vector<float>(s.mask_size()), {}, {}};
  labkit::fill_uniform(c.in, -1.0f, 1.0f, labkit::seed_for(seed, name + "/input"));
  labkit::fill_uniform(c.mask, -0.5f, 0.5f, labkit::seed_for(seed, name + "/mask"));
  finish(c);
  return c;
}

}  // namespace

TEST_CASE("fp16: the 09 solution's failing case (seed 18313507597138450638) passes by the absolute term") {
  const Case c = grader_random_case(18313507597138450638ull, 3);
  REQUIRE(labkit::to_string(c.s) == "B=4 M=16 C=1 H=19 W=27 K=1");
  const auto got = fp16_conv(c, Fp16Kernel::solution);
  const auto tol = tolerance(c, labkit::Precision::fp16);
  auto old_rule = tol;
  old_rule.abs = 0;  // the rule before: gamma_{n+2} * sum|x*w| alone
  const auto before = check::compare(got, c.expected, c.bound, old_rule);
  CHECK(before.outcome == check::Outcome::wrong_values);
  CHECK(before.bad == 8);  // the 8 of 32832 the device run reported
  REQUIRE(!before.first.empty());
  const check::Mismatch& m = before.first.front();
  CHECK(before.describe(check::conv_layout(c.s)).find("(b=1, m=11, h=1, w=7)") != std::string::npos);
  CHECK(m.got == doctest::Approx(-3.5167e-06).epsilon(1e-4));
  CHECK(m.expected == doctest::Approx(-3.5005e-06).epsilon(1e-4));
  CHECK(m.allowed == doctest::Approx(5.1e-09).epsilon(0.01));
  // The product x^ w^ = -3.5e-6 lies below half's normal range (2^-14): the FMA rounds it to a
  // multiple of 2^-24, an absolute error up to 2^-25 = 3e-8, where gamma_3 * |x w| is 5e-9.
  CHECK(tol.abs == doctest::Approx(1.04e-7).epsilon(0.01));
  CHECK(tol.rule.find("gamma_3 * sum|x*w| + 1.04e-07,") != std::string::npos);
  const auto after = check::compare(got, c.expected, c.bound, tol);
  CHECK(after.passed());
  const double err = std::fabs(double(m.got) - m.expected), allowed = m.allowed + tol.abs;
  MESSAGE("(b=1, m=11, h=1, w=7): |err| " << err << ", old allowed " << m.allowed << ", new allowed "
          << allowed << " (" << err / allowed << " of it); worst element " << after.worst << " of allowed");
}

// Random shapes (K 1 to 7, C 1 to 4) over every pair of input and mask ranges, tiny values
// included: `rounds` rounds of 15 cases, the same ones for a given seed.
std::vector<Case> range_sweep(std::uint64_t seed, int rounds) {
  const Range inputs[] = {{-1, 1}, {0, 255}, {0, 4}, {-2e-5f, 2e-5f}, {-1, 1, true}};
  const Range masks[] = {{-0.5f, 0.5f}, {-2e-5f, 2e-5f}, {-0.5f, 0.5f, true}};
  constexpr int kKs[] = {1, 3, 5, 7};
  labkit::SplitMix64 rng(seed);
  auto pick = [&](int lo, int hi) { return lo + int(rng.next() % std::uint64_t(hi - lo + 1)); };
  std::vector<Case> cases;
  for (int round = 0; round < rounds; ++round)
    for (const Range& in : inputs)
      for (const Range& mask : masks) {
        const int K = kKs[(round + int(cases.size())) % 4];
        cases.push_back(make_case({pick(1, 2), pick(1, 5), pick(1, 4), pick(K, K + 10), pick(K, K + 10), K},
                                  rng.next(), in, mask));
      }
  return cases;
}

TEST_CASE("fp16: correct fp16 kernels pass on random shapes, ranges and tiny values") {
  double worst = 0;
  int cases = 0, old_rule_failures = 0;
  for (const Case& c : range_sweep(2024, 8)) {
    const auto tol = tolerance(c, labkit::Precision::fp16);
    auto old_rule = tol;
    old_rule.abs = 0;
    for (Fp16Kernel kind : {Fp16Kernel::solution, Fp16Kernel::whole_sum, Fp16Kernel::hmul_hadd}) {
      const auto got = fp16_conv(c, kind);
      const auto r = check::compare(got, c.expected, c.bound, tol);
      CAPTURE(labkit::to_string(c.s));
      CAPTURE(check::max_abs(c.in));
      CAPTURE(check::max_abs(c.mask));
      CAPTURE(int(kind));
      CHECK(r.passed());
      worst = std::max(worst, r.worst);
      old_rule_failures += !check::compare(got, c.expected, c.bound, old_rule).passed();
    }
    ++cases;
  }
  CHECK(old_rule_failures > 0);  // the sweep reaches the subnormal range the old rule missed
  MESSAGE(cases << " cases x 3 fp16 kernels: worst " << worst << " of allowed; " << old_rule_failures
                << " runs fail the rule without the absolute term");
}

TEST_CASE("fp16 test labs still fail: fp16-rounding and a half-rounded output under the fp32 rule") {
  std::vector<Case> cases{grader_random_case(18313507597138450638ull, 3),
                          make_case({2, 4, 1, 30, 30, 7}, 31, {0, 255}), make_case({1, 16, 4, 20, 20, 7}, 32, {0, 4})};
  for (const Case& c : cases) {
    CAPTURE(labkit::to_string(c.s));
    // tests/labs/fp16-rounding (an fp32 lab): half-rounded x and w, float products and sum.
    const auto rounded_inputs = float_conv(c, Order::forward, to_half);
    const auto r = check::compare(rounded_inputs, c.expected, c.bound, tolerance(c, labkit::Precision::fp32));
    CHECK(r.outcome == check::Outcome::wrong_values);
    CHECK(r.bad > r.elements / 2);
    // A plain fp32 conv whose result is rounded to half at the end.
    auto rounded_output = float_conv(c, Order::forward, identity);
    for (float& v : rounded_output) v = to_half(v);
    const auto r_out = check::compare(rounded_output, c.expected, c.bound, tolerance(c, labkit::Precision::fp32));
    CHECK(r_out.outcome == check::Outcome::wrong_values);
    CHECK(r_out.bad > r_out.elements / 4);  // the case fails; elements small by cancellation may not
    MESSAGE(labkit::to_string(c.s) << ": fp32 rule fails " << r.bad << " (fp16-rounding) and " << r_out.bad
            << " (half-rounded output) of " << r.elements << " elements");
    CHECK(check::compare(rounded_output, c.expected, c.bound, tolerance(c, labkit::Precision::fp16)).passed());
  }
}

namespace {

std::uint32_t bits_of(float x) {
  std::uint32_t b;
  std::memcpy(&b, &x, sizeof b);
  return b;
}
float from_bits(std::uint32_t b) {
  float x;
  std::memcpy(&x, &b, sizeof x);
  return x;
}
// To tf32 (10 explicit mantissa bits) as cvt.rna.tf32.f32 does: to nearest, ties away from zero.
float tf32_rna(float x) { return from_bits((bits_of(x) + 0x1000u) & ~0x1FFFu); }
// As a tensor core reads a plain fp32 value: the low 13 bits dropped.
float tf32_rz(float x) { return from_bits(bits_of(x) & ~0x1FFFu); }
// bf16 (7 explicit mantissa bits), truncated: coarser than tf32.
float bf16_rz(float x) { return from_bits(bits_of(x) & ~0xFFFFu); }
// A float toward zero, as a truncating accumulator rounds.
float rz(long double v) {
  float f = float(v);
  if (std::fabs(static_cast<long double>(f)) > std::fabs(v)) f = std::nextafter(f, 0.0f);
  return f;
}

enum class Tf32Kernel {
  float_sum,    // tf32 inputs (rna), exact products, a float sum: wmma fragments summed by the kernel
  tensor_core,  // inputs truncated (plain fp32 handed to the MMA), products summed in blocks of 8,
                // each block and each addition to the accumulator truncated toward zero
};

std::vector<float> tf32_conv(const Case& c, Tf32Kernel kind, float (*round)(float) = nullptr) {
  const ConvShape& s = c.s;
  auto in_round = round ? round : kind == Tf32Kernel::float_sum ? tf32_rna : tf32_rz;
  std::vector<float> out(s.output_size());
  std::size_t i = 0;
  for (int b = 0; b < s.B; ++b)
    for (int m = 0; m < s.M; ++m)
      for (int h = 0; h < s.H_out(); ++h)
        for (int w = 0; w < s.W_out(); ++w, ++i) {
          std::vector<float> terms;  // each exact in float: two 11-bit significands
          for (int ch = 0; ch < s.C; ++ch)
            for (int p = 0; p < s.K; ++p)
              for (int q = 0; q < s.K; ++q)
                terms.push_back(in_round(c.in[((std::size_t(b) * s.C + ch) * s.H + h + p) * s.W + w + q]) *
                                in_round(c.mask[((std::size_t(m) * s.C + ch) * s.K + p) * s.K + q]));
          float acc = 0;
          if (kind == Tf32Kernel::float_sum) {
            for (float t : terms) acc += t;
          } else {
            for (std::size_t k = 0; k < terms.size(); k += 8) {
              long double block = 0;
              for (std::size_t j = k; j < std::min(terms.size(), k + 8); ++j) block += terms[j];
              acc = rz(static_cast<long double>(acc) + rz(block));
            }
          }
          out[i] = acc;
        }
  return out;
}

}  // namespace

TEST_CASE("tf32: tensor-core arithmetic passes on random shapes and ranges; the fp32 rule would fail it") {
  double worst = 0;
  int cases = 0, fp32_rule_failures = 0;
  for (const Case& c : range_sweep(2025, 6)) {
    for (Tf32Kernel kind : {Tf32Kernel::float_sum, Tf32Kernel::tensor_core}) {
      const auto got = tf32_conv(c, kind);
      const auto r = check::compare(got, c.expected, c.bound, tolerance(c, labkit::Precision::tf32));
      CAPTURE(labkit::to_string(c.s));
      CAPTURE(check::max_abs(c.in));
      CAPTURE(int(kind));
      CHECK(r.passed());
      worst = std::max(worst, r.worst);
      fp32_rule_failures += !check::compare(got, c.expected, c.bound, tolerance(c, labkit::Precision::fp32)).passed();
    }
    ++cases;
  }
  CHECK(fp32_rule_failures > cases);  // most runs: tf32 needs its own class
  MESSAGE(cases << " cases x 2 tf32 kernels: worst " << worst << " of allowed; " << fp32_rule_failures
                << " runs fail the fp32 rule");
}

TEST_CASE("tf32: the rule is about 0.2% of sum|x*w| for conv2, and bf16 inputs fail it") {
  const Case conv2 = make_case({1, 16, 4, 12, 12, 7}, 41);
  const auto tol = tolerance(conv2, labkit::Precision::tf32);
  CHECK(tol.rel == doctest::Approx(0.00214).epsilon(0.02));
  CHECK(tol.abs == 0);
  CHECK(tol.rule.find("tf32") != std::string::npos);
  CHECK(labkit::to_string(labkit::Precision::tf32) == std::string("tf32"));
  // One product per output (C = 1, K = 1): nothing averages out, so inputs coarser than tf32 show.
  const Case one = make_case({2, 8, 1, 20, 20, 1}, 42);
  const auto r = check::compare(tf32_conv(one, Tf32Kernel::float_sum, bf16_rz), one.expected, one.bound,
                                tolerance(one, labkit::Precision::tf32));
  CHECK(r.outcome == check::Outcome::wrong_values);
  CHECK(r.bad > r.elements / 2);
  // The same case in tf32 passes, truncated or rounded.
  CHECK(check::compare(tf32_conv(one, Tf32Kernel::tensor_core), one.expected, one.bound,
                       tolerance(one, labkit::Precision::tf32)).passed());
}
