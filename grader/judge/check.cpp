#include "labkit/check.h"

#include <fmt/core.h>

#include <bit>
#include <cmath>
#include <cstdint>

namespace labkit::check {

Tolerance conv_tolerance(const ConvShape& shape, Precision precision) {
  // gamma_k = k u / (1 - k u), the rigorous bound for k roundings (Higham, Accuracy and Stability
  // of Numerical Algorithms, 3.1). A dot product of n terms in any order rounds at most n times per
  // term path (n - 1 additions and a product); one more rounding covers the conversion of the
  // double reference, so k = n + 1 in fp32. fp16 arithmetic also rounds both inputs to half
  // before the product: k = n + 2.
  const double n = double(shape.C) * shape.K * shape.K;
  const bool fp32 = precision == Precision::fp32;
  const double u = fp32 ? 0x1.0p-24 : 0x1.0p-11;
  const double k = fp32 ? n + 1 : n + 2;
  return {k * u / (1 - k * u),
          fmt::format("|err| <= gamma_{:.0f} * sum|x*w|, gamma_k = k*u/(1-k*u), u = 2^-{}", k, fp32 ? 24 : 11)};
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
    const double allowed = tol.rel * std::fabs(bound[i]) + kUnderflowFloor;
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
