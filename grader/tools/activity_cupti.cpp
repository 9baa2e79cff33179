// The CUPTI side of grader/tools/activity.h: one subscription per process, shared by the always-on
// tracer (the harness) and the Recorder windows of the host evidence.
#include <cuda_runtime_api.h>
#include <cupti.h>
// Newer toolkits move superseded record structs here; including it keeps this file compiling
// once CUpti_ActivityKernel10 and friends are no longer the current versions.
#include <cupti_activity_deprecated.h>
#include <fmt/core.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <mutex>
#include <string_view>
#include <utility>

#include "grader/tools/activity.h"
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

// What the tracer keeps on for the whole process; a Recorder adds MEMORY2 for its window.
constexpr CUpti_ActivityKind kTraceKinds[] = {CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, CUPTI_ACTIVITY_KIND_MEMCPY,
                                              CUPTI_ACTIVITY_KIND_MEMSET};
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
  std::vector<Interval> intervals;  // at most kMaxTraced
  std::vector<MemoryEvent> memory;
  std::size_t dropped = 0;
};
State& state() {
  static State* s = new State;
  return *s;
}

std::atomic<bool> g_recording{false};  // one Recorder at a time: CUPTI's activity state is global
CUpti_SubscriberHandle g_subscriber = nullptr;
// start_tracing() and the Recorders' starts and stops, which may come from different threads.
std::mutex g_control;
bool g_trace_tried = false, g_tracing = false;
std::string g_trace_why;

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
  auto add = [&](Kind kind, const auto* r, std::size_t bytes, std::string name, bool pageable, std::uint64_t threads) {
    if (!timed(r->start, r->end)) return void(++out.dropped);
    out.intervals.push_back({kind, r->start, r->end, r->streamId, bytes, std::move(name), pageable, threads});
  };
  CUpti_Activity* record = nullptr;
  for (;;) {
    const CUptiResult r = cuptiActivityGetNextRecord(buffer, valid, &record);
    if (r == CUPTI_ERROR_MAX_LIMIT_REACHED) return;
    if (r != CUPTI_SUCCESS) return void(++out.dropped);  // an incomplete record ends the buffer
    if (record->kind == CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL) {
      const auto* k = reinterpret_cast<const KernelRecord*>(record);
      const std::uint64_t threads = std::uint64_t(k->gridX) * k->gridY * k->gridZ * k->blockX * k->blockY * k->blockZ;
      add(Kind::kernel, k, 0, k->name != nullptr ? k->name : "", false, threads);
    } else if (record->kind == CUPTI_ACTIVITY_KIND_MEMCPY) {
      const auto* c = reinterpret_cast<const MemcpyRecord*>(record);
      const bool pageable = c->srcKind == CUPTI_ACTIVITY_MEMORY_KIND_PAGEABLE ||
                            c->dstKind == CUPTI_ACTIVITY_MEMORY_KIND_PAGEABLE;
      add(Kind::memcpy, c, static_cast<std::size_t>(c->bytes), copy_name(c->copyKind), pageable, 0);
    } else if (record->kind == CUPTI_ACTIVITY_KIND_MEMSET) {
      const auto* m = reinterpret_cast<const MemsetRecord*>(record);
      add(Kind::memset, m, static_cast<std::size_t>(m->bytes), "memset", false, 0);
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

void CUPTIAPI buffer_completed(CUcontext context, std::uint32_t stream, std::uint8_t* buffer, std::size_t,
                               std::size_t valid) {
  Parsed parsed;
  State& s = state();
  // What CUPTI lost for want of buffer space is counted per context: read (and so reset) here, as
  // CUPTI's own samples do. A null context is the count of activities of no context.
  std::size_t lost = 0;
  if (cuptiActivityGetNumDroppedRecords(context, stream, &lost) != CUPTI_SUCCESS) lost = 0;
  // No exception may unwind into CUPTI's C frames: out of memory loses the rest of the buffer.
  try {
    if (buffer != nullptr) parse(buffer, valid, parsed);
    std::lock_guard lock(s.mutex);
    const std::size_t room = kMaxTraced - std::min(kMaxTraced, s.intervals.size());
    const std::size_t kept = std::min(room, parsed.intervals.size());
    s.intervals.insert(s.intervals.end(), std::make_move_iterator(parsed.intervals.begin()),
                       std::make_move_iterator(parsed.intervals.begin() + static_cast<long>(kept)));
    s.memory.insert(s.memory.end(), parsed.memory.begin(), parsed.memory.end());
    s.dropped += parsed.dropped + lost + (parsed.intervals.size() - kept);
  } catch (...) {
    std::lock_guard lock(s.mutex);
    s.dropped += parsed.dropped + lost + 1;
  }
  std::free(buffer);
}

// Subscribing is how CUPTI tells us that another client (nsys, ncu) already owns it; the callback
// is never enabled for any domain.
void CUPTIAPI no_callbacks(void*, CUpti_CallbackDomain, CUpti_CallbackId, const void*) {}

// The version check, the subscription and the buffer callbacks; "" on success. `subscribed`
// says whether there is a subscription to undo.
std::string open_cupti(bool& subscribed) {
  subscribed = false;
  std::uint32_t version = 0;
  std::string why = LABKIT_CUPTI(cuptiGetVersion(&version));
  if (why.empty() && version / 10000 != CUPTI_API_VERSION / 10000)
    why = fmt::format("libcupti reports API version {}, but labkit was built against {}: rebuild labkit "
                      "with the CUDA toolkit whose libcupti is loaded", version, CUPTI_API_VERSION);
  if (why.empty()) {
    why = LABKIT_CUPTI(cuptiSubscribe(&g_subscriber, no_callbacks, nullptr));
    subscribed = why.empty();
  }
  if (why.empty()) why = LABKIT_CUPTI(cuptiActivityRegisterCallbacks(buffer_requested, buffer_completed));
  if (why.empty()) {
    std::size_t stale = 0;  // reading the count resets it: drops of an earlier window are not ours
    (void)cuptiActivityGetNumDroppedRecords(nullptr, 0, &stale);
  }
  return why;
}

// Stops recording the first `enabled_kinds` of kKinds and delivers every buffer; returns the first
// failure, after trying every step. Without our subscription CUPTI belongs to someone else (or to
// nobody): no calls at all.
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

}  // namespace

std::string start_tracing() {
  std::lock_guard control(g_control);
  if (g_trace_tried) return g_trace_why;
  g_trace_tried = true;
  if (g_recording) return g_trace_why = "a labkit::activity::Recorder is recording: the tracer starts before any";
  bool subscribed = false;
  std::string why = open_cupti(subscribed);
  int enabled = 0;
  for (CUpti_ActivityKind kind : kTraceKinds)
    if (why.empty() && (why = LABKIT_CUPTI(cuptiActivityEnable(kind))).empty()) ++enabled;
  if (!why.empty()) finish(enabled, subscribed);  // kTraceKinds is kKinds' prefix
  g_tracing = why.empty();
  return g_trace_why = why;
}

bool tracing() {
  std::lock_guard control(g_control);
  return g_tracing;
}

std::uint64_t timestamp_ns() {
  std::uint64_t t = 0;
  return cuptiGetTimestamp(&t) == CUPTI_SUCCESS ? t : 0;
}

Traced take_traced() {
  Traced t;
  {
    std::lock_guard control(g_control);
    if (!g_tracing) {
      t.why = g_trace_tried ? g_trace_why : "the tracer was never started in this process";
      if (t.why.empty()) t.why = "the tracer is not running";
      return t;
    }
  }
  t.why = LABKIT_CUPTI(cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED));
  State& st = state();
  std::lock_guard lock(st.mutex);
  t.intervals.swap(st.intervals);
  std::swap(t.dropped, st.dropped);
  t.available = t.why.empty();
  return t;
}

void clear_traced() {
  State& st = state();
  std::lock_guard lock(st.mutex);
  st.intervals.clear();
  st.dropped = 0;
}

Recorder::Recorder() {
  bool expected = false;
  if (!g_recording.compare_exchange_strong(expected, true)) {
    why_ = "another labkit::activity::Recorder is already recording in this process (one at a time)";
    return;
  }
  owner_ = true;
  std::lock_guard control(g_control);
  shared_ = g_tracing;
  {
    State& st = state();
    std::lock_guard lock(st.mutex);
    if (!shared_) st.intervals.clear();  // the tracer's records are not the Recorder's to drop
    st.memory.clear();
    if (!shared_) st.dropped = 0;
    dropped_at_start_ = st.dropped;
  }
  if (shared_) {
    why_ = LABKIT_CUPTI(cuptiGetTimestamp(&started_ns_));
    if (why_.empty()) why_ = LABKIT_CUPTI(cuptiActivityEnable(CUPTI_ACTIVITY_KIND_MEMORY2));
    if (!why_.empty()) {
      owner_ = false;
      g_recording = false;
    }
    return;
  }
  bool subscribed = false;
  why_ = open_cupti(subscribed);
  if (why_.empty()) why_ = LABKIT_CUPTI(cuptiGetTimestamp(&started_ns_));
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
    std::lock_guard control(g_control);
    if (shared_) (void)cuptiActivityDisable(CUPTI_ACTIVITY_KIND_MEMORY2);
    else finish(kAllKinds, true);
  } catch (...) {  // fmt, std::string or the mutex could throw; a destructor must not
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
  std::string failure;
  std::vector<Interval> intervals;
  std::vector<MemoryEvent> memory;
  std::size_t dropped = 0;
  {
    std::lock_guard control(g_control);
    if (shared_) {
      failure = LABKIT_CUPTI(cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED));
      const std::string off = LABKIT_CUPTI(cuptiActivityDisable(CUPTI_ACTIVITY_KIND_MEMORY2));
      const std::string again = LABKIT_CUPTI(cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED));
      if (failure.empty()) failure = off.empty() ? again : off;
    } else {
      failure = finish(kAllKinds, true);
    }
    owner_ = false;
    State& st = state();
    std::lock_guard lock(st.mutex);
    if (shared_) {
      // A copy: the tracer's records stay for its next take.
      for (const Interval& iv : st.intervals)
        if (iv.start_ns >= started_ns_) intervals.push_back(iv);
      dropped = st.dropped >= dropped_at_start_ ? st.dropped - dropped_at_start_ : st.dropped;
    } else {
      intervals.swap(st.intervals);
      std::swap(dropped, st.dropped);
    }
    memory.swap(st.memory);
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

}  // namespace labkit::activity
