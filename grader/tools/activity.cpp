// The pure part of grader/tools/activity.h: overlap, busy time and streams from intervals, the memory
// peak from allocation events, and the one-line description. The CUPTI side is activity_cupti.cpp.
#include <fmt/core.h>

#include <algorithm>
#include <map>
#include <set>
#include <tuple>
#include <unordered_map>
#include <utility>

#include "grader/tools/activity.h"

namespace labkit::activity {
namespace {

std::string format_bytes(std::size_t bytes) {
  const auto b = static_cast<double>(bytes);
  if (bytes < 1024) return fmt::format("{} B", bytes);
  if (bytes < (std::size_t{1} << 20)) return fmt::format("{:.1f} KiB", b / 1024);
  if (bytes < (std::size_t{1} << 30)) return fmt::format("{:.1f} MiB", b / (1 << 20));
  return fmt::format("{:.2f} GiB", b / (1 << 30));
}

const char* plural(std::size_t n) { return n == 1 ? "" : "s"; }

}  // namespace

namespace {

// Sweep: between consecutive edges the running work does not change, so each piece of time is
// counted once, however many intervals cover it. Returns the busy time; `spans` gets the overlap's
// pieces in time order, touching pieces merged.
std::uint64_t sweep(const std::vector<Interval>& intervals, std::vector<std::pair<std::uint64_t, std::uint64_t>>& spans) {
  std::vector<std::pair<std::uint64_t, std::pair<int, const Interval*>>> edges;  // time, +1/-1, what
  for (const Interval& iv : intervals)
    if (iv.end_ns > iv.start_ns) {  // an empty interval covers no time
      edges.push_back({iv.start_ns, {+1, &iv}});
      edges.push_back({iv.end_ns, {-1, &iv}});
    }
  std::sort(edges.begin(), edges.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  std::map<std::uint32_t, std::pair<int, int>> running;  // stream -> kernels, copies
  int active = 0;          // intervals running, memsets included
  int kernel_streams = 0;  // streams running a kernel
  int work_streams = 0;    // streams running a kernel or a copy
  std::uint64_t busy_ns = 0;
  for (std::size_t i = 0; i < edges.size(); ++i) {
    const auto& [t, what] = edges[i];
    if (i > 0) {
      const std::uint64_t from = edges[i - 1].first, dt = t - from;
      if (active > 0) busy_ns += dt;
      if (dt > 0 && kernel_streams >= 1 && work_streams >= 2) {
        if (!spans.empty() && spans.back().second == from) spans.back().second = t;
        else spans.emplace_back(from, t);
      }
    }
    const auto [delta, iv] = what;
    active += delta;
    if (iv->kind == Kind::memset) continue;
    auto& [k, c] = running[iv->stream];
    const bool had_kernel = k > 0, had_work = k + c > 0;
    (iv->kind == Kind::kernel ? k : c) += delta;
    kernel_streams += (k > 0) - had_kernel;
    work_streams += (k + c > 0) - had_work;
  }
  return busy_ns;
}

}  // namespace

Summary summarize(std::vector<Interval> intervals) {
  std::sort(intervals.begin(), intervals.end(), [](const Interval& a, const Interval& b) {
    return std::tie(a.start_ns, a.end_ns, a.stream) < std::tie(b.start_ns, b.end_ns, b.stream);
  });
  std::set<std::uint32_t> work, kernels, copies;
  for (const Interval& iv : intervals) {
    if (iv.kind == Kind::kernel) kernels.insert(iv.stream);
    if (iv.kind == Kind::memcpy) copies.insert(iv.stream);
  }
  work = kernels;  // memsets are not stream evidence
  work.insert(copies.begin(), copies.end());
  Summary s;
  s.available = true;
  s.streams_used = static_cast<int>(work.size());
  s.kernel_streams = static_cast<int>(kernels.size());
  s.copy_streams = static_cast<int>(copies.size());
  std::vector<std::pair<std::uint64_t, std::uint64_t>> spans;
  const std::uint64_t busy_ns = sweep(intervals, spans);
  std::uint64_t overlap_ns = 0;
  for (const auto& [a, b] : spans) overlap_ns += b - a;
  s.busy_ms = static_cast<double>(busy_ns) * 1e-6;
  s.overlap_ms = static_cast<double>(overlap_ns) * 1e-6;
  s.intervals = std::move(intervals);
  return s;
}

std::vector<std::pair<std::uint64_t, std::uint64_t>> overlap_spans(const std::vector<Interval>& intervals) {
  std::vector<std::pair<std::uint64_t, std::uint64_t>> spans;
  sweep(intervals, spans);
  return spans;
}

MemoryUse memory_use(std::vector<MemoryEvent> events) {
  // Correlation ids follow API call order across threads: they order an allocation and a release
  // that CUPTI stamped with the same time.
  std::sort(events.begin(), events.end(), [](const MemoryEvent& a, const MemoryEvent& b) {
    return std::tie(a.timestamp_ns, a.correlation) < std::tie(b.timestamp_ns, b.correlation);
  });
  MemoryUse use;
  std::unordered_map<std::uint64_t, std::size_t> live;  // address -> bytes, allocated in the window
  std::size_t current = 0;
  for (const MemoryEvent& e : events) {
    const auto it = live.find(e.address);
    if (e.allocation) {
      if (it != live.end()) current -= it->second;  // its release was missed: count the address once
      live[e.address] = e.bytes;
      current += e.bytes;
      ++use.allocations;
      use.peak_bytes = std::max(use.peak_bytes, current);
    } else if (it != live.end()) {  // releases of memory allocated before the window are ignored
      current -= it->second;
      live.erase(it);
    }
  }
  use.net_bytes = current;
  return use;
}

std::string Summary::describe() const {
  if (!available) return "host evidence unavailable: " + (why.empty() ? std::string("no reason given") : why);
  std::string line = fmt::format(
      "{} stream{} ({} with kernels, {} with copies), {:.2f} ms of overlap in {:.2f} ms busy, peak {} "
      "allocated in {} allocation{}",
      streams_used, plural(static_cast<std::size_t>(streams_used)), kernel_streams, copy_streams, overlap_ms,
      busy_ms, format_bytes(peak_allocated_bytes), allocations, plural(allocations));
  if (dropped > 0) line += fmt::format(", {} record{} lost (evidence incomplete)", dropped, plural(dropped));
  return line;
}

}  // namespace labkit::activity
