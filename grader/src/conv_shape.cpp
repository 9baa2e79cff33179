#include <fmt/core.h>

#include "labkit/conv.h"

namespace labkit {

std::string to_string(const ConvShape& s) {
  return fmt::format("B={} M={} C={} H={} W={} K={}", s.B, s.M, s.C, s.H, s.W, s.K);
}

}  // namespace labkit
