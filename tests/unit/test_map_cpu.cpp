// The map workload: one step of each class by hand, NaN/inf freedom over the whole input range,
// float against double (the bound every map tolerance is built on), and the CPU reference's
// layout and thread-count independence.
#include <doctest/doctest.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstring>
#include <numbers>
#include <stdexcept>
#include <vector>

#include "labkit/map.h"
#include "grader/core/random.h"
#include "reference/map_workload.h"
#include "reference/parallel.h"

namespace {

using labkit::map_step;
using labkit::map_step_reference;
using std::numbers::pi;

// Float against double over the whole input range, measured with glibc's float functions (see
// the MESSAGE lines of the sweep below). Bound with margin:
constexpr double kFloatVsDouble = 1.0e-5;  // measured: 2.6e-6 after 1000 iterations

}  // namespace

TEST_CASE("map step: one update of each class by hand") {
  // class 0: log(1) = 0, so 1 -> 1 + sqrt(2); log(e) = 1, so e -> e + sqrt(3).
  CHECK(map_step_reference(1.0, 0) == doctest::Approx(1 + std::sqrt(2.0)).epsilon(1e-15));
  CHECK(map_step_reference(std::numbers::e, 0) == doctest::Approx(std::numbers::e + std::sqrt(3.0)).epsilon(1e-15));
  // class 1: cos(pi) = -1 adds 1 (no fixed point); cos(pi/2) = 0 adds sqrt(2).
  CHECK(map_step_reference(pi, 1) == doctest::Approx(pi + 1).epsilon(1e-15));
  CHECK(map_step_reference(pi / 2, 1) == doctest::Approx(pi / 2 + std::sqrt(2.0)).epsilon(1e-15));
  // class 2: sin(3 pi/2) = -1 adds 1; sin(pi/2) = 1 adds sqrt(3).
  CHECK(map_step_reference(1.5 * pi, 2) == doctest::Approx(1.5 * pi + 1).epsilon(1e-15));
  CHECK(map_step_reference(pi / 2, 2) == doctest::Approx(pi / 2 + std::sqrt(3.0)).epsilon(1e-15));
  // class 3: tan(pi/4 * sin v): sin(pi) = 0 adds sqrt(2); sin(pi/2) = 1 adds sqrt(1 + 2) (up to
  // the float constant: 2e-8 relative); sin(3 pi/2) = -1 adds sqrt(-1 + 2) = 1.
  CHECK(map_step_reference(pi, 3) == doctest::Approx(pi + std::sqrt(2.0)).epsilon(1e-15));
  CHECK(map_step_reference(pi / 2, 3) == doctest::Approx(pi / 2 + std::sqrt(3.0)).epsilon(1e-7));
  CHECK(map_step_reference(1.5 * pi, 3) == doctest::Approx(1.5 * pi + 1).epsilon(1e-7));

  // The float step computes the same function.
  CHECK(map_step(1.0f, 0) == doctest::Approx(1 + std::sqrt(2.0)).epsilon(1e-7));
  CHECK(map_step(float(pi / 2), 1) == doctest::Approx(pi / 2 + std::sqrt(2.0)).epsilon(1e-6));
  CHECK(map_step(float(pi / 2), 2) == doctest::Approx(pi / 2 + std::sqrt(3.0)).epsilon(1e-6));
  CHECK(map_step(float(pi), 3) == doctest::Approx(pi + std::sqrt(2.0)).epsilon(1e-6));
}

TEST_CASE("map: every increment is at least 1, so nothing stalls") {
  // The seed's "+ 1" rule stood still at cos v = -1 in float but not in double; this one moves
  // every element by at least 1 per iteration, in both precisions.
  for (int i = 0; i <= 20000; ++i) {
    const double v = 1.0 + 30.0 * i / 20000;  // past the input range: where elements go
    for (int cls = 0; cls < 4; ++cls) {
      CAPTURE(v);
      CAPTURE(cls);
      REQUIRE(map_step_reference(v, cls) - v >= 1.0 - 1e-7);  // float pi/4 is a hair above pi/4
      REQUIRE(double(map_step(float(v), cls)) - double(float(v)) >= 1.0 - 1e-5);
    }
  }
}

TEST_CASE("map: no NaN or inf on [kMapInputMin, kMapInputMax); float within a bound of double") {
  // 100 000 starts evenly over the range, the classes taking turns (25 000 starts each), 1000
  // iterations in float and in double.
  constexpr int kStarts = 100000, kIterations = 1000, kCompareAt = 200;
  const double lo = labkit::kMapInputMin, hi = labkit::kMapInputMax;
  std::atomic<int> nonfinite{0};
  std::vector<double> err200(kStarts, 0.0), err1000(kStarts, 0.0);

  labkit::reference::parallel_for(kStarts, [&](std::size_t i) {
    const int cls = int(i % 4);
    const float start = float(lo + (hi - lo) * double(i) / kStarts);
    float f = start;
    double d = start;
    for (int it = 1; it <= kIterations; ++it) {
      f = map_step(f, cls);
      d = map_step_reference(d, cls);
      if (!std::isfinite(f) || !std::isfinite(d)) {
        ++nonfinite;
        return;
      }
      if (it == kCompareAt) err200[i] = std::abs(f - d) / std::abs(d);
    }
    err1000[i] = std::abs(f - d) / std::abs(d);
  });

  CHECK(nonfinite == 0);
  for (int cls = 0; cls < 4; ++cls) {
    double worst200 = 0, worst1000 = 0;
    for (std::size_t i = cls; i < err200.size(); i += 4) {
      worst200 = std::max(worst200, err200[i]);
      worst1000 = std::max(worst1000, err1000[i]);
    }
    MESSAGE("class " << cls << ": float vs double, max relative error " << worst200
                      << " after 200 iterations, " << worst1000 << " after 1000");
    CHECK(worst200 < kFloatVsDouble);
    CHECK(worst1000 < kFloatVsDouble);
  }
}

TEST_CASE("map cpu: class from the column, dimx not a multiple of 4") {
  // 6 columns: element 6 is row 1, column 0 (class 0), although 6 % 4 == 2.
  constexpr int dimx = 6, dimy = 3, niterations = 3;
  std::vector<float> input(dimx * dimy);
  for (int i = 0; i < dimx * dimy; ++i) input[i] = 1.0f + 0.37f * float(i);
  std::vector<double> output(input.size(), -1.0);
  labkit::reference::map_forward_cpu(output, input, dimx, dimy, niterations);
  for (int r = 0; r < dimy; ++r) {
    for (int c = 0; c < dimx; ++c) {
      double v = input[r * dimx + c];
      for (int it = 0; it < niterations; ++it) v = map_step_reference(v, c % 4);
      CAPTURE(r);
      CAPTURE(c);
      CHECK(output[r * dimx + c] == v);
    }
  }
  // Zero iterations: the input, widened.
  labkit::reference::map_forward_cpu(output, input, dimx, dimy, 0);
  for (std::size_t i = 0; i < input.size(); ++i) CHECK(output[i] == double(input[i]));
}

TEST_CASE("map cpu: invalid sizes throw") {
  std::vector<float> input(12);
  std::vector<double> output(12);
  CHECK_NOTHROW(labkit::reference::map_forward_cpu(output, input, 4, 3, 1));
  CHECK_THROWS_AS(labkit::reference::map_forward_cpu(output, input, 5, 3, 1), std::invalid_argument);
  CHECK_THROWS_AS(labkit::reference::map_forward_cpu(std::span(output).first(11), input, 4, 3, 1),
                  std::invalid_argument);
  CHECK_THROWS_AS(labkit::reference::map_forward_cpu(output, input, -4, -3, 1), std::invalid_argument);
  CHECK_THROWS_AS(labkit::reference::map_forward_cpu(output, input, 4, 3, -1), std::invalid_argument);
}

TEST_CASE("map cpu: the result does not depend on the thread count") {
  constexpr int dimx = 1030, dimy = 37, niterations = 50;
  std::vector<float> input(std::size_t(dimx) * dimy);
  labkit::fill_uniform(input, labkit::kMapInputMin, labkit::kMapInputMax, 99);
  std::vector<double> one(input.size()), many(input.size());
  labkit::reference::map_forward_cpu(one, input, dimx, dimy, niterations, 1);
  for (unsigned threads : {2u, 7u, 0u}) {
    CAPTURE(threads);
    labkit::reference::map_forward_cpu(many, input, dimx, dimy, niterations, threads);
    CHECK(std::memcmp(many.data(), one.data(), one.size() * sizeof(double)) == 0);
  }
}
