// The pure parts of grader/tools/activity.h on hand-made records: overlap, busy time and stream counts
// from intervals (summarize), the allocation peak from allocation/release events (memory_use),
// and the one-line description. No GPU, no CUPTI calls.
#include <doctest/doctest.h>

#include <cstdint>
#include <vector>

#include "grader/tools/activity.h"

namespace act = labkit::activity;

namespace {

constexpr std::uint64_t ms = 1'000'000;  // CUPTI timestamps are in ns
constexpr std::size_t MiB = std::size_t{1} << 20;

act::Interval kernel(std::uint32_t stream, std::uint64_t start_ms, std::uint64_t end_ms) {
  return {act::Kind::kernel, start_ms * ms, end_ms * ms, stream, 0, "k", false};
}
act::Interval copy(std::uint32_t stream, std::uint64_t start_ms, std::uint64_t end_ms) {
  return {act::Kind::memcpy, start_ms * ms, end_ms * ms, stream, 1024, "HtoD", false};
}
act::Interval fill(std::uint32_t stream, std::uint64_t start_ms, std::uint64_t end_ms) {
  return {act::Kind::memset, start_ms * ms, end_ms * ms, stream, 1024, "memset", false};
}
act::MemoryEvent alloc(std::uint64_t t, std::uint64_t address, std::size_t bytes,
                       std::uint32_t correlation = 0) {
  return {t, correlation, true, address, bytes};
}
act::MemoryEvent release(std::uint64_t t, std::uint64_t address, std::uint32_t correlation = 0) {
  return {t, correlation, false, address, 0};
}

}  // namespace

TEST_CASE("summarize: no intervals is an empty, available summary") {
  const auto s = act::summarize({});
  CHECK(s.available);
  CHECK(s.intervals.empty());
  CHECK(s.streams_used == 0);
  CHECK(s.overlap_ms == 0);
  CHECK(s.busy_ms == 0);
}

TEST_CASE("summarize: a copy nested inside a kernel on another stream overlaps for its whole length") {
  const auto s = act::summarize({kernel(1, 0, 10), copy(2, 2, 5)});
  CHECK(s.streams_used == 2);
  CHECK(s.kernel_streams == 1);
  CHECK(s.copy_streams == 1);
  CHECK(s.overlap_ms == doctest::Approx(3));
  CHECK(s.busy_ms == doctest::Approx(10));
}

TEST_CASE("summarize: disjoint intervals on different streams do not overlap") {
  const auto s = act::summarize({kernel(1, 0, 1), kernel(2, 2, 3), copy(3, 4, 6)});
  CHECK(s.streams_used == 3);
  CHECK(s.overlap_ms == 0);
  CHECK(s.busy_ms == doctest::Approx(4));
}

TEST_CASE("summarize: three streams busy at once count each instant once") {
  SUBCASE("three kernels over the same 4 ms") {
    const auto s = act::summarize({kernel(1, 0, 4), kernel(2, 0, 4), kernel(3, 0, 4)});
    CHECK(s.overlap_ms == doctest::Approx(4));  // not 8 or 12 (pairs)
    CHECK(s.busy_ms == doctest::Approx(4));
    CHECK(s.kernel_streams == 3);
  }
  SUBCASE("two kernels and a copy that outlives them") {
    const auto s = act::summarize({kernel(1, 0, 10), kernel(2, 0, 10), copy(3, 5, 15)});
    CHECK(s.overlap_ms == doctest::Approx(10));  // [10, 15) is the copy alone
    CHECK(s.busy_ms == doctest::Approx(15));
  }
  SUBCASE("staggered: overlap is the union of the pairwise intersections") {
    const auto s = act::summarize({kernel(1, 0, 6), kernel(2, 2, 8), copy(3, 4, 12)});
    CHECK(s.overlap_ms == doctest::Approx(6));  // [2, 8)
    CHECK(s.busy_ms == doctest::Approx(12));
  }
}

TEST_CASE("summarize: only a kernel against work on another stream is overlap") {
  SUBCASE("two copies on different streams at once") {
    const auto s = act::summarize({copy(1, 0, 4), copy(2, 0, 4)});
    CHECK(s.streams_used == 2);
    CHECK(s.overlap_ms == 0);
  }
  SUBCASE("two kernels on the same stream at once (programmatic dependent launch)") {
    const auto s = act::summarize({kernel(1, 0, 4), kernel(1, 2, 6), copy(1, 5, 7)});
    CHECK(s.streams_used == 1);
    CHECK(s.overlap_ms == 0);
    CHECK(s.busy_ms == doctest::Approx(7));
  }
  SUBCASE("a memset on another stream is busy time, not stream evidence") {
    const auto s = act::summarize({kernel(1, 0, 4), fill(2, 1, 6)});
    CHECK(s.streams_used == 1);
    CHECK(s.overlap_ms == 0);
    CHECK(s.busy_ms == doctest::Approx(6));
  }
}

TEST_CASE("summarize: touching intervals and empty intervals add no overlap") {
  const auto s = act::summarize({kernel(1, 0, 4), kernel(2, 4, 8), copy(3, 2, 2)});
  CHECK(s.overlap_ms == 0);
  CHECK(s.busy_ms == doctest::Approx(8));
  CHECK(s.streams_used == 3);  // the empty copy still ran on stream 3
}

TEST_CASE("summarize: intervals come back sorted by start") {
  const auto s = act::summarize({copy(2, 5, 6), kernel(1, 3, 4), kernel(3, 0, 1)});
  REQUIRE(s.intervals.size() == 3);
  CHECK(s.intervals[0].stream == 3);
  CHECK(s.intervals[1].stream == 1);
  CHECK(s.intervals[2].stream == 2);
}

TEST_CASE("memory_use: peak and net of allocations made in the window") {
  SUBCASE("allocate, allocate, free one, free the other") {
    const auto u =
        act::memory_use({alloc(1, 0xA, 64 * MiB), alloc(2, 0xB, 16 * MiB), release(3, 0xA), release(4, 0xB)});
    CHECK(u.peak_bytes == 80 * MiB);
    CHECK(u.net_bytes == 0);
    CHECK(u.allocations == 2);
  }
  SUBCASE("an allocation still held at the end is net") {
    const auto u = act::memory_use({alloc(1, 0xA, 3 * MiB), alloc(2, 0xB, 5 * MiB), release(3, 0xA)});
    CHECK(u.peak_bytes == 8 * MiB);
    CHECK(u.net_bytes == 5 * MiB);
  }
  SUBCASE("events in any order are sorted by time") {
    const auto u =
        act::memory_use({release(4, 0xB), release(2, 0xA), alloc(3, 0xB, 4 * MiB), alloc(1, 0xA, 4 * MiB)});
    CHECK(u.peak_bytes == 4 * MiB);  // A is freed before B is allocated
    CHECK(u.net_bytes == 0);
  }
  SUBCASE("an address reused after its release") {
    const auto u =
        act::memory_use({alloc(1, 0xA, 2 * MiB), release(2, 0xA), alloc(3, 0xA, 6 * MiB), release(4, 0xA)});
    CHECK(u.peak_bytes == 6 * MiB);
    CHECK(u.allocations == 2);
    CHECK(u.net_bytes == 0);
  }
  SUBCASE("equal timestamps are ordered by correlation id (API call order)") {
    const auto u =
        act::memory_use({alloc(5, 0xB, 7 * MiB, 12), release(5, 0xA, 11), alloc(1, 0xA, 7 * MiB, 10)});
    CHECK(u.peak_bytes == 7 * MiB);
  }
}

TEST_CASE("memory_use: releasing memory allocated before the window never makes the peak negative") {
  const auto u =
      act::memory_use({release(1, 0x0D1), alloc(2, 0xA, 16 * MiB), release(3, 0xA), release(4, 0x0D2)});
  CHECK(u.peak_bytes == 16 * MiB);
  CHECK(u.net_bytes == 0);
  CHECK(u.allocations == 1);
  const auto only_old = act::memory_use({release(1, 0x0D1)});
  CHECK(only_old.peak_bytes == 0);
  CHECK(only_old.net_bytes == 0);
  CHECK(only_old.allocations == 0);
}

TEST_CASE("describe: one line with streams, overlap and memory; or why there is no evidence") {
  auto s = act::summarize({kernel(1, 0, 10), copy(2, 2, 5), copy(3, 6, 7)});
  s.peak_allocated_bytes = 12 * MiB + MiB / 2;
  s.allocations = 3;
  CHECK(s.describe() ==
        "3 streams (1 with kernels, 2 with copies), 4.00 ms of overlap in 10.00 ms busy, peak 12.5 MiB "
        "allocated in 3 allocations");
  s.dropped = 2;
  CHECK(s.describe().find("2 records lost (evidence incomplete)") != std::string::npos);

  act::Summary none;
  none.why = "cuptiSubscribe failed: CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED";
  CHECK(none.describe() == "host evidence unavailable: " + none.why);
}
