// The counter check's judgment (grader/cli/counter_rule.h): a share of the multiply-adds with a
// floor (labs 09 and 12), a ratio of two counters with a ceiling (lab 14), counts no run makes.
#include <doctest/doctest.h>

#include "grader/cli/counter_rule.h"

namespace {

using labkit::CounterEvidence;
using labkit::cli::read_counter;
using labkit::ncu::Kernel;

Kernel kernel(std::map<std::string, double> values) {
  Kernel k;
  k.name = "conv";
  k.values = std::move(values);
  return k;
}

CounterEvidence floor_of_macs() {  // lab 09's
  CounterEvidence c;
  c.name = "fp16 multiply-adds";
  c.metrics = {"hfma.sum", "hmul.sum"};
  c.per_count = 2;
  c.min_fraction = 0.25;
  return c;
}

CounterEvidence conflicts() {  // lab 14's
  CounterEvidence c;
  c.name = "shared-load bank conflicts";
  c.metrics = {"conflicts.sum"};
  c.over = {"wavefronts.sum"};
  c.min_fraction = 0;
  c.max_fraction = 0.1;
  return c;
}

}  // namespace

TEST_CASE("a floor over the multiply-adds: the metrics summed over every kernel, times per_count") {
  const std::vector<Kernel> ks = {kernel({{"hfma.sum", 300}}), kernel({{"hmul.sum", 200}, {"other", 1e9}})};
  const auto r = read_counter(floor_of_macs(), ks, 2000);
  REQUIRE(r.known);
  CHECK(r.count == 500);
  CHECK(r.base == 2000);
  CHECK(r.fraction == doctest::Approx(0.5));
  CHECK(r.ok);
  CHECK_FALSE(r.forged);
  CHECK(r.summary == "fp16 multiply-adds covers 50% of the multiply-adds");
  const auto low = read_counter(floor_of_macs(), {kernel({{"hfma.sum", 64}})}, 2000);
  CHECK_FALSE(low.ok);
  CHECK(low.fraction == doctest::Approx(0.064));
  CHECK(low.failure == "fp16 multiply-adds executed covers 6.4% of the conv's multiply-adds in the profiled calls "
                       "(at least 25% expected)");
  CHECK(low.why.find("a branch never taken") != std::string::npos);
}

TEST_CASE("a ceiling on a ratio of two counters: conflicts over wavefronts, not over the multiply-adds") {
  // The skeleton's 8-way conflicts: 7 of every 8 window-read wavefronts (1372 of 1666 with the weights).
  const std::vector<Kernel> skeleton = {kernel({{"conflicts.sum", 1372}, {"wavefronts.sum", 1666}})};
  const auto bad = read_counter(conflicts(), skeleton, 1e12);
  REQUIRE(bad.known);
  CHECK(bad.base == 1666);
  CHECK(bad.fraction == doctest::Approx(1372.0 / 1666));
  CHECK_FALSE(bad.ok);
  CHECK_FALSE(bad.forged);
  CHECK(bad.summary == "shared-load bank conflicts is 82% of wavefronts.sum (at most 10%)");
  CHECK(bad.failure == "shared-load bank conflicts executed is 82.4% of wavefronts.sum in the profiled calls "
                       "(at most 10% allowed)");
  CHECK(bad.why.find("still do what this lab's technique removes") != std::string::npos);
  // Conflict-free, summed over two kernels; a few stray conflicts stay under the ceiling.
  const auto good = read_counter(conflicts(), {kernel({{"conflicts.sum", 3}, {"wavefronts.sum", 294}}),
                                               kernel({{"wavefronts.sum", 6}})}, 1e12);
  CHECK(good.ok);
  CHECK(good.fraction == doctest::Approx(0.01));
  CHECK(good.summary == "shared-load bank conflicts is 1% of wavefronts.sum (at most 10%)");
  // At the ceiling is still fine; a floor can sit beside the ceiling.
  CHECK(read_counter(conflicts(), {kernel({{"conflicts.sum", 10}, {"wavefronts.sum", 100}})}, 1).ok);
  CounterEvidence band = conflicts();
  band.min_fraction = 0.05;
  CHECK_FALSE(read_counter(band, {kernel({{"conflicts.sum", 1}, {"wavefronts.sum", 100}})}, 1).ok);
  CHECK(read_counter(band, {kernel({{"conflicts.sum", 1}, {"wavefronts.sum", 100}})}, 1).failure ==
        "shared-load bank conflicts executed is 1% of wavefronts.sum in the profiled calls (at least 5% expected)");
}

TEST_CASE("a floor of a few wavefronts per multiply-add prints its small shares") {
  CounterEvidence c;
  c.name = "shared-load wavefronts";
  c.metrics = {"wavefronts.sum"};
  c.min_fraction = 0.00025;
  const auto r = read_counter(c, {kernel({{"wavefronts.sum", 98}})}, 10000);
  CHECK(r.ok);
  CHECK(r.summary == "shared-load wavefronts covers 0.98% of the multiply-adds");
  const auto token = read_counter(c, {kernel({{"wavefronts.sum", 1}})}, 1e6);
  CHECK_FALSE(token.ok);
  CHECK(token.failure ==
        "shared-load wavefronts executed covers 0.0001% of the conv's multiply-adds in the profiled calls (at least "
        "0.025% expected)");
}

TEST_CASE("metrics no kernel reported: not known, naming the list (numerator or denominator)") {
  const auto none = read_counter(conflicts(), {kernel({{"wavefronts.sum", 5}})}, 1);
  CHECK_FALSE(none.known);
  CHECK(none.missing == "conflicts.sum");
  const auto no_base = read_counter(conflicts(), {kernel({{"conflicts.sum", 0}})}, 1);
  CHECK_FALSE(no_base.known);
  CHECK(no_base.missing == "wavefronts.sum");
  CHECK_FALSE(read_counter(floor_of_macs(), {}, 100).known);
}

TEST_CASE("counts no run makes are forged: far above the base, or a part of nothing") {
  CHECK(read_counter(floor_of_macs(), {kernel({{"hfma.sum", 65 * 1000}})}, 2000).forged);  // 65x the MACs
  CHECK_FALSE(read_counter(floor_of_macs(), {kernel({{"hfma.sum", 63 * 1000}})}, 2000).forged);
  const auto nothing = read_counter(conflicts(), {kernel({{"conflicts.sum", 5}, {"wavefronts.sum", 0}})}, 1);
  CHECK(nothing.forged);
  CHECK_FALSE(nothing.ok);
  // No shared loads at all: no conflicts either, and nothing forged (lab 14's floor counter catches it).
  const auto empty = read_counter(conflicts(), {kernel({{"conflicts.sum", 0}, {"wavefronts.sum", 0}})}, 1);
  CHECK_FALSE(empty.forged);
  CHECK(empty.fraction == 0);
  CHECK(empty.ok);
}
