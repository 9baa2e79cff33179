#include "labkit/activity.h"

#include <cuda_runtime_api.h>
#include <cupti.h>
// Newer toolkits move superseded record structs here; including it keeps this file compiling
// once CUpti_ActivityKernel10 and friends are no longer the current versions.
#include <cupti_activity_deprecated.h>
#include <fmt/core.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <map>
#include <mutex>
#include <set>
#include <string_view>
#include <tuple>
#include <unordered_map>
#include <utility>

#include "labkit/cuda_check.h"

namespace labkit::activity {
namespace {

// The record structs of CUDA 13.0. Every field read below sits at the same offset in the previous
// versions too (Kernel9, Memcpy5, Memset3, Memory3): new versions only append fields, so the
// libcupti of another 13.x release (see the version check) still reads correctly.
using KernelRecord = CUpti_ActivityKernel10;
using MemcpyRecord = CUpti_ActivityMemcpy6;
using MemsetRecord = CUpti_ActivityMemset4;
using MemoryRecord = CUpti_ActivityMemory4;

constexpr CUpti_ActivityKind kKinds[] = {CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, CUPTI_ACTIVITY_KIND_MEMCPY,
                                         CUPTI_ACTIVITY_KIND_MEMSET, CUPTI_ACTIVITY_KIND_MEMORY2};
constexpr int kAllKinds = static_cast<int>(std::size(kKinds));
constexpr std::size_t kBufferBytes = 8u << 20;  // CUPTI suggests 1-10 MB
constexpr std::size_t kBufferAlign = 8;          // ACTIVITY_RECORD_ALIGNMENT

// Filled by the buffer-completed callback, which runs on CUPTI's threads or inside
// cuptiActivityFlushAll: hence the mutex. Never destroyed, so that a buffer CUPTI delivers during
// process exit cannot reach a destroyed object.
struct State {
  std::mutex mutex;
  std::vector<Interval> intervals;
  std::vector<MemoryEvent> memory;
  std::size_t dropped = 0;
};
State& state() {
  static State* s = new State;
  return *s;
}

std::atomic<bool> g_recording{false};  // one Recorder at a time: CUPTI's activity state is global
CUpti_SubscriberHandle g_subscriber = nullptr;

std::string cupti_failure(const char* call, CUptiResult result) {
  const char* name = nullptr;
  const char* message = nullptr;
  if (cuptiGetResultString(result, &name) != CUPTI_SUCCESS || name == nullptr) name = "unknown CUPTI error";
  if (cuptiGetErrorMessage(result, &message) != CUPTI_SUCCESS || message == nullptr) message = "";
  std::string text = fmt::format("{} failed: {}", call, name);
  if (*message != '\0' && std::string_view(message) != name) text += fmt::format(" ({})", message);
  int driver = 0;  // without a driver CUPTI says no more than CUPTI_ERROR_UNKNOWN
  if (cudaDriverGetVersion(&driver) != cudaSuccess || driver == 0)
    text += "; no CUDA driver is loaded";
  else if (result == CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED)
    text += "; another CUPTI client (a profiler such as nsys or ncu) is attached to this process";
  else if (result == CUPTI_ERROR_NOT_INITIALIZED)
    text += fmt::format("; the CUDA driver ({}.{}) may be older than this CUPTI ({}) needs", driver / 1000,
                        driver % 1000 / 10, CUPTI_API_VERSION);
  return text;
}

// Empty on success, else what failed and why: the constructor must not throw.
std::string cupti_status(CUptiResult result, const char* call) {
  return result == CUPTI_SUCCESS ? std::string() : cupti_failure(call, result);
}
#define LABKIT_CUPTI(call) cupti_status((call), #call)

const char* copy_name(std::uint8_t kind) {
  static const char* const names[] = {"unknown", "HtoD", "DtoH", "HtoA", "AtoH", "AtoA",
                                      "AtoD",    "DtoA", "DtoD", "HtoH", "PtoP"};
  return kind < std::size(names) ? names[kind] : "unknown";
}

// Memory a kernel can use as scratch space: on the device or migrating to it; not host memory.
bool device_resident(CUpti_ActivityMemoryKind k) {
  return k == CUPTI_ACTIVITY_MEMORY_KIND_DEVICE || k == CUPTI_ACTIVITY_MEMORY_KIND_MANAGED ||
         k == CUPTI_ACTIVITY_MEMORY_KIND_DEVICE_STATIC || k == CUPTI_ACTIVITY_MEMORY_KIND_MANAGED_STATIC ||
         k == CUPTI_ACTIVITY_MEMORY_KIND_ARRAY;
}

void CUPTIAPI buffer_requested(std::uint8_t** buffer, std::size_t* size, std::size_t* max_records) {
  *buffer = static_cast<std::uint8_t*>(std::aligned_alloc(kBufferAlign, kBufferBytes));
  *size = *buffer != nullptr ? kBufferBytes : 0;  // no buffer: CUPTI drops records and counts them
  *max_records = 0;
}

// Zero timestamps: CUPTI could not time the activity (documented for lack of device memory).
bool timed(std::uint64_t start, std::uint64_t end) { return !(start == 0 && end == 0) && end >= start; }

struct Parsed {
  std::vector<Interval> intervals;
  std::vector<MemoryEvent> memory;
  std::size_t dropped = 0;
};

void parse(std::uint8_t* buffer, std::size_t valid, Parsed& out) {
  auto add = [&](Kind kind, const auto* r, std::size_t bytes, std::string name, bool pageable) {
    if (!timed(r->start, r->end)) return void(++out.dropped);
    out.intervals.push_back({kind, r->start, r->end, r->streamId, bytes, std::move(name), pageable});
  };
  CUpti_Activity* record = nullptr;
  for (;;) {
    const CUptiResult r = cuptiActivityGetNextRecord(buffer, valid, &record);
    if (r == CUPTI_ERROR_MAX_LIMIT_REACHED) return;
    if (r != CUPTI_SUCCESS) return void(++out.dropped);  // an incomplete record ends the buffer
    if (record->kind == CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL) {
      const auto* k = reinterpret_cast<const KernelRecord*>(record);
      add(Kind::kernel, k, 0, k->name != nullptr ? k->name : "", false);
    } else if (record->kind == CUPTI_ACTIVITY_KIND_MEMCPY) {
      const auto* c = reinterpret_cast<const MemcpyRecord*>(record);
      const bool pageable = c->srcKind == CUPTI_ACTIVITY_MEMORY_KIND_PAGEABLE ||
                            c->dstKind == CUPTI_ACTIVITY_MEMORY_KIND_PAGEABLE;
      add(Kind::memcpy, c, static_cast<std::size_t>(c->bytes), copy_name(c->copyKind), pageable);
    } else if (record->kind == CUPTI_ACTIVITY_KIND_MEMSET) {
      const auto* m = reinterpret_cast<const MemsetRecord*>(record);
      add(Kind::memset, m, static_cast<std::size_t>(m->bytes), "memset", false);
    } else if (record->kind == CUPTI_ACTIVITY_KIND_MEMORY2) {
      const auto* m = reinterpret_cast<const MemoryRecord*>(record);
      const bool allocation = m->memoryOperationType == CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_ALLOCATION;
      const bool release = m->memoryOperationType == CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_RELEASE;
      if (device_resident(m->memoryKind) && (allocation || release))
        out.memory.push_back({m->timestamp, m->correlationId, allocation, m->address,
                              static_cast<std::size_t>(m->bytes)});
    }
  }
}

void CUPTIAPI buffer_completed(CUcontext, std::uint32_t, std::uint8_t* buffer, std::size_t,
                               std::size_t valid) {
  Parsed parsed;
  State& s = state();
  // No exception may unwind into CUPTI's C frames: out of memory loses the rest of the buffer.
  try {
    if (buffer != nullptr) parse(buffer, valid, parsed);
    std::lock_guard lock(s.mutex);
    s.intervals.insert(s.intervals.end(), std::make_move_iterator(parsed.intervals.begin()),
                       std::make_move_iterator(parsed.intervals.end()));
    s.memory.insert(s.memory.end(), parsed.memory.begin(), parsed.memory.end());
    s.dropped += parsed.dropped;
  } catch (...) {
    std::lock_guard lock(s.mutex);
    s.dropped += parsed.dropped + 1;
  }
  std::free(buffer);
}

// Subscribing is how CUPTI tells us that another client (nsys, ncu) already owns it; the callback
// is never enabled for any domain.
void CUPTIAPI no_callbacks(void*, CUpti_CallbackDomain, CUpti_CallbackId, const void*) {}

// Stops recording and delivers every buffer; returns the first failure, after trying every step.
// Without our subscription CUPTI belongs to someone else (or to nobody): no calls at all.
std::string finish(int enabled_kinds, bool subscribed) {
  if (!subscribed) return {};
  std::string first;
  auto keep = [&](std::string e) { if (first.empty()) first = std::move(e); };
  // Flush before and after disabling: records already written must reach us whatever disabling
  // does to buffers in flight.
  keep(LABKIT_CUPTI(cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED)));
  for (int i = 0; i < enabled_kinds; ++i) keep(LABKIT_CUPTI(cuptiActivityDisable(kKinds[i])));
  keep(LABKIT_CUPTI(cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED)));
  std::size_t dropped = 0;
  keep(LABKIT_CUPTI(cuptiActivityGetNumDroppedRecords(nullptr, 0, &dropped)));
  {
    std::lock_guard lock(state().mutex);
    state().dropped += dropped;
  }
  keep(LABKIT_CUPTI(cuptiUnsubscribe(g_subscriber)));
  g_subscriber = nullptr;
  return first;
}

std::string format_bytes(std::size_t bytes) {
  const auto b = static_cast<double>(bytes);
  if (bytes < 1024) return fmt::format("{} B", bytes);
  if (bytes < (std::size_t{1} << 20)) return fmt::format("{:.1f} KiB", b / 1024);
  if (bytes < (std::size_t{1} << 30)) return fmt::format("{:.1f} MiB", b / (1 << 20));
  return fmt::format("{:.2f} GiB", b / (1 << 30));
}

const char* plural(std::size_t n) { return n == 1 ? "" : "s"; }

}  // namespace

Recorder::Recorder() {
  bool expected = false;
  if (!g_recording.compare_exchange_strong(expected, true)) {
    why_ = "another labkit::activity::Recorder is already recording in this process (one at a time)";
    return;
  }
  owner_ = true;
  {
    State& st = state();
    std::lock_guard lock(st.mutex);
    st.intervals.clear();
    st.memory.clear();
    st.dropped = 0;
  }
  std::uint32_t version = 0;
  why_ = LABKIT_CUPTI(cuptiGetVersion(&version));
  if (why_.empty() && version / 10000 != CUPTI_API_VERSION / 10000)
    why_ = fmt::format("libcupti reports API version {}, but labkit was built against {}: rebuild labkit "
                       "with the CUDA toolkit whose libcupti is loaded", version, CUPTI_API_VERSION);
  bool subscribed = false;
  if (why_.empty()) {
    why_ = LABKIT_CUPTI(cuptiSubscribe(&g_subscriber, no_callbacks, nullptr));
    subscribed = why_.empty();
  }
  if (why_.empty()) why_ = LABKIT_CUPTI(cuptiActivityRegisterCallbacks(buffer_requested, buffer_completed));
  if (why_.empty()) {
    std::size_t stale = 0;  // reading the count resets it: drops of an earlier window are not ours
    (void)cuptiActivityGetNumDroppedRecords(nullptr, 0, &stale);
    why_ = LABKIT_CUPTI(cuptiGetTimestamp(&started_ns_));
  }
  int enabled = 0;
  for (int i = 0; i < kAllKinds && why_.empty(); ++i)
    if ((why_ = LABKIT_CUPTI(cuptiActivityEnable(kKinds[i]))).empty()) ++enabled;
  if (!why_.empty()) {
    finish(enabled, subscribed);  // undo what was done; `why_` keeps the failure that matters
    owner_ = false;
    g_recording = false;
  }
}

Recorder::~Recorder() {
  if (!owner_ || stopped_) return;
  // Let running work finish, so that its records arrive now and not in the next Recorder's window.
  // The result does not matter: the recording is abandoned.
  (void)cudaDeviceSynchronize();
  try {
    finish(kAllKinds, true);
  } catch (...) {  // fmt or std::string could throw; a destructor must not
  }
  g_recording = false;
}

Summary Recorder::stop() {
  Summary s;
  if (stopped_) {
    s.why = "Recorder::stop() was called twice; each Recorder records one window";
    return s;
  }
  LABKIT_CUDA_CHECK(cudaDeviceSynchronize());  // every record complete before the flush
  stopped_ = true;
  if (!owner_) {
    s.why = why_;
    return s;
  }
  const std::string failure = finish(kAllKinds, true);
  owner_ = false;
  std::vector<Interval> intervals;
  std::vector<MemoryEvent> memory;
  std::size_t dropped = 0;
  {
    State& st = state();
    std::lock_guard lock(st.mutex);
    intervals.swap(st.intervals);
    memory.swap(st.memory);
    std::swap(dropped, st.dropped);
  }
  g_recording = false;
  // A record that an abandoned earlier window delivered late started before this window.
  std::erase_if(intervals, [&](const Interval& iv) { return iv.start_ns < started_ns_; });
  std::erase_if(memory, [&](const MemoryEvent& e) { return e.timestamp_ns < started_ns_; });
  s = summarize(std::move(intervals));
  const MemoryUse use = memory_use(std::move(memory));
  s.peak_allocated_bytes = use.peak_bytes;
  s.net_allocated_bytes = use.net_bytes;
  s.allocations = use.allocations;
  s.dropped = dropped;
  if (!failure.empty()) {
    s.available = false;
    s.why = failure + " while stopping: the records may be incomplete";
  }
  return s;
}

Summary summarize(std::vector<Interval> intervals) {
  std::sort(intervals.begin(), intervals.end(), [](const Interval& a, const Interval& b) {
    return std::tie(a.start_ns, a.end_ns, a.stream) < std::tie(b.start_ns, b.end_ns, b.stream);
  });
  std::set<std::uint32_t> work, kernels, copies;
  std::vector<std::pair<std::uint64_t, std::pair<int, const Interval*>>> edges;  // time, +1/-1, what
  for (const Interval& iv : intervals) {
    if (iv.kind == Kind::kernel) kernels.insert(iv.stream);
    if (iv.kind == Kind::memcpy) copies.insert(iv.stream);
    if (iv.end_ns > iv.start_ns) {  // an empty interval covers no time
      edges.push_back({iv.start_ns, {+1, &iv}});
      edges.push_back({iv.end_ns, {-1, &iv}});
    }
  }
  work = kernels;  // memsets are not stream evidence
  work.insert(copies.begin(), copies.end());
  Summary s;
  s.available = true;
  s.streams_used = static_cast<int>(work.size());
  s.kernel_streams = static_cast<int>(kernels.size());
  s.copy_streams = static_cast<int>(copies.size());
  std::sort(edges.begin(), edges.end(), [](const auto& a, const auto& b) { return a.first < b.first; });

  // Sweep: between consecutive edges the running work does not change, so each piece of time is
  // counted once, however many intervals cover it.
  std::map<std::uint32_t, std::pair<int, int>> running;  // stream -> kernels, copies
  int active = 0;          // intervals running, memsets included
  int kernel_streams = 0;  // streams running a kernel
  int work_streams = 0;    // streams running a kernel or a copy
  std::uint64_t busy_ns = 0, overlap_ns = 0;
  for (std::size_t i = 0; i < edges.size(); ++i) {
    const auto& [t, what] = edges[i];
    if (i > 0) {
      const std::uint64_t dt = t - edges[i - 1].first;
      if (active > 0) busy_ns += dt;
      if (kernel_streams >= 1 && work_streams >= 2) overlap_ns += dt;
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
  s.busy_ms = static_cast<double>(busy_ns) * 1e-6;
  s.overlap_ms = static_cast<double>(overlap_ns) * 1e-6;
  s.intervals = std::move(intervals);
  return s;
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
