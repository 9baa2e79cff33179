// grader/tools/activity.h — host-side evidence that PTX cannot show: which streams a lab's copies and
// kernels ran on and whether they overlapped (streams lab), and how much device memory the lab
// allocated (fusion lab: no unrolled im2col matrix), recorded with CUPTI's Activity API.
//
//   labkit::activity::Recorder rec;          // enables the activity kinds below
//   ops.prolog(...); ops.forward(...); ops.epilog(...);
//   labkit::activity::Summary s = rec.stop(); // synchronizes the device, flushes, summarizes
//   if (!s.available) print("host evidence unavailable: " + s.why);
//
// Contract
//   * What is recorded, process-wide (every thread, every stream, every device) between the
//     constructor and stop(): kernels (CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, which keeps kernels
//     concurrent, unlike KIND_KERNEL), copies (MEMCPY), memsets (MEMSET) and device memory
//     allocations and releases (MEMORY2: cudaMalloc/cudaFree, cudaMallocAsync/cudaFreeAsync,
//     cudaMallocManaged, and module statics when their module is loaded inside the window).
//     Work launched before the constructor is not recorded even if it runs after it.
//   * Units: timestamps are CUPTI's, in ns (one clock for all records); durations in ms; bytes.
//   * Overlap: the total time during which a kernel runs on one stream while a kernel or a copy
//     runs on a different stream. Every instant counts once, however many streams are busy; two
//     copies overlapping each other, or anything overlapping work on its own stream, do not count.
//     Memsets are listed and count towards busy_ms, but are not stream evidence.
//   * Memory: peak_allocated_bytes is the maximum over the window of (bytes allocated - bytes
//     released), counting only allocations made inside the window; releases of older allocations
//     are ignored, so the peak is never negative. Device, managed and static device memory count;
//     pinned and pageable host memory do not. cudaMallocAsync counts the bytes asked for, not what
//     the pool reserves.
//   * Recording instruments kernels and adds overhead (most on the first launch of a module):
//     never time a call while recording.
//   * Only one Recorder may exist at a time in a process (CUPTI's activity state is global); a
//     second one reports available=false. Where the tracer below runs (the harness), a Recorder
//     shares its CUPTI subscription: it adds MEMORY2 for its window and reads a copy of the
//     tracer's records, which it never takes away. Recorder is used from one thread; the CUDA work it
//     records may come from any thread. CUPTI delivers records on its own threads; the file-static
//     state they fill is guarded by a mutex.
//   * Failure to initialize CUPTI (no driver, a libcupti of another major version, another
//     profiler such as nsys or ncu attached) never throws: available=false and `why` says what
//     happened. CUDA runtime errors (the synchronize in stop()) throw labkit::CudaError. The
//     executable links libcupti.so (CUDA toolkit, lib64): without it, it does not start at all.
//   * dropped > 0 means CUPTI lost records (buffer space, untimed activities): the evidence is
//     incomplete, and describe() says so.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace labkit::activity {

enum class Kind { kernel, memcpy, memset };

struct Interval {
  Kind kind = Kind::kernel;
  std::uint64_t start_ns = 0, end_ns = 0;  // CUPTI timestamps
  std::uint32_t stream = 0;                // CUPTI stream id
  std::size_t bytes = 0;                   // copies and memsets
  std::string name;       // kernel name (mangled, as CUPTI gives it) or "HtoD"/"DtoH"/"DtoD"/"memset"
  bool pageable = false;  // a copy from or to pageable host memory: synchronous for the host, the
                          // usual reason a streams lab shows no overlap
  std::uint64_t threads = 0;  // kernels: grid size x block size
};

// One allocation or release, as stop() feeds them to memory_use().
struct MemoryEvent {
  std::uint64_t timestamp_ns = 0;
  std::uint32_t correlation = 0;  // CUPTI correlation id: API call order, breaks timestamp ties
  bool allocation = true;         // false: a release
  std::uint64_t address = 0;
  std::size_t bytes = 0;
};

struct MemoryUse {
  std::size_t peak_bytes = 0;   // see the contract above
  std::size_t net_bytes = 0;    // allocated inside the window and still held at its end
  std::size_t allocations = 0;  // allocations made inside the window
};

struct Summary {
  bool available = false;  // false: CUPTI could not record; `why` says why (the grader prints it)
  std::string why;
  std::vector<Interval> intervals;  // sorted by start
  int streams_used = 0;             // distinct streams that ran a kernel or a copy
  int kernel_streams = 0, copy_streams = 0;
  double overlap_ms = 0;  // see the contract above
  double busy_ms = 0;     // union of all intervals, memsets included
  std::size_t peak_allocated_bytes = 0;
  std::size_t net_allocated_bytes = 0;
  std::size_t allocations = 0;
  std::size_t dropped = 0;  // records CUPTI dropped or delivered without timestamps: evidence incomplete
  // One line, e.g. "3 streams (2 with kernels, 2 with copies), 1.84 ms of overlap in 6.10 ms busy,
  // peak 12.4 MiB allocated in 3 allocations"; "host evidence unavailable: <why>" when unavailable.
  std::string describe() const;
};

class Recorder {  // RAII: the constructor enables the activity kinds; stop() flushes and returns
                  // the summary; the destructor disables them if stop() was not called
 public:
  Recorder();
  ~Recorder();
  Recorder(const Recorder&) = delete;
  Recorder& operator=(const Recorder&) = delete;
  Summary stop();  // calls cudaDeviceSynchronize first; call once (a second call is unavailable)

 private:
  bool owner_ = false;    // this Recorder holds the process's CUPTI state
  bool shared_ = false;   // the tracer's subscription: MEMORY2 only is this Recorder's
  bool stopped_ = false;
  std::size_t dropped_at_start_ = 0;  // the tracer's drop count when a shared Recorder started
  std::uint64_t started_ns_ = 0;  // CUPTI time at the start: older records are not this window's
  std::string why_;       // set when the constructor could not start recording
};

// The always-on tracer (the harness): kernels, copies and memsets of the whole process from
// start_tracing() until it exits, so that a lab cannot tell the calls the judge times from the
// others (grader/judge/executed_evidence.h). The harness notes timestamp_ns() around each timed region
// and, in its next request (outside the judge's clock), takes the records.
//   * start_tracing(): "" when recording, else why not (another CUPTI client, no driver, a
//     libcupti of another major version); calling it again returns the first answer. Static
//     initializers that ran before it are not recorded.
//   * take_traced(): flushes CUPTI (forced: call it with the device idle, or records of work
//     still running are lost and counted as dropped) and hands back every record delivered since
//     the last take, in no particular order, without stopping. At most kMaxTraced records are
//     kept between takes; the rest count as dropped.
//   * dropped counts what CUPTI lost (its per-context count, read when each buffer is delivered),
//     records delivered without timestamps and the overflow above.
inline constexpr std::size_t kMaxTraced = std::size_t(1) << 20;
struct Traced {
  bool available = false;  // false: not tracing (`why`)
  std::string why;
  std::vector<Interval> intervals;
  std::size_t dropped = 0;
};
std::string start_tracing();
bool tracing();
std::uint64_t timestamp_ns();  // CUPTI's clock (the records' clock); 0 when it cannot be read
Traced take_traced();
// Drops what was delivered since the last take, without a flush (cheap: records still in CUPTI's
// buffers arrive with the next take, older than any window opened after this call).
void clear_traced();

// Pure functions used by stop(), exposed for CPU unit testing.
// summarize: intervals, streams, overlap and busy time from intervals (available = true).
Summary summarize(std::vector<Interval> intervals);
// memory_use: the peak, net and count of allocations from events in any order.
MemoryUse memory_use(std::vector<MemoryEvent> events);
// overlap_spans: the pieces of time [start, end) (ns) that summarize counts as overlap, in time
// order, touching pieces merged: their lengths add up to overlap_ms (the timeline shades them).
std::vector<std::pair<std::uint64_t, std::uint64_t>> overlap_spans(const std::vector<Interval>& intervals);

}  // namespace labkit::activity
