// grader/protocol/chunks.h — big host arrays on several threads, for both sides of the channel.
//
// Contract
//   * for_chunks(n, body): splits [0, n) into one contiguous chunk per thread and runs
//     body(first, last, k) for chunk k on its own thread; returns when all are done. One thread
//     below 1 Mi elements (starting threads would cost more), at most 16. body must not throw.
//   * chunk_count(n): how many chunks for_chunks(n, ...) uses, for per-chunk partial results.
//   * parallel_copy(dst, src): std::copy of equal-sized spans on those threads.
// A timed call moves ~100 MB through each of these; on one thread that was most of the call.
#pragma once

#include <algorithm>
#include <cstddef>
#include <span>
#include <thread>
#include <vector>

namespace labkit::fresh {

inline std::size_t chunk_count(std::size_t n) {
  return n < (std::size_t(1) << 20) ? 1 : std::clamp<std::size_t>(std::thread::hardware_concurrency(), 1, 16);
}

template <class Body>
void for_chunks(std::size_t n, Body&& body) {
  const std::size_t threads = chunk_count(n);
  if (threads == 1) {
    body(std::size_t(0), n, std::size_t(0));
    return;
  }
  std::vector<std::thread> pool;
  pool.reserve(threads);
  for (std::size_t k = 0; k < threads; ++k) pool.emplace_back([&, k] { body(n * k / threads, n * (k + 1) / threads, k); });
  for (std::thread& t : pool) t.join();
}

template <class T>
void parallel_copy(std::span<T> dst, std::span<const T> src) {
  for_chunks(std::min(dst.size(), src.size()), [&](std::size_t first, std::size_t last, std::size_t) {
    std::copy(src.begin() + static_cast<std::ptrdiff_t>(first), src.begin() + static_cast<std::ptrdiff_t>(last),
              dst.begin() + static_cast<std::ptrdiff_t>(first));
  });
}

}  // namespace labkit::fresh
