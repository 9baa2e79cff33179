// What a conv lab's harness does for each op (the list is in harness.h). The lab's phases run in
// the order of grader/harness/conv_run.h; every intermediate the judge compares is copied out raw.
#include <fmt/core.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <functional>
#include <future>
#include <memory>
#include <optional>
#include <stdexcept>
#include <vector>

#include "device_ops.h"
#include "grader/protocol/chunks.h"
#include "grader/protocol/fresh.h"
#include "grader/protocol/host_digest.h"
#include "grader/protocol/host_pages.h"
#include "grader/tools/activity.h"
#include "grader/harness/conv_run.h"
#include "labkit/cuda_check.h"
#include "grader/core/event_timer.h"
#include "grader/core/phase.h"
#include "grader/core/text_escape.h"
#include "server.h"

namespace labkit::harness {
namespace {

using nlohmann::json;
using Clock = std::chrono::steady_clock;

// Bytes after each host array the lab is given; a write past the end changes them.
constexpr std::size_t kHostGuardFloats = 1024;
constexpr std::uint32_t kHostGuardBits = 0x7FA5A5A5u;  // a NaN no arithmetic produces

double ms_since(Clock::time_point t) { return std::chrono::duration<double, std::milli>(Clock::now() - t).count(); }

// A host array handed to the lab, with guard floats after it. Its capacity may exceed the n
// floats of the current call (an array reserved ahead serves every shape it can hold); the guard
// floats always follow the n-th.
struct Guarded {
  HostArray array;
  std::size_t capacity, n;
  HostMemory memory;
  bool reserved = false;  // made by --reserve-pinned, kept for the harness's lifetime
  Guarded(std::size_t count, HostMemory kind)
      : array(count + kHostGuardFloats, kind), capacity(count), n(count), memory(kind) {
    rearm();
  }
  // Pinned, on pages made ahead (count + kHostGuardFloats floats of them).
  Guarded(std::unique_ptr<fresh::AnonymousArray<float>> pages, std::size_t count)
      : array(std::move(pages)), capacity(count), n(count), memory(HostMemory::pinned) {
    rearm();
  }
  void rearm() {
    for (std::size_t i = 0; i < kHostGuardFloats; ++i) std::memcpy(array.data() + n + i, &kHostGuardBits, 4);
  }
  float* data() { return array.data(); }
  std::span<float> span() { return {array.data(), n}; }
  void guard(json& guards, const char* what) {
    std::size_t changed = 0, first = 0;
    for (std::size_t i = 0; i < kHostGuardFloats; ++i)
      if (std::memcmp(array.data() + n + i, &kHostGuardBits, 4) != 0 && changed++ == 0) first = i * 4;
    guards.push_back({{"what", what}, {"changed", changed * 4}, {"first", first}});
  }
};

// Host arrays outlive a timed call: allocating and first touching ~130 MB per call cost more
// than the call. Two of each size take turns, so consecutive calls get different addresses;
// their contents are fresh every call and their guards are rewritten.
// Reserved arrays (the network program's, --reserve-pinned) are made before hello, their pages
// during CUDA's start-up (at batch 10000 conv1's pinned arrays, 1.3 GB, take 0.2 s to make, which
// would otherwise land inside conv1's Layer Time), and serve any call they can hold without
// wasting half of it (a mask never takes the output's), smallest first. Made beside the mapping of
// the tensor file instead, both took longer than one after the other.
class GuardedPool {
 public:
  void reserve(std::unique_ptr<fresh::AnonymousArray<float>> pages, std::size_t n) {
    auto g = std::make_unique<Guarded>(std::move(pages), n);
    g->reserved = true;
    reserved_.push_back(std::move(g));
  }
  std::unique_ptr<Guarded> take(std::size_t n, HostMemory memory) {
    auto best = reserved_.end();
    for (auto it = reserved_.begin(); it != reserved_.end(); ++it)
      if ((*it)->memory == memory && (*it)->capacity >= n && (*it)->capacity / 2 <= n &&
          (best == reserved_.end() || (*it)->capacity < (*best)->capacity))
        best = it;
    if (best != reserved_.end()) {
      std::unique_ptr<Guarded> g = std::move(*best);
      reserved_.erase(best);
      g->n = n;
      g->rearm();
      return g;
    }
    std::size_t matching = 0;
    for (const auto& g : idle_) matching += g->n == n && g->memory == memory;
    if (matching >= 2)
      for (auto it = idle_.begin(); it != idle_.end(); ++it)
        if ((*it)->n == n && (*it)->memory == memory) {
          std::unique_ptr<Guarded> g = std::move(*it);
          idle_.erase(it);
          g->rearm();
          return g;
        }
    return std::make_unique<Guarded>(n, memory);
  }
  void give(std::unique_ptr<Guarded> g) {
    if (!g) return;
    if (g->reserved) {
      reserved_.push_back(std::move(g));
      return;
    }
    idle_.push_back(std::move(g));
    while (idle_.size() > kKept) idle_.erase(idle_.begin());  // oldest first: shapes change rarely
  }

 private:
  static constexpr std::size_t kKept = 8;  // two of each: input, mask, output, and one spare shape
  std::vector<std::unique_ptr<Guarded>> idle_, reserved_;
};
GuardedPool g_pool;

void fill(std::span<float> out, const json& spec, const Tensors& t) {
  if (spec.contains("offset")) {
    fresh::parallel_copy(out, std::span<const float>(t.floats(spec.at("offset").get<std::uint64_t>(), out.size())));
    return;
  }
  const auto seed = spec.at("seed").get<std::uint64_t>();
  const float lo = spec.at("lo").get<float>(), hi = spec.at("hi").get<float>();
  fresh::for_chunks(out.size(), [&](std::size_t first, std::size_t last, std::size_t) {
    for (std::size_t i = first; i < last; ++i) out[i] = fresh::fresh_value(seed, i, lo, hi);
  });
}

void poison(std::span<float> out) {
  fresh::for_chunks(out.size(), [&](std::size_t first, std::size_t last, std::size_t) {
    std::memset(out.data() + first, 0xFF, (last - first) * sizeof(float));
  });
}

// The lab's device buffers, as far as they reach (device_ops.h: a null, smaller or freed buffer
// leaves 0xFF bytes): what the judge compares to explain a wrong output, never a verdict alone.
void copy_device(std::span<float> dst, const float* device) { copy_device_clamped(dst.data(), dst.size(), device); }

// What an Op Time lab's prolog must leave (a Layer Time lab's pointers are its own business: its
// layer is judged host to host). The output pointer is where conv_forward_gpu writes, the input
// pointer where every timed call's fresh input is written in the standard layout; the mask may be
// anywhere the lab likes (a __constant__ array: *device_mask null or never filled).
void require_op_buffers(const float* d_out, const float* d_in) {
  if (!d_out)
    throw std::invalid_argument("conv_forward_gpu_prolog left *device_output null: an Op Time lab's "
                                "conv_forward_gpu writes its output into that device buffer");
  if (!d_in)
    throw std::invalid_argument("conv_forward_gpu_prolog left *device_input null: an Op Time lab reads its input "
                                "from that device buffer ([B][C][H][W] float32), where the kit writes each timed "
                                "call's fresh input");
}

// A device allocation of a size that changes from call to call, held across the lab's prolog,
// so its buffers do not land at the same addresses every time.
struct Spacer {
  void* p = nullptr;
  explicit Spacer(int k) {
    if (k > 0) LABKIT_CUDA_CHECK(cudaMalloc(&p, std::size_t(k) * (4u << 20)));
  }
  ~Spacer() {
    if (p) cudaFree(p);
  }
};

// Each record is [kind, start_ns, end_ns, stream, bytes, pageable, name]: name indexes "names"
// (kernel names as CUPTI gives them, copy directions, "memset"), -1 past kMaxNames distinct names.
// A reply frame holds at most wire::kMaxPayload bytes: records past kRecordBytes of them are not
// sent and count as dropped, so a lab with many launches still gets its evidence line.
json activity_json(const activity::Summary& s) {
  constexpr std::size_t kMaxRecords = 1000, kMaxNames = 64, kMaxNameBytes = 160, kRecordBytes = 44 * 1024;
  json iv = json::array(), names = json::array();
  std::vector<std::string> seen;
  std::size_t bytes = 0, sent = 0;
  for (; sent < s.intervals.size() && sent < kMaxRecords; ++sent) {
    const activity::Interval& x = s.intervals[sent];
    // UTF-8 that JSON can carry (a name CUPTI was made to report may hold any bytes), cut.
    const std::string name = utf8_prefix(xml_chars(x.name), kMaxNameBytes);
    auto at = std::find(seen.begin(), seen.end(), name);
    int index = -1;
    if (at != seen.end()) {
      index = int(at - seen.begin());
    } else if (seen.size() < kMaxNames) {
      index = int(seen.size());
      seen.push_back(name);
      bytes += json(name).dump().size() + 1;  // as sent, escapes included
    }
    json record = {int(x.kind), x.start_ns, x.end_ns, x.stream, x.bytes, x.pageable, index};
    bytes += record.dump().size() + 1;
    if (bytes > kRecordBytes) break;
    iv.push_back(std::move(record));
  }
  for (std::string& n : seen) names.push_back(std::move(n));
  return {{"available", s.available}, {"why", utf8_prefix(s.why, 1000)}, {"intervals", iv}, {"names", names},
          {"peak_allocated_bytes", s.peak_allocated_bytes}, {"net_allocated_bytes", s.net_allocated_bytes},
          {"allocations", s.allocations}, {"dropped", s.dropped + (s.intervals.size() - sent)}};
}

// The state between prepare, run and finish (one timed call at a time).
struct Pending {
  ConvShape shape{};
  std::unique_ptr<Guarded> in, mask, out;
  std::unique_ptr<Spacer> spacer;
  float *d_out = nullptr, *d_in = nullptr, *d_mask = nullptr;
  bool prolog_done = false;
  bool layer_done = false;  // the layer op ran prolog, forward and epilog: finish only copies out
};
Pending g_pending;

// Ends the pending call: its host arrays go back to the pool.
void reset_pending() {
  g_pool.give(std::move(g_pending.in));
  g_pool.give(std::move(g_pending.mask));
  g_pool.give(std::move(g_pending.out));
  g_pending = Pending{};
}

json check(const ConvOps& ops, const json& rq, const Tensors& t) {
  const ConvShape s = shape_of(rq);
  const HostMemory memory = rq.value("memory", "pageable") == "pinned" ? HostMemory::pinned : HostMemory::pageable;
  Guarded in(s.input_size(), memory), msk(s.mask_size(), memory), out(s.output_size(), memory);
  fill(in.span(), {{"offset", rq.at("in")}}, t);
  fill(msk.span(), {{"offset", rq.at("mask")}}, t);
  poison(out.span());
  Spacer spacer(rq.value("spacer", 0));
  std::optional<activity::Recorder> recorder;
  if (rq.value("record", false)) recorder.emplace();

  // "layer": a Layer Time lab, judged host to host as it is timed: its prolog may already have
  // produced the output (streams in the prolog), so its device output is not poisoned here.
  const bool layer = rq.value("layer", false);
  float *d_out = nullptr, *d_in = nullptr, *d_mask = nullptr;
  set_phase("conv_forward_gpu_prolog");
  ops.prolog(out.data(), in.data(), msk.data(), &d_out, &d_in, &d_mask, s);
  set_phase("the kit's poisoning of the output (after prolog)");
  if (!layer) {
    require_op_buffers(d_out, d_in);
    poison_device_output(d_out, s.output_size());
  }
  LABKIT_CUDA_CHECK(cudaDeviceSynchronize());
  set_phase("the kit's copy of the device input and mask (after prolog)");
  copy_device(t.floats(rq, "dev_in1", s.input_size()), d_in);
  copy_device(t.floats(rq, "dev_mask1", s.mask_size()), d_mask);
  set_phase("conv_forward_gpu");
  ops.forward(d_out, d_in, d_mask, s);
  LABKIT_CUDA_CHECK(cudaDeviceSynchronize());
  set_phase("the kit's copy of the device input and mask (after conv_forward_gpu)");
  copy_device(t.floats(rq, "dev_in2", s.input_size()), d_in);
  copy_device(t.floats(rq, "dev_mask2", s.mask_size()), d_mask);
  json guards = json::array();
  append_device_guard(guards, "device output", d_out);
  append_device_guard(guards, "device input", d_in);
  append_device_guard(guards, "device mask", d_mask);
  set_phase("conv_forward_gpu_epilog");
  ops.epilog(out.data(), d_out, d_in, d_mask, s);
  // Copied the moment epilog returns: an epilog that leaves its copy running shows unwritten elements.
  fresh::parallel_copy(t.floats(rq, "out", s.output_size()), std::span<const float>(out.span()));
  LABKIT_CUDA_CHECK(cudaDeviceSynchronize());
  set_phase("the kit's copy of the host arrays (after epilog)");
  std::memcpy(t.floats(rq, "host_in", s.input_size()).data(), in.data(), s.input_size() * sizeof(float));
  std::memcpy(t.floats(rq, "host_mask", s.mask_size()).data(), msk.data(), s.mask_size() * sizeof(float));
  in.guard(guards, "host input");
  msk.guard(guards, "host mask");
  out.guard(guards, "host output");
  json reply{{"guards", guards}};
  if (recorder) reply["activity"] = activity_json(recorder->stop());
  return reply;
}

json prepare(const ConvOps& ops, const json& rq, const Tensors& t) {
  reset_pending();
  Pending& p = g_pending;
  p.shape = shape_of(rq);
  const ConvShape& s = p.shape;
  const HostMemory memory = rq.value("memory", "pageable") == "pinned" ? HostMemory::pinned : HostMemory::pageable;
  p.in = g_pool.take(s.input_size(), memory);
  p.mask = g_pool.take(s.mask_size(), memory);
  p.out = g_pool.take(s.output_size(), memory);
  fill(p.in->span(), rq.at("input"), t);
  fill(p.mask->span(), rq.at("mask"), t);
  poison(p.out->span());
  p.spacer = std::make_unique<Spacer>(rq.value("spacer", 0));
  if (rq.value("layer", false)) return json::object();  // the layer op runs the prolog under the clock
  set_phase("conv_forward_gpu_prolog");
  ops.prolog(p.out->data(), p.in->data(), p.mask->data(), &p.d_out, &p.d_in, &p.d_mask, s);
  require_op_buffers(p.d_out, p.d_in);
  set_phase("the kit's poisoning of the output (after prolog)");
  poison_device_output(p.d_out, s.output_size());
  LABKIT_CUDA_CHECK(cudaDeviceSynchronize());
  p.prolog_done = true;
  return json::object();
}

json run(const ConvOps& ops, const json& rq) {
  Pending& p = g_pending;
  if (!p.prolog_done) throw KitError("run before prepare");
  static EventPair ev;  // created once, outside every timed request
  if (rq.contains("refill")) {
    // The input conv_forward_gpu gets is not the one the prolog saw: fresh values from a seed sent
    // only now, written into the lab's device input inside this request, so an output computed in
    // the untimed prolog (or between requests) is wrong. Poisoning the output again (1 GB at batch
    // 10000's conv1, 74 MB at batch 1000's conv2: more than the L2) also pushes the new input out of
    // the L2, so the op reads it from device memory.
    // refill() synchronizes the legacy stream, not the device: the refill has landed before forward
    // starts (on whatever stream the lab uses), and a lab's own work left running elsewhere is not
    // waited for here (it is the run's: the device synchronize after forward waits for it).
    const json& f = rq.at("refill");
    set_phase("the kit's fresh input (before conv_forward_gpu)");
    refill(p.d_in, p.shape.input_size(), f.at("seed").get<std::uint64_t>(), f.at("lo").get<float>(),
           f.at("hi").get<float>(), p.d_out, p.shape.output_size());
  }
  set_phase("conv_forward_gpu");
  window_open();
  const auto t0 = Clock::now();
  LABKIT_CUDA_CHECK(cudaEventRecord(ev.start));
  ops.forward(p.d_out, p.d_in, p.d_mask, p.shape);
  LABKIT_CUDA_CHECK(cudaEventRecord(ev.stop));
  // The whole device: work left on other streams is part of the call.
  LABKIT_CUDA_CHECK(cudaDeviceSynchronize());
  const double host_ms = ms_since(t0);
  window_close();
  set_phase("the kit's digest of the output (after conv_forward_gpu)");
  const std::uint64_t digest = device_digest(p.d_out, p.shape.output_size());
  return {{"event_ms", ev.elapsed_ms()}, {"host_ms", host_ms}, {"digest", digest}};
}

json finish(const ConvOps& ops, const json& rq, const Tensors& t) {
  Pending& p = g_pending;
  if (p.layer_done) {
    // "discard": the kit's own harness timing the baseline; the judge does not read it.
    if (!rq.value("discard", false))
      fresh::parallel_copy(t.floats(rq, "out", p.shape.output_size()), std::span<const float>(p.out->span()));
    json guards = json::array();
    p.out->guard(guards, "host output");
    reset_pending();
    return {{"guards", guards}};
  }
  if (!p.prolog_done) throw KitError("finish before prepare");
  json guards = json::array();
  append_device_guard(guards, "device output", p.d_out);
  append_device_guard(guards, "device input", p.d_in);
  append_device_guard(guards, "device mask", p.d_mask);
  set_phase("conv_forward_gpu_epilog");
  ops.epilog(p.out->data(), p.d_out, p.d_in, p.d_mask, p.shape);
  // Copied the moment epilog returns, as check does ("discard": the kit's own harness timing the
  // baseline; the judge does not read it).
  if (!rq.value("discard", false))
    fresh::parallel_copy(t.floats(rq, "out", p.shape.output_size()), std::span<const float>(p.out->span()));
  LABKIT_CUDA_CHECK(cudaDeviceSynchronize());
  p.out->guard(guards, "host output");
  reset_pending();
  return {{"guards", guards}};
}

json layer(const ConvOps& ops, const json& rq, const Tensors& t) {
  Pending& p = g_pending;
  if (!p.in) throw KitError("layer before prepare");
  std::optional<activity::Recorder> recorder;
  if (rq.value("record", false)) recorder.emplace();
  float *d_out = nullptr, *d_in = nullptr, *d_mask = nullptr;
  window_open();
  // The layer's start and end on the records' clock: the timeline's origin and extent.
  const std::uint64_t layer_start_ns = recorder ? activity::timestamp_ns() : 0;
  const auto t0 = Clock::now();
  set_phase("conv_forward_gpu_prolog");
  ops.prolog(p.out->data(), p.in->data(), p.mask->data(), &d_out, &d_in, &d_mask, p.shape);
  set_phase("conv_forward_gpu");
  ops.forward(d_out, d_in, d_mask, p.shape);
  set_phase("conv_forward_gpu_epilog");
  ops.epilog(p.out->data(), d_out, d_in, d_mask, p.shape);
  LABKIT_CUDA_CHECK(cudaDeviceSynchronize());
  const double host_ms = ms_since(t0);
  const std::uint64_t layer_end_ns = recorder ? activity::timestamp_ns() : 0;
  window_close();
  // Inside the judge's clock: the digest seals the output the layer left when it returned.
  set_phase("the kit's digest of the output (after the layer)");
  const std::uint64_t digest = fresh::host_digest(p.out->span());  // several threads: it runs inside the clock
  json reply{{"host_ms", host_ms}, {"digest", digest}};
  if (recorder) {
    reply["activity"] = activity_json(recorder->stop());
    reply["activity"]["layer_ns"] = {layer_start_ns, layer_end_ns};
  }
  p.layer_done = true;
  (void)t;
  return reply;
}

}  // namespace

std::function<void()> conv_reserve_early(const std::vector<std::size_t>& floats) {
  if (floats.empty()) return [] {};
  using Pages = std::vector<std::unique_ptr<fresh::AnonymousArray<float>>>;
  auto pages = std::make_shared<std::future<Pages>>(std::async(std::launch::async, [floats] {
    Pages made;
    for (std::size_t n : floats) {
      made.push_back(std::make_unique<fresh::AnonymousArray<float>>(n + kHostGuardFloats));
      fresh::populate(made.back()->data(), made.back()->bytes());
    }
    return made;
  }));
  return [pages, floats] {
    Pages made = pages->get();
    for (std::size_t i = 0; i < made.size(); ++i) g_pool.reserve(std::move(made[i]), floats[i]);
  };
}

json conv_op(const ConvOps& ops, const std::string& op, const json& rq, const Tensors& t) {
  if (op == "check") return check(ops, rq, t);
  if (op == "prepare") return prepare(ops, rq, t);
  if (op == "run") return run(ops, rq);
  if (op == "finish") return finish(ops, rq, t);
  if (op == "layer") return layer(ops, rq, t);
  throw KitError("unknown conv op \"" + op + "\"");
}

}  // namespace labkit::harness
