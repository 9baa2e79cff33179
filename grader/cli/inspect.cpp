// `labkit inspect FILE...` — what a .npy file holds: dtype, shape, value range, the first values.
// The first thing to run on a fixture or an output that looks wrong: NaN and inf are counted
// apart (they are what a kernel that skips elements or reads out of bounds leaves behind), and
// min/max/mean are over the finite values so that one NaN does not hide the rest.
#include <CLI/CLI.hpp>
#include <fmt/core.h>

#include <cmath>
#include <cstdio>
#include <memory>
#include <new>
#include <span>
#include <string>
#include <vector>

#include "commands.h"
#include "grader/core/exit_codes.h"
#include "grader/io/npy.h"

namespace labkit::cli {
namespace {

constexpr std::size_t kFirstValues = 8;

// One element as its own type prints it: float and half in their shortest exact form, integers
// exactly (a double would round int64 values past 2^53).
template <class T> std::string show(T v) { return fmt::format("{}", v); }
std::string show(std::uint8_t v) { return fmt::format("{}", static_cast<unsigned>(v)); }

template <class T, class ToDouble, class Show>
void print_values(std::span<const T> values, ToDouble to_double, Show show_value) {
  std::size_t finite = 0, nan = 0, pos_inf = 0, neg_inf = 0;
  std::size_t lo = 0, hi = 0;  // indices of the finite min and max
  long double sum = 0;
  for (std::size_t i = 0; i < values.size(); ++i) {
    const double x = to_double(values[i]);
    if (std::isnan(x)) {
      ++nan;
    } else if (std::isinf(x)) {
      ++(x > 0 ? pos_inf : neg_inf);
    } else {
      if (finite == 0 || x < to_double(values[lo])) lo = i;
      if (finite == 0 || x > to_double(values[hi])) hi = i;
      sum += x;
      ++finite;
    }
  }
  if (values.empty()) {
    fmt::print("  (no elements)\n");
    return;
  }
  if (finite > 0)
    fmt::print("  min {}  max {}  mean {:.6g}\n", show_value(values[lo]), show_value(values[hi]),
               static_cast<double>(sum / static_cast<long double>(finite)));
  else
    fmt::print("  min/max/mean: no finite values\n");
  if (finite < values.size())
    fmt::print("  non-finite: {} NaN, {} +inf, {} -inf{}\n", nan, pos_inf, neg_inf,
               finite > 0 ? fmt::format(" (min/max/mean are over the {} finite values)", finite) : "");
  std::string first;
  for (std::size_t i = 0; i < values.size() && i < kFirstValues; ++i) first += " " + show_value(values[i]);
  fmt::print("  first:{}{}\n", first, values.size() > kFirstValues ? " ..." : "");
}

void print_array(const npy::Array& a) {
  const std::size_t n = a.size();
  fmt::print("{}  {}  shape {}  {} element{}\n", a.source, npy::descr(a.dtype), npy::shape_string(a.shape), n,
             n == 1 ? "" : "s");
  const auto plain = [](auto x) { return static_cast<double>(x); };
  const auto show_plain = [](auto x) { return show(x); };
  switch (a.dtype) {
    case npy::DType::f4: print_values(a.as<float>(), plain, show_plain); break;
    case npy::DType::f8: print_values(a.as<double>(), plain, show_plain); break;
    case npy::DType::i4: print_values(a.as<std::int32_t>(), plain, show_plain); break;
    case npy::DType::i8: print_values(a.as<std::int64_t>(), plain, show_plain); break;
    case npy::DType::u1: print_values(a.as<std::uint8_t>(), plain, show_plain); break;
    case npy::DType::f2:
      print_values(
          a.as<std::uint16_t>(), [](std::uint16_t h) { return double{npy::half_to_float(h)}; },
          [](std::uint16_t h) { return show(npy::half_to_float(h)); });
      break;
  }
}

int inspect(const std::vector<std::string>& files) {
  int status = exit_code::kPass;
  bool printed = false;
  for (const std::string& file : files) {
    try {
      const npy::Array a = npy::read(file);
      if (printed) fmt::print("\n");
      print_array(a);
      printed = true;
    } catch (const npy::Error& e) {
      std::fflush(stdout);  // keeps stderr lines in order with the other files' output
      fmt::print(stderr, "labkit inspect: {}\n", e.what());
      status = exit_code::kFail;
    } catch (const std::bad_alloc&) {
      std::fflush(stdout);
      fmt::print(stderr, "labkit inspect: {}: out of memory while reading it\n", file);
      status = exit_code::kFail;
    }
  }
  return status;
}

}  // namespace

void add_inspect(CLI::App& app, int& status) {
  auto* cmd = app.add_subcommand("inspect", "Print .npy files' dtype, shape, value range and first values");
  auto files = std::make_shared<std::vector<std::string>>();
  cmd->add_option("FILE", *files, "one or more .npy files")->required();
  cmd->callback([files, &status] { status = inspect(*files); });
}

}  // namespace labkit::cli
