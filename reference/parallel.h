// parallel.h — a minimal parallel-for over an index range for the CPU references.
//
// parallel_for(n, body, threads) calls body(i) for every i in [0, n) on `threads` std::threads
// (0 = std::thread::hardware_concurrency()), each taking contiguous chunks. The first exception a
// body throws is rethrown on the calling thread after all threads have joined.
#pragma once

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <exception>
#include <mutex>
#include <thread>
#include <vector>

namespace labkit::reference {

template <class Body>
void parallel_for(std::size_t n, Body&& body, unsigned threads = 0) {
  if (threads == 0) threads = std::max(1u, std::thread::hardware_concurrency());
  threads = static_cast<unsigned>(std::min<std::size_t>(threads, n));
  if (threads <= 1) {
    for (std::size_t i = 0; i < n; ++i) body(i);
    return;
  }
  // Work is handed out in small chunks from a shared counter so that uneven rows balance.
  const std::size_t chunk = std::max<std::size_t>(1, n / (threads * 16));
  std::atomic<std::size_t> next{0};
  std::exception_ptr error;
  std::mutex error_mutex;
  auto worker = [&] {
    try {
      for (;;) {
        std::size_t begin = next.fetch_add(chunk);
        if (begin >= n) return;
        std::size_t end = std::min(n, begin + chunk);
        for (std::size_t i = begin; i < end; ++i) body(i);
      }
    } catch (...) {
      std::lock_guard lock(error_mutex);
      if (!error) error = std::current_exception();
      next.store(n);
    }
  };
  std::vector<std::thread> pool;
  pool.reserve(threads - 1);
  for (unsigned t = 1; t < threads; ++t) pool.emplace_back(worker);
  worker();
  for (auto& t : pool) t.join();
  if (error) std::rethrow_exception(error);
}

}  // namespace labkit::reference
