#include "grader/judge/check.h"

#include <fmt/core.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <stdexcept>

namespace labkit::check {

namespace {

// A binary format narrower than the fp32 output: p significand bits and subnormal spacing eta.
struct ReducedFormat {
  const char* name;
  int p;       // u = 2^-p
  int log2_eta;
};
// Half's largest value, 65504, bounds nothing here: an input or half partial sum past it is inf,
// and inf fails as non-finite (the grader's inputs stay below 255 * 0.5 per product).
constexpr ReducedFormat kHalf{"half", 11, -24};

// Every rounding in the format, of an input, a product, an FMA or a sum (and a fortiori in fp32),
// gives v(1+d) + e with |d| <= u and |e| <= eta/2 (only below the normal range). So
//   x^ w^ - x w = xw((1+a)(1+b) - 1) + x(1+a) e_w + w(1+b) e_x + e_x e_w,
// and a sum of n products in any order rounds each term at most n times and adds at most 2n - 1
// absolute errors e, each scaled by at most (1+u)^(n-1). Adding up, with sum(|x_j| + |w_j|) <=
// n(X + W): |err| <= ((1+u)^2 (1+gamma_n) - 1) sum|xw| + (1+gamma_n) n eta/2 ((1+u)(X+W) + 2 + eta/2)
// and (1+u)^2 (1+gamma_n) - 1 <= gamma_{n+2}, the old relative rule, kept. Its slack (>= 3u^2
// relative) covers the double reference's own error (about n 2^-53). docs/grading.md, "Reduced
// precision (fp16)", has the steps.
Tolerance reduced_tolerance(const ConvShape& shape, const ReducedFormat& f, double max_x, double max_w) {
  const double n = double(shape.C) * shape.K * shape.K;
  const double u = std::ldexp(1.0, -f.p);
  const double k = n + 2;
  if (k * u >= 1) {
    throw std::invalid_argument(fmt::format(
        "conv_tolerance: {} has n = C*K*K = {:.0f} terms; the {} rounding bound gamma_{:.0f} needs "
        "(n + 2) * 2^-{} < 1", labkit::to_string(shape), n, f.name, k, f.p));
  }
  const double half_eta = std::ldexp(1.0, f.log2_eta - 1);
  const double gamma_n = n * u / (1 - n * u);
  const double abs = (1 + gamma_n) * n * half_eta * ((1 + u) * (max_x + max_w) + 2 + half_eta);
  return {k * u / (1 - k * u),
          fmt::format("|err| <= gamma_{:.0f} * sum|x*w| + {:.3g}, gamma_k = k*u/(1-k*u), u = 2^-{}; "
                      "{:.3g} = (1+gamma_n)*n*2^{}*((1+u)*(max|x| + max|w|) + 2 + 2^{}) for {} "
                      "subnormals, n = {:.0f}, max|x| = {:.4g}, max|w| = {:.4g}",
                      k, abs, f.p, abs, f.log2_eta - 1, f.log2_eta - 1, f.name, n, max_x, max_w),
          abs};
}

// TF32 on tensor cores: each input and weight enters with 10 explicit mantissa bits, rounded to
// nearest (cvt.rna.tf32.f32, |a| <= 2^-11) or, when the kernel hands the tensor core plain fp32,
// truncated by it (|a| < 2^-10): kTf32InputU = 2^-10 covers both. The product of two such values
// is exact in fp32 (22 significant bits). The products are summed in fp32, by the tensor core's
// accumulator (which truncates and aligns a block of products to its largest exponent) or by the
// kernel's float adds: kTf32AccumU = 2^-20, 16 fp32 roundoffs per addition, covers both. Any order:
//   |err| <= ((1 + 2^-10)^2 (1 + gamma_n(2^-20)) - 1) sum|x*w|,
// gamma_n including the double reference's conversion. tf32 and fp32 share fp32's exponent range:
// only values below 2^-126 (flushed by the tensor core) lose anything absolute, at most
// n 2^-126 (X + W), under kUnderflowFloor for the kit's data. docs/grading.md, "Reduced
// precision (tf32)".
constexpr double kTf32InputU = 0x1.0p-10, kTf32AccumU = 0x1.0p-20;

Tolerance tf32_tolerance(const ConvShape& shape) {
  const double n = double(shape.C) * shape.K * shape.K;
  if ((n + 1) * kTf32AccumU >= 1)
    throw std::invalid_argument(fmt::format("conv_tolerance: {} has n = C*K*K = {:.0f} terms, too many for the tf32 "
                                            "rule (n + 1 < 2^20)", labkit::to_string(shape), n));
  const double gamma = (n + 1) * kTf32AccumU / (1 - (n + 1) * kTf32AccumU);
  const double rel = (1 + kTf32InputU) * (1 + kTf32InputU) * (1 + gamma) - 1;
  return {rel,
          fmt::format("|err| <= {:.4g} * sum|x*w| = ((1+2^-10)^2 * (1+gamma_{:.0f}) - 1) * sum|x*w|, gamma_k = "
                      "k*u/(1-k*u), u = 2^-20 (tf32 inputs, rounded or truncated; fp32 sums in any order)",
                      rel, n + 1)};
}

void require_magnitude(double v, const char* what) {
  if (!(v >= 0) || !std::isfinite(v))
    throw std::invalid_argument(fmt::format("conv_tolerance: {} must be finite and >= 0, got {}", what, v));
}

}  // namespace

double max_abs(std::span<const float> values) {
  double m = 0;
  for (const float v : values) {
    if (std::isnan(v)) return std::nan("");
    m = std::max(m, double(std::fabs(v)));
  }
  return m;
}

Tolerance conv_tolerance(const ConvShape& shape, Precision precision, double max_abs_input,
                         double max_abs_mask) {
  require_magnitude(max_abs_input, "max_abs_input (the largest |input| of the case)");
  require_magnitude(max_abs_mask, "max_abs_mask (the largest |mask| of the case)");
  // "any" (a lab free to use any arithmetic) gets the loosest rule, fp16's: it covers tf32 too.
  if (precision == Precision::fp16 || precision == Precision::any) return reduced_tolerance(shape, kHalf, max_abs_input, max_abs_mask);
  if (precision == Precision::tf32) return tf32_tolerance(shape);
  // gamma_k = k u / (1 - k u), the rigorous bound for k roundings (Higham, Accuracy and Stability
  // of Numerical Algorithms, 3.1). A dot product of n terms in any order rounds at most n times per
  // term path (n - 1 additions and a product); one more rounding covers the conversion of the
  // double reference, so k = n + 1. fp32's subnormals (spacing 2^-149) lose at most n * 2^-149
  // absolute, far below kUnderflowFloor: no absolute term.
  const double n = double(shape.C) * shape.K * shape.K;
  const double u = 0x1.0p-24;
  const double k = n + 1;
  return {k * u / (1 - k * u),
          fmt::format("|err| <= gamma_{:.0f} * sum|x*w|, gamma_k = k*u/(1-k*u), u = 2^-{}", k, 24)};
}

// The float map kernel and the double reference evaluate the same functions; the gap measured by
// tests/unit/test_map_cpu.cpp over the whole input range after 1000 iterations is 2.6e-6
// relative. 1e-4 leaves a 38x margin for other float evaluation orders (fused multiply-add,
// sincosf) while catching any wrong class, skipped iteration or lost element (each iteration
// moves a value by at least 1).
Tolerance map_tolerance() { return {kMapRelTolerance, "|err| <= 1e-4 * |expected|"}; }

std::string Layout::coordinates(std::size_t index) const {
  std::vector<std::size_t> c(extents.size());
  for (std::size_t d = extents.size(); d-- > 0;) {
    c[d] = extents[d] ? index % extents[d] : 0;
    index = extents[d] ? index / extents[d] : 0;
  }
  if (!c.empty() && c[0] < outer_index.size()) c[0] = outer_index[c[0]];
  std::string s = "(";
  for (std::size_t d = 0; d < c.size(); ++d)
    s += fmt::format("{}{}={}", d ? ", " : "", names[d], c[d]);
  return s + ")";
}

Layout conv_layout(const ConvShape& s) {
  return {{"b", "m", "h", "w"},
          {std::size_t(s.B), std::size_t(s.M), std::size_t(s.H_out()), std::size_t(s.W_out())},
          {}};
}

Layout map_layout(int dimx, int dimy) {
  return {{"row", "col"}, {std::size_t(dimy), std::size_t(dimx)}, {}};
}

Layout map_layout(int dimx, std::vector<std::size_t> rows) {
  const std::size_t n = rows.size();
  return {{"row", "col"}, {n, std::size_t(dimx)}, std::move(rows)};
}

const char* to_string(Outcome o) {
  switch (o) {
    case Outcome::ok: return "correct";
    case Outcome::size_mismatch: return "wrong output size";
    case Outcome::unwritten: return "output not written";
    case Outcome::nonfinite: return "NaN or inf in the output";
    case Outcome::all_zero: return "output is all zeros";
    case Outcome::wrong_values: return "wrong values";
  }
  return "?";
}

Result compare(std::span<const float> got, std::span<const double> expected,
               std::span<const double> bound, const Tolerance& tol) {
  Result r;
  r.elements = expected.size();
  if (got.size() != expected.size() || bound.size() != expected.size()) {
    r.outcome = Outcome::size_mismatch;
    r.bad = expected.size();
    return r;
  }
  bool got_all_zero = true, expected_all_zero = true;
  for (std::size_t i = 0; i < got.size(); ++i) {
    const float g = got[i];
    const double e = expected[i];
    got_all_zero &= g == 0.0f;
    expected_all_zero &= e == 0.0;
    const double allowed = tol.rel * std::fabs(bound[i]) + tol.abs + kUnderflowFloor;
    bool ok;
    const bool poison = std::bit_cast<std::uint32_t>(g) == 0xFFFFFFFFu;
    if (poison) {
      ++r.unwritten;
      ok = false;
    } else if (!std::isfinite(g)) {
      ++r.nonfinite;
      ok = false;
    } else {
      const double ratio = std::fabs(double(g) - e) / allowed;
      r.worst = std::max(r.worst, ratio);
      ok = ratio <= 1;
    }
    if (!ok) {
      if (r.first.size() < kMaxReported) r.first.push_back({i, g, e, allowed, poison});
      ++r.bad;
    }
  }
  if (r.bad == 0) r.outcome = Outcome::ok;
  else if (got_all_zero && !expected_all_zero) r.outcome = Outcome::all_zero;
  else if (r.unwritten > 0) r.outcome = Outcome::unwritten;
  else if (r.nonfinite > 0) r.outcome = Outcome::nonfinite;
  else r.outcome = Outcome::wrong_values;
  return r;
}

std::string Result::describe(const Layout& layout) const {
  if (passed()) return fmt::format("all {} elements within tolerance (worst {:.2f} of allowed)", elements, worst);
  const double pct = elements ? 100.0 * double(bad) / double(elements) : 100.0;
  std::string s = fmt::format("{}: {} of {} elements wrong ({:.3g}%)", to_string(outcome), bad,
                              elements, pct);
  if (unwritten) s += fmt::format("; {} never written (still the NaN poison the grader fills the output with)", unwritten);
  if (nonfinite) s += fmt::format("; {} NaN/inf computed", nonfinite);
  for (const Mismatch& m : first) {
    if (m.unwritten)
      s += fmt::format("\n    {}: never written, expected {:.7g}", layout.coordinates(m.index), m.expected);
    else
      s += fmt::format("\n    {}: got {:.7g}, expected {:.7g} (allowed error {:.2g})",
                       layout.coordinates(m.index), m.got, m.expected, m.allowed);
  }
  return s;
}

}  // namespace labkit::check
