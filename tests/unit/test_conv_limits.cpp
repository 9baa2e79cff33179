// The host-side shape checks kernels call before a launch (labkit/conv_limits.h): each accepts the
// network's shapes and refuses an oversized one with a message naming the lab, the shape and the
// limit.
#include <doctest/doctest.h>

#include <stdexcept>
#include <string>

#include "labkit/conv_limits.h"

namespace {

using labkit::ConvShape;

std::string message_of(void (*check)(const ConvShape&), const ConvShape& s) {
  try {
    check(s);
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return {};
}

}  // namespace

TEST_CASE("the network's shapes pass every check") {
  for (const ConvShape s : {ConvShape{10000, 4, 1, 86, 86, 7}, ConvShape{10000, 16, 4, 40, 40, 7}}) {
    CHECK_NOTHROW(labkit::require_grid_limits(s, "lab"));
    CHECK_NOTHROW(labkit::require_int_indexing(s, "lab"));
    CHECK_NOTHROW(labkit::require_constant_mask(s, "lab", 16384));
  }
}

TEST_CASE("grid limits: B or M past 65535") {
  CHECK_THROWS_AS(labkit::require_grid_limits({65536, 4, 1, 86, 86, 7}, "lab"), std::invalid_argument);
  CHECK_THROWS_AS(labkit::require_grid_limits({1, 65536, 1, 8, 8, 3}, "lab"), std::invalid_argument);
  CHECK_NOTHROW(labkit::require_grid_limits({1, 65536, 1, 8, 8, 3}, "lab", false));
}

TEST_CASE("int indexing: a tensor past INT_MAX elements") {
  const std::string m = message_of([](const ConvShape& s) { labkit::require_int_indexing(s, "01-lab"); },
                                   {60000, 16, 4, 100, 100, 7});
  CHECK(m.find("01-lab") != std::string::npos);
  CHECK(m.find("INT_MAX") != std::string::npos);
}

TEST_CASE("constant mask: the message gives both sizes") {
  // 32 maps x 16 channels x 7 x 7 = 25088 floats, past a 64 KiB array of 16384.
  const std::string m = message_of([](const ConvShape& s) { labkit::require_constant_mask(s, "07-atomics", 16384); },
                                   {1, 32, 16, 20, 20, 7});
  CHECK(m.find("07-atomics") != std::string::npos);
  CHECK(m.find("25088 floats") != std::string::npos);
  CHECK(m.find("16384 floats (64 KiB)") != std::string::npos);
}
