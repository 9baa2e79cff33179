// grader/protocol/host_digest.h — the digest of fresh.h over a host array, on several threads:
// the harness seals a layer-timed output with it.
#pragma once

#include <bit>
#include <cstdint>
#include <span>
#include <vector>

#include "grader/protocol/chunks.h"
#include "grader/protocol/fresh.h"

namespace labkit::fresh {

inline std::uint64_t host_digest(std::span<const float> data) {
  std::vector<std::uint64_t> part(chunk_count(data.size()), 0);
  for_chunks(data.size(), [&](std::size_t first, std::size_t last, std::size_t k) {
    std::uint64_t acc = 0;
    for (std::size_t i = first; i < last; ++i) acc += digest_term(std::bit_cast<std::uint32_t>(data[i]), i);
    part[k] = acc;
  });
  std::uint64_t sum = 0;
  for (std::uint64_t p : part) sum += p;
  return sum;
}

}  // namespace labkit::fresh
