// labkit/conv_limits.h — shape checks for kernels laid out like the baseline.
//
// Contract
//   * require_grid_limits(s, who, check_maps): the baseline's grid puts the images in grid.z and,
//     when check_maps, the output maps in grid.y; both are limited to 65535. Throws
//     std::invalid_argument("<who>: ... <shape>") when B (or M) is larger.
//   * require_int_indexing(s, who): kernels that index with int need every tensor's element count
//     to fit; throws std::invalid_argument naming who and the shape when one does not.
//   * require_constant_mask(s, who, capacity): a mask copied into a __constant__ array of
//     `capacity` floats must fit; throws std::invalid_argument with both sizes when it does not.
// Call them on the host before a launch: a clear message instead of a launch error or a wrong
// answer from an overflowed index.
#pragma once

#include <climits>
#include <stdexcept>
#include <string>

#include "labkit/conv.h"

namespace labkit {

inline void require_grid_limits(const ConvShape& s, const std::string& who, bool check_maps = true) {
  if (s.B > 65535 || (check_maps && s.M > 65535)) {
    throw std::invalid_argument(who + (check_maps ? ": B and M must be <= 65535 (grid.z and grid.y), got "
                                                  : ": B must be <= 65535 (grid.z), got ") +
                                to_string(s));
  }
}

inline void require_int_indexing(const ConvShape& s, const std::string& who) {
  if (s.input_size() > INT_MAX || s.output_size() > INT_MAX || s.mask_size() > INT_MAX) {
    throw std::invalid_argument(who + ": a tensor of " + to_string(s) +
                                " has more than INT_MAX elements (the kernel indexes with int)");
  }
}

inline void require_constant_mask(const ConvShape& s, const std::string& who, std::size_t capacity) {
  if (s.mask_size() > capacity) {
    throw std::invalid_argument(who + ": the mask of " + to_string(s) + " has " + std::to_string(s.mask_size()) +
                                " floats; the __constant__ array holds " + std::to_string(capacity) + " floats (" +
                                std::to_string(capacity * sizeof(float) / 1024) + " KiB)");
  }
}

}  // namespace labkit
