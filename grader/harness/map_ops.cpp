// What a map lab's harness does for each op (harness.h). The data buffer is the kit's own,
// updated in place by the lab, with guard bytes after it.
#include <chrono>
#include <memory>
#include <string>

#include "device_ops.h"
#include "labkit/cuda_check.h"
#include "grader/core/event_timer.h"
#include "labkit/guard_regions.h"
#include "labkit/map.h"
#include "grader/core/phase.h"
#include "server.h"

namespace labkit::harness {
namespace {

using nlohmann::json;
using Clock = std::chrono::steady_clock;

struct Dims {
  int dimx = 0, dimy = 0, niterations = 0;
  std::size_t size() const { return std::size_t(dimx) * std::size_t(dimy); }
};

Dims dims_of(const json& rq) {
  const auto& a = rq.at("dims");
  const Dims d{a.at(0).get<int>(), a.at(1).get<int>(), a.at(2).get<int>()};
  if (d.dimx < 1 || d.dimy < 1 || d.niterations < 0) throw KitError("invalid map dims");
  return d;
}

// The kit's device array for the lab, guarded like standard_prolog's buffers.
struct Data {
  float* p = nullptr;
  std::size_t n = 0;
  explicit Data(std::size_t count) : n(count) {
    LABKIT_CUDA_CHECK(cudaMalloc(reinterpret_cast<void**>(&p), n * sizeof(float) + guards::kGuardBytes));
    LABKIT_CUDA_CHECK(cudaMemset(reinterpret_cast<char*>(p) + n * sizeof(float), guards::kGuardByte, guards::kGuardBytes));
    guards::add(p, n * sizeof(float));
  }
  ~Data() {
    guards::remove(p);
    cudaFree(p);
  }
  Data(const Data&) = delete;
  Data& operator=(const Data&) = delete;
};

struct Pending {
  Dims dims;
  std::unique_ptr<Data> data;
};
Pending g_pending;

void forward(const MapOps& ops, Data& d, const Dims& dims) {
  set_phase("map_forward_gpu");
  ops.forward(d.p, dims.dimx, dims.dimy, dims.niterations);
}

json check(const MapOps& ops, const json& rq, const Tensors& t) {
  const Dims dims = dims_of(rq);
  Data d(dims.size());
  const std::span<float> in = t.floats(rq, "in", dims.size());
  LABKIT_CUDA_CHECK(cudaMemcpy(d.p, in.data(), in.size_bytes(), cudaMemcpyHostToDevice));
  forward(ops, d, dims);
  LABKIT_CUDA_CHECK(cudaDeviceSynchronize());
  set_phase("the kit's copy of the data (after map_forward_gpu)");
  const std::span<float> out = t.floats(rq, "out", dims.size());
  LABKIT_CUDA_CHECK(cudaMemcpy(out.data(), d.p, out.size_bytes(), cudaMemcpyDeviceToHost));
  json guards = json::array();
  append_device_guard(guards, "device data", d.p);
  return {{"guards", guards}};
}

json prepare(const json& rq) {
  g_pending = Pending{};
  g_pending.dims = dims_of(rq);
  g_pending.data = std::make_unique<Data>(g_pending.dims.size());
  set_phase("the kit's fresh data");
  device_fill(g_pending.data->p, g_pending.data->n, rq.at("seed").get<std::uint64_t>(), kMapInputMin, kMapInputMax);
  return json::object();
}

json run(const MapOps& ops) {
  if (!g_pending.data) throw KitError("run before prepare");
  static EventPair ev;
  window_open();
  const auto t0 = Clock::now();
  LABKIT_CUDA_CHECK(cudaEventRecord(ev.start));
  forward(ops, *g_pending.data, g_pending.dims);
  LABKIT_CUDA_CHECK(cudaEventRecord(ev.stop));
  LABKIT_CUDA_CHECK(cudaDeviceSynchronize());
  const double host_ms = std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
  window_close();
  set_phase("the kit's digest of the data (after map_forward_gpu)");
  const std::uint64_t digest = device_digest(g_pending.data->p, g_pending.data->n);
  return {{"event_ms", ev.elapsed_ms()}, {"host_ms", host_ms}, {"digest", digest}};
}

json finish(const json& rq, const Tensors& t) {
  if (!g_pending.data) throw KitError("finish before prepare");
  const std::span<float> out = t.floats(rq, "out", g_pending.data->n);
  LABKIT_CUDA_CHECK(cudaMemcpy(out.data(), g_pending.data->p, out.size_bytes(), cudaMemcpyDeviceToHost));
  json guards = json::array();
  append_device_guard(guards, "device data", g_pending.data->p);
  g_pending = Pending{};
  return {{"guards", guards}};
}

}  // namespace

json map_op(const MapOps& ops, const std::string& op, const json& rq, const Tensors& t) {
  if (op == "check") return check(ops, rq, t);
  if (op == "prepare") return prepare(rq);
  if (op == "run") return run(ops);
  if (op == "finish") return finish(rq, t);
  throw KitError("unknown map op \"" + op + "\"");
}

}  // namespace labkit::harness
